#!/bin/sh
# tests/tools/sysid_servo_arm.sh ACHILLES SOURCE_DIR: docs/sysid.md section 10. Records
# configs/servo_arm.json (four Dynamixel X-series servos on a pty bus, real time, 8 s) while
# tests/tools/servo_excite.py writes Goal Positions (two sines per joint), gives every servo a wrong
# gearbox (rotor_inertia x1.4, gear_friction x0.65), fits joint.*.armature and joint.*.frictionloss
# from the encoders' Present Position and the torques the servos applied, and checks the servo
# blocks of --out: rotor inertia within 1 %, gear friction within 5 % of the models' figures
# (sim/servo_spec.c; docs/servo-bus.md section 3). Skipped (77) without /usr/bin/python3.
set -u
achilles=$1 src=$2
[ -x /usr/bin/python3 ] || { echo "no /usr/bin/python3"; exit 77; }
dir=$(mktemp -d)
"$achilles" run "$src/configs/servo_arm.json" --pty-link "$dir/arm" --no-zmq --quiet \
    --duration 300 --record "$dir/servo.ndjson" 2> "$dir/run.log" &
pid=$!
. "$src/tests/tools/pty_link.sh"
wait_for_link "$dir" "$dir/run.log" "$pid"
/usr/bin/python3 "$src/tests/tools/servo_excite.py" "$dir/arm" 7 > "$dir/excite.log" 2>&1
excite=$?
kill -INT "$pid"
wait "$pid"
run=$?
if [ $excite -ne 0 ] || [ $run -ne 0 ]; then
  echo "excitation exited $excite, achilles run $run:"; cat "$dir/excite.log" "$dir/run.log"
  rm -rf "$dir"; exit 1
fi
/usr/bin/python3 - "$src/configs/servo_arm.json" "$dir/servo_guess.json" <<'PY'
import json, sys
SPEC = {"XL430-W250": (2.39e-7, 0.041), "XM430-W350": (9.68e-8, 0.050)}  # sim/servo_spec.c
robot = json.load(open(sys.argv[1]))
for a in robot["actuators"]:
    rotor, friction = SPEC[a["servo"]["model"]]
    a["servo"]["rotor_inertia"] = rotor * 1.4
    a["servo"]["gear_friction"] = friction * 0.65
json.dump(robot, open(sys.argv[2], "w"), indent=2)
PY
"$achilles" sysid "$dir/servo_guess.json" "$dir/servo.ndjson" \
    --params 'joint.*.armature,joint.*.frictionloss' --out "$dir/servo_fitted.json" --quiet
fit=$?
if [ $fit -ne 0 ]; then
  echo "achilles sysid exited $fit"; rm -rf "$dir"; exit 1
fi
/usr/bin/python3 - "$dir/servo_fitted.json" <<'PY'
import json, sys
SPEC = {"XL430-W250": (2.39e-7, 0.041), "XM430-W350": (9.68e-8, 0.050)}  # sim/servo_spec.c
bad = []
for a in json.load(open(sys.argv[1]))["actuators"]:
    s = a["servo"]
    rotor, friction = SPEC[s["model"]]
    er = abs(s["rotor_inertia"] - rotor) / rotor
    ef = abs(s["gear_friction"] - friction) / friction
    print(f"{a['name']} ({s['model']}): rotor_inertia {s['rotor_inertia']:.5g} (model {rotor:g}, "
          f"off {100 * er:.2f} %), gear_friction {s['gear_friction']:.5g} (model {friction:g}, "
          f"off {100 * ef:.2f} %)")
    if er > 0.01 or ef > 0.05:
        bad.append(a["name"])
print(f"outside 1 % (rotor) / 5 % (friction): {bad}" if bad else "every servo's gearbox came back")
sys.exit(1 if bad else 0)
PY
status=$?
rm -rf "$dir"
exit $status
