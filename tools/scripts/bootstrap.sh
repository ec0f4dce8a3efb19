#!/usr/bin/env bash
# tools/scripts/bootstrap.sh: set up a fresh Debian 12 machine, build, and run or test Achilles.
#
#   tools/scripts/bootstrap.sh run    install what is missing, build, run the main job: the club
#                                     arm with the live view on and the example firmware over a
#                                     pty (Ctrl-C stops)
#   tools/scripts/bootstrap.sh test   install what is missing, build (plain with gcc, ASan+UBSan
#                                     with clang), run the tests (all but `timing` in the plain
#                                     build, the unit suites in the sanitizer build), run each
#                                     fuzz target for a short while, and say how long each stage
#                                     took
#   tools/scripts/bootstrap.sh deps   only install what is missing
#   tools/scripts/bootstrap.sh demo   only the main job of `run`, from an existing build
#                                     (ACHILLES_BUILD, default build/)
#
# Idempotent: packages already installed are left alone; builds are incremental.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)

# Everything Achilles builds or tests with, from Debian's archive.
packages=(
  gcc make cmake pkg-config
  libcjson-dev libcmocka-dev libzmq3-dev libserialport-dev
  libxml2-dev            # MJCF and URDF import (sim/import)
  libccd-dev libqhull-dev # convex collision (MPR) and mesh hulls (sim/collision_convex.c, sim/mesh.c)
  libmujoco-dev          # test-only reference oracle and benchmark baseline
  dart-doc libmujoco-samples # public robot descriptions for import tests: DART's WAM, KR5 and Atlas URDFs, MuJoCo's humanoid
  python3 python3-zmq    # the example subscriber (tools/scripts/zmq_subscriber.py) and its test
  gnuplot-nox            # noise-fit and campaign plots
  slurm-wlm munge        # a one-node Slurm cluster for the campaign backend's test (tests/tools/slurm_cluster.sh)
  libxml2-utils          # xmllint: JUnit XML checked against tests/tools/junit.xsd
  rt-tests               # cyclictest, the reference of tools/bench/bench_loop.py
  g++ libdragonbox-dev     # number text (hil/number_format.cc, the one C++ unit)
  libdouble-conversion-dev # benchmark baseline only (tools/bench_messages)
  libgsl-dev             # system identification: bounded least squares (sysid/, gsl_multifit_nlinear)
  libnlopt-dev           # benchmark baseline only: derivative-free fits beside sysid (tools/bench_sysid)
  libadolc-dev           # benchmark baseline only: taping autodiff beside sim/deriv (tools/bench_deriv)
  clang libclang-rt-dev  # the sanitizer suite with a second compiler, and libFuzzer (tests/fuzz)
  libwebsockets-dev      # the live view's web server (hil/view, docs/view.md)
  libjs-three libjs-chart.js # the view's page: three.js and Chart.js, served from their install paths
  chromium nodejs        # the view's tests: headless Chromium, driven from Node.js (tests/hil/view)
)
# npm installs the view tests' packages into the build tree; a Node.js from elsewhere (NodeSource)
# brings its own npm, which Debian's npm package would conflict with
command -v npm >/dev/null 2>&1 || packages+=(npm)

fuzz_seconds=${ACHILLES_FUZZ_SECONDS:-15} # per fuzz target in `test` (nine targets, two at a time)

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

install_missing() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "dependencies: all ${#packages[@]} packages present"
    return
  fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  log "installing: ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build() { # build DIR [cmake options...]
  local dir=$1; shift
  log "building in $dir $*"
  cmake -S "$here" -B "$dir" "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}

