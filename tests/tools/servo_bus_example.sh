#!/bin/sh
# tests/tools/servo_bus_example.sh ACHILLES PROTOCOL CONFIG [RUN ARGS...]: `achilles run CONFIG
# RUN ARGS --pty-link DIR/arm` with tools/scripts/servo_bus_example.py (the example of docs/servo-bus.md)
# driving it through the link. Fails when the link does not appear within 60 s, when the example
# does not bring every servo to rest at its goal, or when the bus does not say, as the example
# closes the port, that the servo bus's controller closed it.
set -u
achilles=$1 protocol=$2 config=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
"$achilles" run "$config" "$@" --pty-link "$dir/arm" --no-zmq --quiet --duration 60 2> "$dir/log" &
pid=$!
. "$here/pty_link.sh"
wait_for_link "$dir" "$dir/log" "$pid"
/usr/bin/python3 "$here/../../tools/scripts/servo_bus_example.py" "$protocol" "$dir/arm"
status=$?
i=0
while ! grep -q "servo bus: firmware closed" "$dir/log" && [ $i -lt 50 ]; do
  sleep 0.1
  i=$((i + 1))
done
kill "$pid"
wait "$pid"
run_status=$?
cat "$dir/log"
closed=$(grep -c "servo bus: firmware closed" "$dir/log")
rm -rf "$dir"
[ $status -eq 0 ] || { echo "the example did not bring the servos to rest at their goals (exit $status)"; exit 1; }
[ $run_status -eq 0 ] || { echo "achilles run exited with $run_status"; exit 1; }
[ "$closed" -ge 1 ] || { echo "the bus did not say 'servo bus: firmware closed ...'"; exit 1; }
