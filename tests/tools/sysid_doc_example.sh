#!/bin/sh
# tests/tools/sysid_doc_example.sh ACHILLES_DIR FIRMWARE_DIR SOURCE_DIR: runs the worked example of
# docs/sysid.md section 9 exactly as written (the sh block between its sysid-example markers), from
# the source folder with the built programs on the PATH, then checks what it printed: each fitted
# damping and armature within 1 % of configs/club_arm.json, each friction within 5 %, every joint's
# residual RMS after the fit within 1.5 of its encoder's sigma, fitted.json holding the printed values,
# and the doc's own table showing the same values (to 6 digits). Skipped (77) without gnuplot or
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
rm -rf "$work"
exit $status