# build_for_suite DIR LABELS [extra targets...]: configures nothing; builds only the targets of
# the tests that `ctest -LE LABELS` runs (a test named after its program), and the extras
build_for_suite() {
  local dir=$1 exclude=$2 t; shift 2
  local known wanted=("$@")
  known=$(cmake --build "$dir" --target help | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p')
  for t in $(cd "$dir" && ctest -N -LE "$exclude" | sed -n 's/^ *Test *#[0-9]*: //p'); do
    if grep -qx "$t" <<<"$known"; then wanted+=("$t"); fi
  done
  log "building in $dir what ctest -LE \"$exclude\" runs (${#wanted[@]} targets)"
  cmake --build "$dir" -j "$jobs" --target "${wanted[@]}"
}

run_tests() { # run_tests DIR NAME [ctest options...]: the output also goes to DIR/ctest.out
  local dir=$1 name=$2; shift 2
  log "testing ($name): ctest $*"
  (cd "$dir" && ctest --output-on-failure -j "$jobs" --timeout 600 "$@" 2>&1 | tee ctest.out;
   exit "${PIPESTATUS[0]}")
}

# How long each stage of `test` took, printed at its end (also when a stage fails), with the ten
# slowest tests of each suite: where CI's time goes.
stages=()
stage_done() { # stage_done NAME
  local now
  now=$(date +%s)
  stages+=("$(printf '%-20s %4d s' "$1" $((now - stage_start)))")
  stage_start=$now
}
# awk, not head, keeps the first ten: head leaving early can kill sort with SIGPIPE, which under
# pipefail made this report (it runs in the EXIT trap) end a green run with status 141.
slowest() { # slowest DIR: the ten slowest tests of DIR's last ctest run
  [ -f "$1/ctest.out" ] || return 0
  sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) [.* ]*\([A-Za-z]*\) *\([0-9.]*\) sec$/\3 \1 \2/p' \
    "$1/ctest.out" | sort -rn | awk 'NR <= 10 {printf "  %8.2f s  %s (%s)\n", $1, $2, $3}'
}
report_times() {
  [ ${#stages[@]} -gt 0 ] || return 0
  log "stage times (total $(( $(date +%s) - test_start )) s)"
  printf '  %s\n' "${stages[@]}" >&2
  local dir
  for dir in "$here/build" "$here/build-clang" "$here/build-asan"; do
    if [ -f "$dir/ctest.out" ] && [ "$dir/ctest.out" -nt "$test_stamp" ]; then
      log "ten slowest tests in ${dir#"$here"/}"
      slowest "$dir" >&2 || true # a report: never the run's status
    fi
  done
  rm -f "$test_stamp"
}

# The first thing a new user sees: the club arm in real time with the live view on, and the example
# firmware holding set points over a pseudo-terminal. Ctrl-C stops both. ACHILLES_VIEW=ADDR:PORT
# moves the view (default 127.0.0.1:8080); ACHILLES_RUN_SECONDS ends the run by itself;
# ACHILLES_RUN_OPTIONS adds options to `achilles run` (for example --no-zmq). The exit
# status is the simulator's (0 when the run ended by itself or by Ctrl-C), and the temporary
# folder of the pty link goes either way. The traps never fail: under `set -e` a `kill` of a
# process that has already ended would end the EXIT trap before its `rm -rf`, with status 1.
run_view_demo() {
  local tmp view=${ACHILLES_VIEW:-127.0.0.1:8080} sim_pid fw_pid="" status=0
  local bin=${ACHILLES_BUILD:-$here/build}
  tmp=$(mktemp -d)
  local duration=()
  [ -n "${ACHILLES_RUN_SECONDS:-}" ] && duration=(--duration "$ACHILLES_RUN_SECONDS")
  local extra=()
  read -r -a extra <<< "${ACHILLES_RUN_OPTIONS:-}"
  log "running: achilles run configs/club_arm.json --serial pty --view $view, and the example firmware (Ctrl-C stops both)"
  "$bin/tools/achilles" run "$here/configs/club_arm.json" --serial pty --pty-link "$tmp/arm" \
    --view "$view" "${duration[@]}" "${extra[@]}" &
  sim_pid=$!
  # shellcheck disable=SC2064 # expand now: the trap must know these pids and paths
  trap "kill $sim_pid 2>/dev/null || true; rm -rf '$tmp'" EXIT
  trap "kill $sim_pid 2>/dev/null || true" INT TERM
  for _ in $(seq 100); do [ -e "$tmp/arm" ] || ! kill -0 $sim_pid 2>/dev/null && break; sleep 0.05; done
  if [ -e "$tmp/arm" ]; then
    "$bin/hil/client/examples/pd_firmware" "$tmp/arm" --setpoint 1=0.5 --setpoint 2=-0.4 &
    fw_pid=$!
    trap "kill $sim_pid $fw_pid 2>/dev/null || true" INT TERM
    trap "kill $sim_pid $fw_pid 2>/dev/null || true; rm -rf '$tmp'" EXIT
  fi
  wait $sim_pid || status=$?
  if [ -n "$fw_pid" ]; then
    kill $fw_pid 2>/dev/null || true
    wait $fw_pid 2>/dev/null || true
  fi
  return $status
}

case "${1:-}" in
  deps)
    install_missing
    ;;
  run)
    install_missing
    # warnings stay warnings here: a new user's compiler must not stop the main job
    build "$here/build" -DCMAKE_BUILD_TYPE=Release -DACHILLES_WERROR=OFF
    run_view_demo
    ;;
  demo)
    run_view_demo
    ;;
  test)
    # The plain build runs every test but those that judge wall-clock time (label timing: run
    # them with `ctest -L timing`); the sanitizer build runs the unit suites and the fuzz
    # targets, not the end-to-end tests (label e2e), which the plain build ran once.
    test_start=$(date +%s)
    stage_start=$test_start
    test_stamp=$(mktemp) # ctest outputs newer than this are this run's
    trap report_times EXIT
    install_missing
    stage_done "install"
    build "$here/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
    stage_done "plain build"
    run_tests "$here/build" "RelWithDebInfo" -LE timing
    stage_done "plain suite"
    if command -v clang >/dev/null; then
      # the sanitizer suite with clang, whose UBSan also sees what gcc's does not (NULL + 0);
      # the same build holds the fuzz targets
      log "configuring $here/build-clang (clang, ASan+UBSan, fuzz targets)"
      CC=clang CXX=clang++ cmake -S "$here" -B "$here/build-clang" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DACHILLES_FUZZ=ON >/dev/null
      # the unit suites' programs and the fuzz targets; not the tools and benchmarks
      build_for_suite "$here/build-clang" "e2e|timing" fuzz
      stage_done "sanitizer build"
      ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        run_tests "$here/build-clang" "clang ASan+UBSan" -LE "e2e|timing"
      stage_done "sanitizer suite"
      log "fuzzing: each target for ${fuzz_seconds} s (tests/fuzz/run.sh)"
      ACHILLES_FUZZ_BUILD="$here/build-clang" bash "$here/tests/fuzz/run.sh" "$fuzz_seconds"
      stage_done "fuzz"
    else
      log "clang not found: sanitizer suite with gcc, no fuzzing"
      build "$here/build-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DACHILLES_SANITIZE=ON
      stage_done "sanitizer build"
      ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
        run_tests "$here/build-asan" "ASan+UBSan" -LE "e2e|timing"
      stage_done "sanitizer suite"
    fi
    log "all tests passed (plain and sanitizer builds)"
    ;;
  *)
    sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
