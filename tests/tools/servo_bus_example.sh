#!/bin/sh
# tests/tools/servo_bus_example.sh ACHILLES CONFIG PROTOCOL: `achilles run CONFIG --servo-bus pty`
# with tools/scripts/servo_bus_example.py (the example of docs/servo-bus.md) driving it. Fails when
# the pty is not announced within 10 s, or the example does not get servo 1 to its goal.
set -u
achilles=$1 config=$2 protocol=$3
here=$(cd "$(dirname "$0")" && pwd)
log=$(mktemp)
"$achilles" run "$config" --servo-bus pty --no-zmq --quiet --duration 60 2> "$log" &
pid=$!
pty=""
i=0
while [ -z "$pty" ] && [ $i -lt 100 ]; do
  pty=$(grep -o '/dev/pts/[0-9]*' "$log" | head -n 1)
  [ -z "$pty" ] && sleep 0.1
  i=$((i + 1))
done
if [ -z "$pty" ]; then
  echo "achilles run did not announce its servo bus within 10 s:"; cat "$log"
  kill "$pid"; rm -f "$log"; exit 1
fi
/usr/bin/python3 "$here/../../tools/scripts/servo_bus_example.py" "$protocol" "$pty"
status=$?
kill "$pid"
wait "$pid"
run_status=$?
cat "$log"
rm -f "$log"
[ $status -eq 0 ] || { echo "the example did not reach its goal (exit $status)"; exit 1; }
[ $run_status -eq 0 ] || { echo "achilles run exited with $run_status"; exit 1; }
