#!/bin/sh
# tests/tools/servo_bus_cli_errors.sh ACHILLES SOURCE_DIR: `achilles run --servo-bus` refuses
# bad configurations with exit status 2 and a message naming the place, and a port it cannot
# open with exit status 1 (docs/runtime.md, docs/servo-bus.md).
set -u
achilles=$1 src=$2
dir=$(mktemp -d)
failed=0
expect() { # expect STATUS TEXT -- ARGS...
  want=$1 text=$2
  shift 3
  "$achilles" run "$@" --no-zmq --quiet --duration 0.01 > "$dir/out" 2> "$dir/err"
  got=$?
  if [ $got -ne "$want" ] || ! grep -qF -- "$text" "$dir/err"; then
    echo "FAILED: achilles run $*: exit $got (expected $want), stderr:"; cat "$dir/err"
    echo "(expected it to contain: $text)"
    failed=1
  fi
}
arm=$src/configs/servo_arm.json
expect 2 "--bus-protocol feetech, but the servos are dynamixel2" -- "$arm" --servo-bus pty --bus-protocol feetech
expect 2 "--bus-protocol: unknown value 'can'" -- "$arm" --bus-protocol can
expect 2 "500000 baud is not a rate Dynamixel X-series servos can be set to" -- "$arm" --bus-baud 500000
expect 1 "servo bus: port" -- "$arm" --servo-bus /nonexistent/tty
sed 's/"XL430-W250"/"XL999"/' "$arm" > "$dir/bad_model.json"
expect 2 "actuators[0].servo.model: unknown model \"XL999\"" -- "$dir/bad_model.json"
sed 's/"id": 4,/"id": 400,/' "$arm" > "$dir/bad_id.json"
expect 2 "actuators[3].servo.id: expected an integer from 0 to 252" -- "$dir/bad_id.json"
sed 's/"servo": { "id": 2, "model": "XM430-W350" }/"servo": { "id": 2, "model": "STS3215" }/' "$arm" > "$dir/mixed.json"
expect 2 "actuators[1].servo: model STS3215 speaks another protocol" -- "$dir/mixed.json"
sed 's/"port": "pty",/"port": "pty", "speed": 3,/' "$arm" > "$dir/bad_key.json"
expect 2 "transports.servo_bus.speed" -- "$dir/bad_key.json"
rm -rf "$dir"
exit $failed
