#!/bin/sh
# tests/tools/sysid_doc_example.sh ACHILLES_DIR FIRMWARE_DIR SOURCE_DIR: runs the worked example of
# docs/sysid.md section 9 exactly as written (the sh block between its sysid-example markers), from
# the source folder with the built programs on the PATH, then checks what it printed: each fitted
# damping and armature within 1 % of configs/club_arm.json, each friction within 5 %, every joint's
# residual RMS after the fit within 1.5 of its encoder's sigma, fitted.json holding the printed values,
# and the doc's own table showing the same values (to 6 digits). Then the same recording as a real
# arm's logger would write it (a CSV: time in ms, raw encoder counts, duty in percent; section 2)
# is fitted through --map, with the same tolerances. Skipped (77) without gnuplot or
# /usr/bin/python3.
set -u
bin=$1 fw=$2 src=$3
command -v gnuplot > /dev/null || { echo "gnuplot is not installed (the example draws --plot)"; exit 77; }
[ -x /usr/bin/python3 ] || { echo "no /usr/bin/python3"; exit 77; }
work=$(mktemp -d)
awk '/<!-- sysid-example:begin/ {on = 1; next} /<!-- sysid-example:end/ {on = 0} on && !/^```/' \
    "$src/docs/sysid.md" > "$work/example.sh"
[ -s "$work/example.sh" ] || { echo "docs/sysid.md has no sysid-example block"; rm -rf "$work"; exit 1; }
echo "--- the block of docs/sysid.md, run as written:"; cat "$work/example.sh"
mkdir "$work/tmp"
(cd "$src" && PATH="$bin:$fw:$PATH" TMPDIR="$work/tmp" sh -e "$work/example.sh") \
    > "$work/out" 2> "$work/err"
status=$?
cat "$work/out"
if [ $status -ne 0 ]; then
  echo "the example exited with $status:"; cat "$work/err"; rm -rf "$work"; exit 1
fi
/usr/bin/python3 - "$src" "$work" <<'PY'
import glob, json, re, sys
src, work = sys.argv[1], sys.argv[2]
truth = json.load(open(f"{src}/configs/club_arm.json"))
true = {}
for b in truth["bodies"]:
    j = b["joint"]
    for k in ("damping", "armature", "frictionloss"):
        true[f"joint.{j['name']}.{k}"] = j[k]
out, err = open(f"{work}/out").read(), open(f"{work}/err").read()
row = re.compile(r"^(joint\.\S+)\s+(\S+)\s+(\S+)\s+(\S+)", re.M)
fitted = {m.group(1): float(m.group(3)) for m in row.finditer(out)}
bad = []
if set(fitted) != set(true):
    bad.append(f"parameters printed {sorted(fitted)} are not {sorted(true)}")
for name, v in fitted.items():
    tol = 0.05 if name.endswith("frictionloss") else 0.01
    rel = abs(v - true[name]) / true[name]
    print(f"{name}: fitted {v:.6g}, true {true[name]:.6g}, off {100 * rel:.3f} % (limit {100 * tol:g} %)")
    if rel > tol:
        bad.append(f"{name} off by {100 * rel:.3f} %")
sigma = dict(re.findall(r"^  (\w+): encoder \S+, .*sigma (\S+)$", err, re.M))
res = re.findall(r"^(\w+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)$", out.split("residual per joint")[1], re.M)
for joint, rb, ra, mb, ma in res:
    print(f"{joint}: rms after {ra}, sigma {sigma[joint]}")
    if float(ra) > 1.5 * float(sigma[joint]):
        bad.append(f"{joint}: rms after {ra} > 1.5 sigma {sigma[joint]}")
if len(res) != 4:
    bad.append(f"{len(res)} joints in the residual table")
doc = open(f"{src}/docs/sysid.md").read()
shown = {m.group(1): float(m.group(3)) for m in row.finditer(doc.split("sysid-example:end")[1])}
for name, v in fitted.items():
    if name not in shown or abs(shown[name] - v) > 1e-5 * abs(v):
        bad.append(f"docs/sysid.md shows {name} = {shown.get(name)}, the run printed {v}")
