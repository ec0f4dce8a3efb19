#!/usr/bin/python3
"""Reads the sensor streams of a running Achilles simulator over ZeroMQ and reports gaps.

Example:
    achilles run configs/club_arm.json &                 # PUB on tcp://127.0.0.1:5555
    tools/scripts/zmq_subscriber.py                               # every topic
    tools/scripts/zmq_subscriber.py enc/ status                   # encoders and status only
    tools/scripts/zmq_subscriber.py -e ipc:///tmp/a/pub truth/    # ground truth, another endpoint
    tools/scripts/zmq_subscriber.py --latest --interval 0.5       # the present, twice a second

Each message is multipart [topic, json]; the formats are in docs/messages.md. A subscriber that
falls behind loses samples (the simulator never waits for it): the sequence numbers ("seq") then
jump, and this tool reports every jump as a gap.

--latest subscribes to nothing: every --interval seconds it asks the control socket
(tcp://127.0.0.1:5557) for {"cmd":"latest"}, the newest message of every stream, so however
slowly it reads, it shows the present (docs/messages.md, section 6).

Needs python3-zmq (Debian: apt-get install python3-zmq).
"""

import argparse
import json
import signal
import sys
import time

PROTOCOL_VERSION = 1


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Subscribe to Achilles sensor streams (ZeroMQ PUB), print samples and "
        "report sequence gaps. Message formats: docs/messages.md.")
    p.add_argument("prefixes", nargs="*", default=[""],
                   help="topic prefixes to subscribe to, e.g. enc/ imu/imu_wrist truth/ status "
                   "(default: everything)")
    p.add_argument("-e", "--endpoint", default="tcp://127.0.0.1:5555",
                   help="the simulator's PUB endpoint (default: %(default)s)")
    p.add_argument("-n", "--count", type=int, default=0,
                   help="stop after this many messages (with --latest: answers) (default: run "
                   "until Ctrl-C)")
    p.add_argument("--latest", action="store_true",
                   help="every --interval seconds, ask the control socket for the newest sample "
                   "of every topic and print one line per topic")
    p.add_argument("-c", "--control", default="tcp://127.0.0.1:5557",
                   help="the simulator's control endpoint, for --latest (default: %(default)s)")
    p.add_argument("--interval", type=float, default=1.0,
                   help="seconds between --latest reports (default: %(default)s)")
    p.add_argument("--raw", action="store_true", help="print the JSON as received")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print no samples, only gaps and the final summary")
    return p.parse_args(argv)


def format_sample(topic, msg):
    """One line: topic, seq, simulation time, and each value with its unit."""
    if topic == "status":
        c = msg.get("commands", {})
        return ("status t=%.3f steps=%s mode=%s%s accepted=%s rejected nonfinite/unknown/"
                "malformed=%s/%s/%s" % (msg.get("t", float("nan")), msg.get("steps"),
                                         msg.get("mode"), " (paused)" if msg.get("paused") else "",
                                         c.get("accepted"), c.get("rejected_nonfinite"),
                                         c.get("rejected_unknown"), c.get("rejected_malformed")))
    if topic == "step":  # the end-of-step marker (docs/messages.md, section 3)
        return "step %s t=%.6f samples=%s" % (msg.get("step"), msg.get("t", float("nan")),
                                              msg.get("samples"))
    units = msg.get("units", {})
    values = " ".join("%s=%s%s" % (k, "null" if v is None else "%.9g" % v,
                                   " " + units[k] if k in units and v is not None else "")
                      for k, v in msg.get("values", {}).items())
    flag = "" if msg.get("valid", True) else " INVALID"
    return "%-28s seq=%-8s t=%.6f%s %s" % (topic, msg.get("seq"), msg.get("t", float("nan")),
                                           flag, values)


