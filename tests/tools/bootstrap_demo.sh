#!/bin/sh
# tests/tools/bootstrap_demo.sh SOURCE_DIR BUILD_DIR: the main job of `tools/scripts/bootstrap.sh run`
# (its `demo` part: the club arm with the live view and the example firmware over a pty), ended
# by ACHILLES_RUN_SECONDS, exits 0 and removes its temporary folder. Its EXIT trap used to
# `kill` the simulator that had already ended: under `set -e` that ended the trap with status 1
# before its `rm -rf`, so every timed run failed and left its folder behind.
set -u
src=$1 build=$2
dir=$(mktemp -d /tmp/achilles-bootstrap-demo-XXXXXX)
mkdir "$dir/tmp"
TMPDIR="$dir/tmp" ACHILLES_BUILD="$build" ACHILLES_RUN_SECONDS=1 ACHILLES_VIEW=127.0.0.1:0 \
  ACHILLES_RUN_OPTIONS=--no-zmq \
  timeout 120 bash "$src/tools/scripts/bootstrap.sh" demo > "$dir/out" 2>&1
status=$?
failed=0
if [ $status -ne 0 ]; then
  echo "FAILED: tools/scripts/bootstrap.sh demo with ACHILLES_RUN_SECONDS=1 exited $status:"
  cat "$dir/out"
  failed=1
fi
if ! grep -q "whole run: t=1.000 s" "$dir/out"; then
  echo "FAILED: the run did not end at t = 1 s:"
  cat "$dir/out"
  failed=1
fi
left=$(ls -A "$dir/tmp")
if [ -n "$left" ]; then
  echo "FAILED: the temporary folder was left behind: $left"
  failed=1
fi
rm -rf "$dir"
exit $failed