robot = json.load(open(glob.glob(f"{work}/tmp/*/fitted.json")[0]))
for b in robot["bodies"]:
    for k in ("damping", "armature", "frictionloss"):
        name = f"joint.{b['joint']['name']}.{k}"
        if abs(b["joint"][k] - fitted[name]) > 1e-5 * abs(fitted[name]):
            bad.append(f"fitted.json has {name} = {b['joint'][k]}, the report {fitted[name]}")
report = json.load(open(glob.glob(f"{work}/tmp/*/report.json")[0]))
if len(report["parameters"]) != 12 or report["format"] != "achilles-sysid-report":
    bad.append("report.json is not the report of 12 parameters")
if not glob.glob(f"{work}/tmp/*/fit.png"):
    bad.append("no fit.png")
print("\n".join(bad) if bad else "every check held")
sys.exit(1 if bad else 0)
PY
status=$?
[ $status -eq 0 ] || { rm -rf "$work"; exit $status; }
# the log as a logger's CSV: one row per instant of encoder samples, counts (blank when a sample
# is missing), the duty last commanded in percent
case_dir=$(ls -d "$work"/tmp/*/)
/usr/bin/python3 - "$case_dir/run.ndjson" "$work/arm.csv" <<'PY'
import json, sys
enc = {"enc_base_yaw": 0, "enc_shoulder": 1, "enc_elbow": 2, "enc_wrist_roll": 3}
act = ["base_motor", "shoulder_motor", "elbow_motor", "wrist_motor"]
duty = {a: 0.0 for a in act}
out = open(sys.argv[2], "w")
out.write("t_ms,enc_b,enc_s,enc_e,enc_w,pwm_b,pwm_s,pwm_e,pwm_w\n")
row = None
def flush():
    t, counts, u = row
    cells = ["" if c is None else str(c) for c in counts] + ["%.17g" % (100 * u[a]) for a in act]
    out.write("%.17g,%s\n" % (1000 * t, ",".join(cells)))
for line in open(sys.argv[1]):
    r = json.loads(line[9:])
    if r["type"] not in ("sample", "command") or (r["type"] == "sample" and r["sensor"] not in enc):
        continue
    if row and r["t"] > row[0]:
        flush()
        row = None
    if r["type"] == "command":
        duty[r["actuator"]] = r["value"]
    elif row is None:
        row = [r["t"], [None] * 4, None]
    if row is not None:
        if r["type"] == "sample" and r["valid"]:
            row[1][enc[r["sensor"]]] = r["values"]["counts"]
        row[2] = dict(duty)
if row:
    flush()
PY
(cd "$src" && "$bin/achilles" sysid "$case_dir/guess.json" "$work/arm.csv" --quiet \
    --sensors configs/club_arm.sensors.json \
    --map time=t_ms*0.001,base_yaw=enc_b/8192,shoulder=enc_s/16384,elbow=enc_e/16384,wrist_roll=enc_w/4096,base_motor=pwm_b*0.01,shoulder_motor=pwm_s*0.01,elbow_motor=pwm_e*0.01,wrist_motor=pwm_w*0.01) \
    > "$work/csv.out" 2>&1
status=$?
echo "--- the same log as a CSV, fitted through --map (exit $status):"; cat "$work/csv.out"
[ $status -eq 0 ] || { rm -rf "$work"; exit 1; }
/usr/bin/python3 - "$src" "$work/csv.out" <<'PY'
import json, re, sys
truth = json.load(open(f"{sys.argv[1]}/configs/club_arm.json"))
true = {f"joint.{b['joint']['name']}.{k}": b["joint"][k] for b in truth["bodies"]
        for k in ("damping", "armature", "frictionloss")}
out = open(sys.argv[2]).read()
fitted = {m.group(1): float(m.group(3))
          for m in re.finditer(r"^(joint\.\S+)\s+(\S+)\s+(\S+)", out, re.M)}
bad = [n for n in true if n not in fitted or abs(fitted[n] - true[n]) / true[n] >
       (0.05 if n.endswith("frictionloss") else 0.01)]
for n in true:
    print(f"CSV: {n}: fitted {fitted.get(n)}, true {true[n]}")
print(f"CSV fit outside its tolerance: {bad}" if bad else "the CSV fit held too")
sys.exit(1 if bad else 0)
PY
status=$?
rm -rf "$work"
exit $status