class GapTracker:
    """Per topic: the last sequence number, samples seen, samples missed."""

    def __init__(self):
        self.last = {}
        self.seen = {}
        self.missed = {}

    def add(self, topic, seq):
        """Returns the number of samples missed before this one (0 when consecutive)."""
        self.seen[topic] = self.seen.get(topic, 0) + 1
        prev = self.last.get(topic)
        self.last[topic] = seq
        if prev is None:
            return 0
        if seq <= prev:  # the simulator was reset: sequence numbers start again
            return 0
        gap = seq - prev - 1
        if gap:
            self.missed[topic] = self.missed.get(topic, 0) + gap
        return gap

    def summary(self):
        lines = []
        for topic in sorted(self.seen):
            lines.append("%-28s %8d received %8d missed" % (topic, self.seen[topic],
                                                             self.missed.get(topic, 0)))
        return "\n".join(lines)


def receive(sock):
    """One [topic, json] message, decoded; None for a message that is not one."""
    parts = sock.recv_multipart()
    if len(parts) != 2:
        return None, None, parts
    topic = parts[0].decode("utf-8", "replace")
    try:
        msg = json.loads(parts[1])
    except ValueError:
        return topic, None, parts
    return topic, msg, parts


def matches(topic, prefixes):
    return any(topic.startswith(p) for p in prefixes)


def run_latest(zmq, ctx, args):
    """Every --interval seconds, the present: one line per topic matching the prefixes."""
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.RCVTIMEO, 5000)
    sock.connect(args.control)
    answers = 0
    try:
        while args.count <= 0 or answers < args.count:
            time.sleep(args.interval)
            sock.send(b'{"cmd":"latest"}')
            try:
                reply = json.loads(sock.recv())
            except zmq.Again:
                print("no answer from %s within 5 s" % args.control, file=sys.stderr)
                return 1
            if not reply.get("ok"):
                print("latest: %s" % reply.get("error"), file=sys.stderr)
                return 1
            print("latest t=%.6f steps=%s" % (reply.get("t", float("nan")), reply.get("steps")))
            samples = reply.get("samples", {})
            for topic in sorted(samples):
                if matches(topic, args.prefixes):
                    sample = samples[topic]
                    print(json.dumps(sample) if args.raw else format_sample(topic, sample))
            print(flush=True)
            answers += 1
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    return 0


def on_sigterm(signum, frame):
    raise KeyboardInterrupt  # print the summary on the way out


def main(argv):
    args = parse_args(argv)
    signal.signal(signal.SIGTERM, on_sigterm)
    try:
        import zmq
    except ImportError:
        sys.stderr.write("zmq_subscriber: python3-zmq is missing (apt-get install python3-zmq)\n")
        return 2
    ctx = zmq.Context()
    if args.latest:
        rc = run_latest(zmq, ctx, args)
        ctx.term()
        return rc
    sock = ctx.socket(zmq.SUB)
    sock.setsockopt(zmq.LINGER, 0)
    for prefix in args.prefixes:
        sock.setsockopt(zmq.SUBSCRIBE, prefix.encode())
    sock.connect(args.endpoint)
    gaps = GapTracker()
    received = 0
    try:
        while args.count <= 0 or received < args.count:
            topic, msg, parts = receive(sock)
            received += 1
            if msg is None:
                print("malformed message: %r" % (parts,), file=sys.stderr)
                continue
            if msg.get("v") != PROTOCOL_VERSION:
                print("%s: protocol version %r, this tool reads %d" % (topic, msg.get("v"),
                                                                      PROTOCOL_VERSION),
                      file=sys.stderr)
            if "seq" in msg:
                missed = gaps.add(topic, msg["seq"])
                if missed:
                    print("gap: %s missed %d sample(s) before seq %d" % (topic, missed,
                                                                        msg["seq"]),
                          file=sys.stderr, flush=True)
            if not args.quiet:
                print(parts[1].decode() if args.raw else format_sample(topic, msg), flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        ctx.term()
    print(gaps.summary(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
