#!/bin/sh
# tests/tools/servo_bus_cli_errors.sh ACHILLES SOURCE_DIR: `achilles run --servo-bus` refuses
# bad configurations with exit status 2 and a message naming the place, and a port it cannot
# open with exit status 1; a servos file's errors name the file and the joint (run and convert);
# a servos file without a bus section starts the bus (docs/runtime.md, docs/servo-bus.md).
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
# a servos file beside a URDF: errors name the servos file and the joint (run and convert alike)
urdf=$src/configs/desk_arm.urdf
printf '{"servos": {"elbow": {"model": "STS3215", "id": 1}}}' > "$dir/s_joint.json"
expect 2 'servos.elbow: unknown joint "elbow" (the robot'"'"'s joints: shoulder_pan,' -- "$urdf" --servos "$dir/s_joint.json"
printf '{"servos": {"elbow_flex": {"model": "STS3215", "id": 3}, "gripper": {"model": "STS3215", "id": 3}}}' > "$dir/s_dup.json"
expect 2 "servos.gripper.id: ID 3 is servos.elbow_flex's too" -- "$urdf" --servos "$dir/s_dup.json"
printf '{"bus": {"protocol": "dynamixel2"}, "servos": {"elbow_flex": {"model": "STS3215", "id": 3}}}' > "$dir/s_proto.json"
expect 2 "servos.elbow_flex.model: STS3215 speaks feetech, but the bus speaks dynamixel2" -- "$urdf" --servos "$dir/s_proto.json"
printf '{"servos": {"elbow_flex": {"model": "STS3215", "id": 3}, "gripper": {"model": "XL430-W250", "id": 4}}}' > "$dir/s_mixed.json"
expect 2 "servos.gripper.model: XL430-W250 speaks dynamixel2, but the servos before it speak feetech" -- "$urdf" --servos "$dir/s_mixed.json"
printf '{"servos": {"elbow_flex": {"model": "STS9999", "id": 3}}}' > "$dir/s_model.json"
expect 2 'servos.elbow_flex.model: unknown model "STS9999"' -- "$urdf" --servos "$dir/s_model.json"
printf '{"servos": {"elbow_flex": {"model": "STS3215", "id": 3, "speed": 2}}}' > "$dir/s_key.json"
expect 2 "servos.elbow_flex.speed: unknown key" -- "$urdf" --servos "$dir/s_key.json"
expect 2 "nothere.json: cannot open" -- "$urdf" --servos "$dir/nothere.json"
# without a "bus" section the servos' bus starts with its defaults
printf '{"servos": {"elbow_flex": {"model": "STS3215", "id": 3}}}' > "$dir/s_nobus.json"
expect 0 "servo bus (feetech, 1000000 baud)" -- "$urdf" --servos "$dir/s_nobus.json"
"$achilles" convert "$urdf" --servos "$dir/s_dup.json" > "$dir/out" 2> "$dir/err"
if [ $? -ne 1 ] || ! grep -qF "servos.gripper.id: ID 3 is servos.elbow_flex's too" "$dir/err"; then
  echo "FAILED: achilles convert --servos with a duplicate ID:"; cat "$dir/err"; failed=1
fi
rm -rf "$dir"
exit $failed
