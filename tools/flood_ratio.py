#!/usr/bin/python3
"""Lateness of the realtime loop under a command flood, beside the same run without it.

Runs tools/soak on CONFIG in alternating rounds, idle (its client commanding every actuator at
1 kHz) and flooded (the same client pushing commands as fast as ZeroMQ takes them), so that a
change of machine load hits both alike. Each soak prints the wake-up lateness p50/p99 of every
1-second interval; per condition this prints the median over all intervals of the rounds (one
stalled second of a shared machine moves a median of many seconds little) and the flooded/idle
ratios, and the overruns. Nothing is asserted: the figures are for docs/runtime.md.

  tools/flood_ratio.py [--soak build/tools/soak] [--rounds 3] [--duration 10] [--rt] CONFIG
"""
import argparse
import re
import statistics
import subprocess
import sys

LINE = re.compile(r"steps (\d+) overruns (\d+) .*late p50/p99/max (\d+)/(\d+)/(\d+) us"
                  r".*input deferred (\d+)")


def soak(args, flood):
    cmd = [args.soak, args.config, "--duration", str(args.duration), "--interval", "1"]
    cmd += ["--flood"] if flood else []
    cmd += ["--rt"] if args.rt else []
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.duration + 60)
    rows = [LINE.search(line) for line in out.stdout.splitlines()]
    rows = [tuple(int(x) for x in m.groups()) for m in rows if m]
    if out.returncode != 0 or not rows:
        sys.exit("flood_ratio: %s failed (exit %d):\n%s%s" %
                 (" ".join(cmd), out.returncode, out.stdout, out.stderr))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("config")
    p.add_argument("--soak", default="build/tools/soak")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--duration", type=float, default=10)
    p.add_argument("--rt", action="store_true", help="run the simulator with --rt")
    args = p.parse_args()
    runs = {False: [], True: []}
    for r in range(args.rounds):
        for flood in (False, True):
            rows = soak(args, flood)
            runs[flood].append(rows)
            last = rows[-1]
            print("round %d %-7s p50/p99 of its seconds (median) %4.0f/%4.0f us, overruns %.2f %%,"
                  " input deferred %d" % (r + 1, "flooded" if flood else "idle",
                                          statistics.median(x[2] for x in rows),
                                          statistics.median(x[3] for x in rows),
                                          100.0 * last[1] / max(last[0], 1), last[5]), flush=True)
    fig = {}
    for flood, rounds in runs.items():
        secs = [x for rows in rounds for x in rows[1:]]  # the first second holds the start-up
        fig[flood] = (statistics.median(x[2] for x in secs), statistics.median(x[3] for x in secs),
                      100.0 * sum(rows[-1][1] for rows in rounds) /
                      max(sum(rows[-1][0] for rows in rounds), 1))
    print("idle:    late p50 %.0f us, p99 %.0f us (medians over seconds), overruns %.2f %%" % fig[False])
    print("flooded: late p50 %.0f us, p99 %.0f us (medians over seconds), overruns %.2f %%" % fig[True])
    print("flooded/idle: p50 %.2f, p99 %.2f" % (fig[True][0] / max(fig[False][0], 1),
                                               fig[True][1] / max(fig[False][1], 1)))


if __name__ == "__main__":
    main()
