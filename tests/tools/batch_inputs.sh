#!/bin/sh
# tests/tools/batch_inputs.sh ACHILLES SOURCE_DIR: the initial state and constant inputs of the
# batch commands (tools/cli/batch_inputs.h): `achilles sim` and `achilles sensors` take --qpos,
# --qvel, --torque and --ctrl, so a touch sensor's reading under a gripper's squeeze is computed
# without a running loop.
set -u
achilles=$1 src=$2
dir=$(mktemp -d /tmp/achilles-batch-inputs-XXXXXX)
trap 'rm -rf "$dir"' EXIT
failed=0
fail() { echo "FAILED: $*"; failed=1; }
probe=$src/configs/latency_probe.json
# a motor of gear 1 commanded 0.5 moves the link exactly as a torque of 0.5 N·m
"$achilles" sim "$probe" --duration 0.05 --ctrl motor=0.5 > "$dir/ctrl.csv" || fail "sim --ctrl"
"$achilles" sim "$probe" --duration 0.05 --torque j=0.5 > "$dir/torque.csv" || fail "sim --torque"
cmp -s "$dir/ctrl.csv" "$dir/torque.csv" || fail "--ctrl motor=0.5 differs from --torque j=0.5"
tail -1 "$dir/ctrl.csv" | awk -F, '{ exit !($2 > 0.005) }' || fail "--ctrl moved nothing: $(tail -1 "$dir/ctrl.csv")"
# the initial state: row 0 holds --qpos and --qvel
"$achilles" sim "$probe" --duration 0.002 --qpos j=0.3 --qvel j=2 > "$dir/state.csv" || fail "sim --qpos --qvel"
sed -n 2p "$dir/state.csv" | awk -F, '{ exit !($1 == 0 && $2 == 0.3 && $3 == 2) }' || fail "row 0: $(sed -n 2p "$dir/state.csv") (expected 0,0.3,2,...)"
# what is refused, with exit status 2 and the place named
expect() { # expect TEXT ARGS...
  text=$1
  shift
  "$achilles" "$@" > /dev/null 2> "$dir/err"
  got=$?
  if [ $got -ne 2 ] || ! grep -qF -- "$text" "$dir/err"; then
    fail "achilles $*: exit $got (expected 2) and '$text' in: $(cat "$dir/err")"
  fi
}
expect "--ctrl: 'motor' takes commands in [-1, 1] (its ctrlrange), got 3" sim "$probe" --duration 0.01 --ctrl motor=3
expect "--ctrl: unknown actuator 'grip' (actuators: motor)" sim "$probe" --duration 0.01 --ctrl grip=1
expect "--ctrl: expected ACTUATOR=VALUE, got 'motor'" sensors "$probe" --duration 0.01 --ctrl motor
expect "--qvel: unknown joint 'x' (joints: j)" sim "$probe" --duration 0.01 --qvel x=1
expect "--qpos: unknown joint 'x' (joints: j)" sensors "$probe" --duration 0.01 --qpos x=1
# a finger on a slide squeezed by a position servo (kp 200, kd 2) against a block, no gravity
cat > "$dir/gripper.json" <<'JSON'
{ "name": "gripper", "timestep": 0.001, "gravity": [0, 0, 0],
  "bodies": [ { "name": "finger", "parent": "world",
    "joint": { "name": "slide", "type": "slide", "axis": [1, 0, 0], "damping": 5 },
    "inertial": { "mass": 0.05, "inertia": [1e-5, 1e-5, 1e-5, 0, 0, 0] } } ],
  "geoms": [ { "name": "pad", "body": "finger", "type": "sphere", "size": [0.01] },
             { "name": "block", "body": "world", "type": "box", "size": [0.01, 0.02, 0.02],
               "pos": [0.05, 0, 0] } ],
  "actuators": [ { "name": "squeeze", "joint": "slide", "type": "position_servo", "kp": 200,
                   "kd": 2, "ctrlrange": [-0.1, 0.1] } ],
  "sensors": { "seed": 1, "list": [
    { "name": "touch", "type": "touch", "geom": "pad", "rate_hz": 100 },
    { "name": "force", "type": "torque", "joint": "slide", "rate_hz": 100 } ] } }
JSON
# at rest against the block, the pad's normal force is the servo's push kp·(0.06 − q)
"$achilles" sensors "$dir/gripper.json" --duration 2 --ctrl squeeze=0.06 > "$dir/touch.csv" || fail "sensors --ctrl"
"$achilles" sim "$dir/gripper.json" --duration 2 --ctrl squeeze=0.06 > "$dir/finger.csv" || fail "sim --ctrl (gripper)"
q=$(tail -1 "$dir/finger.csv" | cut -d, -f2)
tail -1 "$dir/touch.csv" | awk -F, -v q="$q" '{
  push = 200 * (0.06 - q); normal = $3; force = $6
  printf "squeeze: finger at %.6f m, touch %.9g N, servo push %.9g N, torque sensor %.9g N\n", q, normal, push, force
  exit !(normal > 5 && (normal - push) ^ 2 < (1e-6 * push) ^ 2 && (force - push) ^ 2 < (1e-6 * push) ^ 2)
}' || fail "the squeeze: $(tail -1 "$dir/touch.csv") with the finger at $q"
# the initial state reaches the sensors at t = 0: the servo (ctrl 0) pulls back by kp·q + kd·q̇
"$achilles" sensors "$dir/gripper.json" --duration 0 --qpos slide=0.02 --qvel slide=0.1 > "$dir/t0.csv" || fail "sensors --qpos --qvel"
sed -n 2p "$dir/t0.csv" | awk -F, '{ exit !($1 == 0 && ($6 + 4.2) ^ 2 < 1e-24) }' || fail "t = 0: $(sed -n 2p "$dir/t0.csv") (expected a force of -4.2 N)"
exit $failed
