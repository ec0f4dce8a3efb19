#!/usr/bin/env bash
# tests/fuzz/run.sh: builds the libFuzzer harnesses (clang, ASan + UBSan) and runs each target.
#
#   tests/fuzz/run.sh [SECONDS] [TARGET...]   SECONDS per target (default 30); all nine by default
#   (side by side, one a core: ACHILLES_FUZZ_JOBS=1 runs them one after the other)
#
# Targets: serial_rx config zmq_messages log_reader replay client_decoder (tests/hil/client/
# fuzz_decoder.c) stl (the mesh reader, seeded with the KR5's STL files from dart-doc) obj (the
# OBJ reader and mesh masses, seeded with a small prism), mjcf_composite (the expansion of MJCF
# <composite> and the converter after it, seeded with MuJoCo's composite samples). Seed corpora come
# from the shipped configs, a short recording and CSV of the club arm, and valid frames and
# messages (make_seeds.c); new inputs the fuzzer finds are kept in build-fuzz/corpus-found/.
# A crash, leak, undefined behaviour or timeout stops the run with the input saved in
# build-fuzz/artifacts/ (reproduce: build-fuzz/tests/fuzz/fuzz_TARGET FILE) and exit status 1.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${ACHILLES_FUZZ_BUILD:-$here/build-fuzz}
seconds=${1:-30}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(serial_rx config zmq_messages log_reader replay client_decoder stl obj
  mjcf_composite)

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

log "building the fuzz targets in $build"
CC=clang CXX=clang++ cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACHILLES_FUZZ=ON >/dev/null
cmake --build "$build" -j "$(nproc 2>/dev/null || echo 2)" --target fuzz >/dev/null

seeds=$build/corpus-seeds
rm -rf "$seeds"
mkdir -p "$seeds/config" "$seeds/log_reader" "$seeds/replay" "$seeds/stl" "$seeds/obj" \
  "$seeds/mjcf_composite" "$build/artifacts"
cp /usr/share/mujoco/model/composite/*.xml /usr/share/mujoco/model/flag/flag.xml \
  /usr/share/mujoco/model/hammock/hammock.xml "$seeds/mjcf_composite/" 2>/dev/null || true
cp /usr/share/doc/dart/data/urdf/KR5/meshes/wrist.STL "$seeds/stl/" 2>/dev/null || true
printf 'v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nv 1 1 1\nf 1 3 2\nf 1 2 4\nf 2 3 4\nf -5 -2 -3\nf 2 5 3 4\n' >"$seeds/obj/prism.obj"
printf 'solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nfacet normal 0 0 1\nouter loop\nvertex 0 0 1\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid t\n' >"$seeds/stl/tetra.stl"
"$build/tests/fuzz/fuzz_make_seeds" "$seeds"
cp "$here"/configs/*.json "$here"/tests/hil/serial/*.json "$seeds/config/" 2>/dev/null || true
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
achilles=$build/tools/achilles
"$achilles" run "$here/configs/club_arm.json" --mode fast --duration 0.003 --no-zmq --quiet \
  --status-period 0 --record "$seeds/log_reader/club_arm.ndjson" 2>/dev/null
cp "$seeds/log_reader/club_arm.ndjson" "$seeds/replay/"
"$achilles" sensors "$here/configs/club_arm.json" --duration 0.02 \
  --csv "$seeds/replay/club_arm.csv" 2>/dev/null
printf 'time,enc.angle,enc.angle.true\n0,0.1,0.1\n0.001,0.2,\n0.002,,0.3\n' >"$seeds/replay/small.csv"

dict_of() {
  case $1 in
    config) echo "$here/tests/fuzz/config.dict" ;;
    zmq_messages) echo "$here/tests/fuzz/zmq_messages.dict" ;;
    log_reader | replay) echo "$here/tests/fuzz/log.dict" ;;
    *) echo "" ;;
  esac
}

# the targets run side by side, as many at once as the machine has cores (ACHILLES_FUZZ_JOBS):
# each gets a core for its SECONDS, and the stage takes SECONDS per round, not per target
jobs=${ACHILLES_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
fuzz_one() {
  local t=$1 found=$build/corpus-found/$1 dict
  mkdir -p "$found"
  dict=$(dict_of "$t")
  # the config target runs in configs/, where the shipped robot files find their sensors files
  cd "$here/configs" && "$build/tests/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$t-" ${dict:+-dict="$dict"} "$found" "$seeds/$t" \
    >"$build/artifacts/$t.log" 2>&1
}
declare -A pid_of
log "fuzzing ${targets[*]} for ${seconds} s each, $jobs at a time"
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
    wait -n || true
  done
  (fuzz_one "$t") &
  pid_of[$t]=$!
done
status=0
for t in "${targets[@]}"; do
  if ! wait "${pid_of[$t]}"; then
    tail -n 40 "$build/artifacts/$t.log" >&2
    log "fuzz_$t FAILED (input in $build/artifacts/, log $build/artifacts/$t.log)"
    status=1
  else
    printf '%-16s ' "$t" >&2
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$build/artifacts/$t.log" |
      tr '\n' ' ' >&2
    echo >&2
  fi
done
exit $status
