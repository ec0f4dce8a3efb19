#!/bin/sh
# tools/bench/bench_campaign.sh ACHILLES FIRMWARE_DIR SOURCE_DIR [ROUNDS]: campaign throughput on
# this machine (not a test of correctness: tests/tools/test_campaign.sh is). The 200-run campaign of
# configs/campaigns/hold_noise_faults.json, ROUNDS times (default 3) each:
#   - local with 1 worker and with 2 workers: runs per minute, and the ratio 2 workers / 1;
#   - the Slurm backend on a one-node cluster of this machine (tests/tools/slurm_cluster.sh),
#     when Slurm can start: its wall time against the 2-worker local one, as overhead per run.
# Prints one line per round and the ranges; the CPU model first (lscpu).
set -u
achilles=$1 fwdir=$2 src=$3 rounds=${4:-3}
spec=$src/configs/campaigns/hold_noise_faults.json
PATH=$fwdir:$PATH
export PATH
work=$(mktemp -d /tmp/achilles-bench-campaign-XXXXXX)
cluster=
cleanup() {
  [ -n "$cluster" ] && "$src/tests/tools/slurm_cluster.sh" stop "$cluster"
  rm -rf "$work" $cluster
}
trap cleanup EXIT

seconds() { # seconds to run the campaign with the given options
  rm -rf "$work/out"
  t0=$(date +%s.%N)
  "$achilles" campaign "$spec" --out "$work/out" "$@" > "$work/log" 2>&1
  s=$?
  t1=$(date +%s.%N)
  [ $s -le 1 ] || { echo "campaign failed ($s): $(tail -3 "$work/log")" >&2; exit 1; }
  awk "BEGIN {print $t1 - $t0}"
}

echo "CPU: $(lscpu | sed -n 's/^Model name: *//p') ($(nproc) CPUs); load $(cut -d' ' -f1-3 /proc/loadavg)"
slurm=0
cluster=$(mktemp -d /tmp/achilles-bench-slurm-XXXXXX)
if "$src/tests/tools/slurm_cluster.sh" start "$cluster" $$ 2>"$work/slurm.err"; then
  slurm=1
  . "$cluster/env"
else
  echo "Slurm: not started here ($(tail -1 "$work/slurm.err")): its overhead is not measured"
fi
ratios="" overheads=""
for r in $(seq "$rounds"); do
  one=$(seconds --workers 1)
  two=$(seconds --workers 2)
  line=$(echo "$one $two" | awk '{printf "1 worker %.0f runs/min, 2 workers %.0f runs/min, ratio %.2f", 12000/$1, 12000/$2, $1/$2}')
  ratios="$ratios $(echo "$one $two" | awk '{printf "%.2f", $1/$2}')"
  if [ $slurm -eq 1 ]; then
    sl=$(seconds --backend slurm --chunk 25)
    line="$line; Slurm (8 tasks of 25) $(echo "$sl $two" | awk '{printf "%.0f runs/min, %.0f ms more per run than 2 local workers", 12000/$1, 1000*($1-$2)/200}')"
    overheads="$overheads $(echo "$sl $two" | awk '{printf "%.0f", 1000*($1-$2)/200}')"
  fi
  echo "round $r: $line"
done
echo "ratio 2 workers / 1 worker: $(echo $ratios | tr ' ' '\n' | sort -n | sed -n '1p;$p' | tr '\n' ' ' | awk '{print $1 "-" $2}')"
[ $slurm -eq 1 ] && echo "Slurm overhead per run (ms): $(echo $overheads | tr ' ' '\n' | sort -n | sed -n '1p;$p' | tr '\n' ' ' | awk '{print $1 "-" $2}')"
exit 0
