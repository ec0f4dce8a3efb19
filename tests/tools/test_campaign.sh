#!/bin/sh
# tests/tools/test_campaign.sh local|slurm ACHILLES FIRMWARE_DIR SOURCE_DIR WORK
#
# The 200-run campaign of configs/campaigns/hold_noise_faults.json (the example firmware over
# 25 seeds x 4 encoder noise levels x 2 faults, 0.25 s of lockstep each).
#   local: with 1 worker into WORK/one; with 2 workers into WORK/two, interrupted (SIGINT) after
#          about 60 runs and finished with --resume; every run's result.json and results.csv
#          must be the same bytes in both; the campaign's JUnit XML validates against
#          tests/tools/junit.xsd.
#   slurm: a one-node cluster (tests/tools/slurm_cluster.sh) runs the same campaign with
#          --backend slurm into WORK/slurm, one array task cancelled while pending so that the
#          backend resubmits it; every result must equal WORK/two's (the local test's, run
#          first: a CTest fixture). Exit 77 (skipped) where Slurm cannot start; under CI=true,
#          where tools/scripts/bootstrap.sh installed it, that is a failure.
set -u
mode=$1 achilles=$2 fwdir=$3 src=$4 work=$5
spec=$src/configs/campaigns/hold_noise_faults.json
PATH=$fwdir:$PATH
export PATH

fail() { echo "FAIL: $*"; exit 1; }
count() { ls "$1"/runs/*/result.json 2>/dev/null | wc -l; }

# every run's result.json of $1 and $2 the same bytes
same_results() {
  n=0
  for f in "$1"/runs/*/result.json; do
    id=$(basename "$(dirname "$f")")
    cmp -s "$f" "$2/runs/$id/result.json" || fail "$id: $1 and $2 differ: $(diff "$f" "$2/runs/$id/result.json" | head -5)"
    n=$((n + 1))
  done
  [ "$n" -eq 200 ] || fail "$1 has $n results, expected 200"
  cmp -s "$1/results.csv" "$2/results.csv" || fail "results.csv differ between $1 and $2"
  echo "200 results of $1 and $2: the same bytes"
}

status_ok() { [ "$1" -eq 0 ] || [ "$1" -eq 1 ] || fail "$2 exited with $1"; }

if [ "$mode" = local ]; then
  rm -rf "$work"
  mkdir -p "$work"
  t0=$(date +%s.%N)
  "$achilles" campaign "$spec" --out "$work/one" --workers 1 --junit "$work/one.xml" > "$work/one.log" 2>&1
  status_ok $? "the 1-worker campaign"
  t1=$(date +%s.%N)
  "$achilles" campaign "$spec" --out "$work/two" --workers 2 > "$work/two-a.log" 2>&1 &
  pid=$!
  i=0
  while [ "$(count "$work/two")" -lt 60 ] && kill -0 $pid 2>/dev/null && [ $i -lt 1200 ]; do
    sleep 0.05; i=$((i + 1))
  done
  kill -INT $pid
  wait $pid
  s=$?
  [ $s -eq 130 ] || fail "the interrupted campaign exited with $s, not 130: $(tail -3 "$work/two-a.log")"
  grep -q "interrupted: run again with --resume" "$work/two-a.log" || fail "no resume hint"
  left=$(ps -eo pid,args | grep -c "[a]chilles test $work/two")
  [ "$left" -eq 0 ] || fail "$left runs still running after the interrupt"
  "$achilles" campaign "$spec" --out "$work/two" --workers 2 --resume > "$work/two-b.log" 2>&1
  status_ok $? "the resumed campaign"
  t2=$(date +%s.%N)
  torun=$(sed -n 's/.*200 runs, \([0-9]*\) to run.*/\1/p' "$work/two-b.log")
  [ -n "$torun" ] && [ "$torun" -lt 200 ] && [ "$torun" -gt 0 ] ||
    fail "the resumed campaign ran '$torun' runs (expected fewer than 200, those left)"
  echo "interrupted at $((200 - torun)) runs done; --resume ran the other $torun"
  same_results "$work/one" "$work/two"
  grep -q "## The 10 worst runs" "$work/two/summary.md" || fail "summary.md names no worst runs"
  grep -q '`achilles test .*scenario.json' "$work/two/summary.md" || fail "no reproducing command"
  if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout --schema "$src/tests/tools/junit.xsd" "$work/one.xml" || fail "JUnit XML invalid"
  elif [ "${CI:-}" = true ]; then
    fail "xmllint missing under CI=true"
  fi
  echo "wall time: 1 worker $(awk "BEGIN {print $t1 - $t0}") s, 2 workers (interrupted and resumed) $(awk "BEGIN {print $t2 - $t1}") s"
  exit 0
fi

[ "$mode" = slurm ] || { echo "usage: $0 local|slurm ..."; exit 2; }
[ -f "$work/two/results.csv" ] || fail "no local campaign in $work/two (test_campaign_local runs first)"
cluster=$(mktemp -d /tmp/achilles-slurm-XXXXXX)
"$src/tests/tools/slurm_cluster.sh" start "$cluster" $$
s=$?
if [ $s -ne 0 ]; then
  "$src/tests/tools/slurm_cluster.sh" stop "$cluster"
  rm -rf "$cluster"
  if [ "${CI:-}" = true ]; then
    fail "Slurm did not start under CI=true (status $s)"
  fi
  echo "SKIP: Slurm cannot start here (status $s); the Slurm backend is not tested"
  exit 77
fi
trap '"$src/tests/tools/slurm_cluster.sh" stop "$cluster"; rm -rf "$cluster"' EXIT
. "$cluster/env"
rm -rf "$work/slurm"
t0=$(date +%s.%N)
"$achilles" campaign "$spec" --out "$work/slurm" --backend slurm --chunk 25 > "$work/slurm.log" 2>&1 &
pid=$!
i=0 # the first job's last task, cancelled while it waits: the backend must submit it again
while [ ! -s "$work/slurm/slurm/jobs.txt" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
job=$(cut -d' ' -f1 "$work/slurm/slurm/jobs.txt" | head -1)
[ -n "$job" ] || fail "no job id in $work/slurm/slurm/jobs.txt: $(cat "$work/slurm.log")"
scancel "${job}_7"
wait $pid
s=$?
t1=$(date +%s.%N)
status_ok $s "the Slurm campaign ($(tail -3 "$work/slurm.log"))"
grep -q "tasks 7 failed; submitting them once more" "$work/slurm.log" ||
  fail "task 7 was not submitted again: $(cat "$work/slurm.log")"
[ "$(wc -l < "$work/slurm/slurm/jobs.txt")" -eq 2 ] || fail "expected two submissions"
same_results "$work/two" "$work/slurm"
echo "Slurm: 200 runs in 8 tasks (one cancelled, resubmitted) in $(awk "BEGIN {print $t1 - $t0}") s"
exit 0
