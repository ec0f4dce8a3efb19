#!/bin/sh
# tests/tools/regular_files.sh ACHILLES SOURCE_DIR: every file Achilles reads goes through one
# check (sim/file_read.h): a named pipe as a robot file (JSON, MJCF, URDF), a mesh, a sensors
# file, a log or a CSV file is refused at once with "PATH: is a named pipe, not a regular file",
# by every command that reads it. Before the check was shared, `convert` and `sim` of an MJCF or
# URDF FIFO, and any MJCF or URDF whose mesh was a FIFO, blocked forever.
set -u
achilles=$1 src=$2
dir=$(mktemp -d /tmp/achilles-regular-files-XXXXXX)
trap 'rm -rf "$dir"' EXIT
failed=0
expect() { # expect TEXT ARGS...: a non-zero exit within the deadline, TEXT in stderr
  text=$1
  shift
  (cd "$dir" && timeout 30 "$achilles" "$@" > "$dir/out" 2> "$dir/err" < /dev/null)
  got=$?
  if [ $got -eq 0 ] || [ $got -eq 124 ] || ! grep -qF -- "$text" "$dir/err"; then
    echo "FAILED: achilles $*: exit $got$( [ $got -eq 124 ] && echo ' (still blocked after 30 s)'), stderr:"
    cat "$dir/err"
    echo "(expected a non-zero exit and: $text)"
    failed=1
  fi
}
for f in robot.json robot.xml robot.urdf cube.stl sensors.json run.log run.csv; do
  mkfifo "$dir/$f"
done
# the robot file itself, through every command that reads one
fast="--mode fast --duration 0.01 --no-zmq --quiet"
for robot in robot.json robot.xml robot.urdf; do
  expect "$robot: is a named pipe, not a regular file" sim "$robot" --duration 0.01
  expect "$robot: is a named pipe, not a regular file" sensors "$robot" --duration 0.01 --sensors "$src/configs/club_arm.sensors.json"
  expect "$robot: is a named pipe, not a regular file" run "$robot" $fast
done
expect "robot.xml: is a named pipe, not a regular file" convert robot.xml
expect "robot.urdf: is a named pipe, not a regular file" convert robot.urdf
# a mesh named by each format
cat > "$dir/mesh.xml" <<'XML'
<mujoco>
  <asset><mesh name="cube" file="cube.stl"/></asset>
  <worldbody>
    <body name="b"><inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>
      <joint name="j" type="hinge"/><geom type="mesh" mesh="cube"/></body>
  </worldbody>
</mujoco>
XML
cat > "$dir/mesh.urdf" <<'XML'
<robot name="r">
  <link name="base"/>
  <link name="arm">
    <inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><mesh filename="cube.stl"/></geometry></collision>
  </link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1"/></joint>
</robot>
XML
cat > "$dir/mesh.json" <<'JSON'
{ "bodies": [ { "name": "b", "parent": "world", "joint": { "name": "j", "type": "hinge", "axis": [0, 0, 1] },
                "inertial": { "mass": 1, "inertia": [0.01, 0.01, 0.01, 0, 0, 0] } } ],
  "geoms": [ { "name": "g", "body": "b", "type": "mesh", "file": "cube.stl" } ] }
JSON
for robot in mesh.xml mesh.urdf mesh.json; do
  expect "cube.stl: is a named pipe, not a regular file" sim "$robot" --duration 0.01
  expect "cube.stl: is a named pipe, not a regular file" run "$robot" $fast
done
expect "cube.stl: is a named pipe, not a regular file" convert mesh.xml
expect "cube.stl: is a named pipe, not a regular file" convert mesh.urdf
# a sensors file, named on the command line and by the robot file
expect "sensors.json: is a named pipe, not a regular file" sensors "$src/configs/club_arm.json" --duration 0.01 --sensors sensors.json
sed 's|"club_arm.sensors.json"|"'"$dir"'/sensors.json"|' "$src/configs/club_arm.json" > "$dir/arm.json"
grep -q "$dir/sensors.json" "$dir/arm.json" || { echo "FAILED: club_arm.json names no sensors file"; failed=1; }
expect "sensors.json: is a named pipe, not a regular file" run arm.json $fast
expect "sensors.json: is a named pipe, not a regular file" sensors arm.json --duration 0.01
# logs and CSV files
for log in run.log run.csv; do
  expect "$log: is a named pipe, not a regular file" replay "$log"
  expect "$log: is a named pipe, not a regular file" noise-fit "$log" --sensor enc
done
# a device is refused the same way, here as a mesh
sed 's|"cube.stl"|"/dev/zero"|' "$dir/mesh.json" > "$dir/zero.json"
expect "/dev/zero: is a character device, not a regular file" sim zero.json --duration 0.01
exit $failed
