#!/usr/bin/python3
"""A lockstep PD controller of the club arm over the simulator's ZeroMQ sockets (docs/messages.md),
as a "ZeroMQ program" under test (tests/tools/test_cli_test.c, docs/testing-firmware.md).

    zmq_firmware.py PUB CMD CTL INPUT

Subscribes to the encoders and the step markers on PUB, commands the four DC motors on CMD, and
takes {"setpoint": {"shoulder": RAD, ...}} messages on its own input INPUT (a PULL it binds).
Lockstep start without the slow joiner: `hello` on CTL until the subscription sees the status it
publishes, the state at t = 0 from `latest`, then one command set per step marker.
"""
import json
import sys

import zmq

JOINTS = {"enc_base_yaw": "base_motor", "enc_shoulder": "shoulder_motor",
          "enc_elbow": "elbow_motor", "enc_wrist_roll": "wrist_motor"}
KP = {"base_motor": 20, "shoulder_motor": 20, "elbow_motor": 20, "wrist_motor": 2}
KD = {"base_motor": 0.3, "shoulder_motor": 0.3, "elbow_motor": 0.3, "wrist_motor": 0.01}
NAMES = {"base_yaw": "base_motor", "shoulder": "shoulder_motor", "elbow": "elbow_motor",
         "wrist_roll": "wrist_motor"}
WRIST_STEP = 2 * 3.141592653589793 / 4096  # 1024 lines, quadrature: rad per count


def main(pub, cmd, ctl, own):
    ctx = zmq.Context()
    sub = ctx.socket(zmq.SUB)
    sub.connect(pub)
    for topic in ("enc/", "step", "status"):
        sub.setsockopt_string(zmq.SUBSCRIBE, topic)
    push = ctx.socket(zmq.PUSH)
    push.connect(cmd)
    req = ctx.socket(zmq.REQ)
    req.connect(ctl)
    inp = ctx.socket(zmq.PULL)
    inp.bind(own)
    setpoint = {"base_motor": 0, "shoulder_motor": 0.5, "elbow_motor": -0.4, "wrist_motor": 0}
    q = {a: 0.0 for a in setpoint}
    v = {a: 0.0 for a in setpoint}

    def take(topic, msg):
        name = msg.get("sensor")
        if not topic.startswith("enc/") or name not in JOINTS or not msg.get("valid"):
            return
        a, vals = JOINTS[name], msg["values"]
        q[a] = vals["angle"] if "angle" in vals else vals["counts"] * WRIST_STEP
        v[a] = vals.get("velocity", 0.0)

    def send():
        while inp.poll(0):
            for joint, value in json.loads(inp.recv())["setpoint"].items():
                setpoint[NAMES[joint]] = value
        u = {a: max(-1.0, min(1.0, KP[a] * (setpoint[a] - q[a]) - KD[a] * v[a])) for a in q}
        push.send_string(json.dumps({"v": 1, "commands": u}))

    while True:  # the subscription is up once it sees the status `hello` publishes
        req.send_string('{"cmd":"hello"}')
        req.recv()
        if sub.poll(200) and sub.recv_multipart()[0] == b"status":
            break
    req.send_string('{"cmd":"latest"}')
    for topic, text in json.loads(req.recv())["samples"].items():
        take(topic, json.loads(text) if isinstance(text, str) else text)
    send()
    while sub.poll(5000):
        topic, body = sub.recv_multipart()
        topic = topic.decode()
        if topic == "step":
            send()
        elif topic != "status":
            take(topic, json.loads(body))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
