#!/usr/bin/python3
"""Lateness of the realtime loop under a command flood, against the same loop without it.

Runs `tools/soak CONFIG --alternate SEGMENT` RUNS times: in each run the soak's client commands
every actuator at 1 kHz and, every other SEGMENT seconds, floods the command socket as fast as
ZeroMQ takes messages. The simulator publishes a status every 0.1 s; a status period that lies
wholly inside one condition counts for it, and per condition the median over its periods of
the wake-up lateness p50 and p99 is taken. Interleaving the two conditions every half second
makes whatever else loads the machine (other processes, a VM's host) hit both alike, which
separate idle and flooded runs cannot promise.

Prints each run's figures and the range of the flooded/idle ratios over the runs. With
--max-ratio R the exit status is 1 when a run's p50 ratio exceeds R (docs/runtime.md: "a flood
leaves lateness within 1.2x of the idle figure", with --rt), and with --max-p99-ratio R2 when
its p99 ratio exceeds R2; when SCHED_FIFO is refused (no root or CAP_SYS_NICE) the figures are
printed and not judged.

With --hog the second condition is a client that only spins (a busy neighbour without the
messages): what the flood's sender costs the loop by taking a CPU, apart from its messages.

  tools/bench/flood_ratio.py [--soak build/tools/soak] [--runs 3] [--duration 20] [--segment 0.5]
                       [--rt] [--hog] [--input-budget-us US] [--max-ratio R]
                       [--max-p99-ratio R2] CONFIG
"""
import argparse
import re
import subprocess
import sys

OTHER = r"(?:flooded|spinning)"
LINE = re.compile(r"alternate: idle (\d+) periods, late p50/p99 \(medians over periods\) "
                  r"(\d+)/(\d+) us, overruns ([\d.]+) %; " + OTHER + r" (\d+) periods, "
                  r"(\d+)/(\d+) us, overruns ([\d.]+) %; " + OTHER + r"/idle p50 "
                  r"([\d.]+|nan|inf), p99 ([\d.]+|nan|inf)")


def run_once(args):
    cmd = [args.soak, args.config, "--duration", str(args.duration),
           "--alternate", str(args.segment)]
    cmd += ["--rt"] if args.rt else []
    cmd += ["--hog"] if args.hog else []
    cmd += ["--input-budget-us", str(args.input_budget_us)] if args.input_budget_us else []
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.duration + 60)
    m = next((LINE.search(x) for x in out.stdout.splitlines() if LINE.search(x)), None)
    if out.returncode != 0 or not m:
        sys.exit("flood_ratio: %s failed (exit %d):\n%s%s" %
                 (" ".join(cmd), out.returncode, out.stdout, out.stderr))
    fifo_refused = "SCHED_FIFO refused" in out.stderr
    return m.group(0), float(m.group(9)), float(m.group(10)), fifo_refused


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("config")
    p.add_argument("--soak", default="build/tools/soak")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--duration", type=float, default=20, help="seconds per run (20)")
    p.add_argument("--segment", type=float, default=0.5,
                   help="seconds of each condition before the other (0.5)")
    p.add_argument("--rt", action="store_true", help="run the simulator with --rt")
    p.add_argument("--input-budget-us", type=float, default=0,
                   help="the simulator's input budget (-1: off, to see the loop without it)")
    p.add_argument("--hog", action="store_true",
                   help="a client that only spins in place of the flood (the CPU without the messages)")
    p.add_argument("--max-ratio", type=float, default=0,
                   help="exit 1 when a run's flooded/idle p50 exceeds this")
    p.add_argument("--max-p99-ratio", type=float, default=0,
                   help="exit 1 when a run's flooded/idle p99 exceeds this")
    args = p.parse_args()
    ratios, refused = [], False
    for r in range(args.runs):
        line, p50, p99, fifo_refused = run_once(args)
        refused |= fifo_refused
        ratios.append((p50, p99))
        print("run %d: %s" % (r + 1, line[len("alternate: "):]), flush=True)
    print("%s/idle over %d runs: p50 %.2f-%.2f, p99 %.2f-%.2f" %
          ("spinning" if args.hog else "flooded", args.runs, min(x[0] for x in ratios), max(x[0] for x in ratios),
           min(x[1] for x in ratios), max(x[1] for x in ratios)))
    limits = [(k, limit) for k, limit in ((0, args.max_ratio), (1, args.max_p99_ratio))
              if limit > 0]
    if not limits:
        return
    if refused:
        print("not judged: SCHED_FIFO was refused (run as root or with CAP_SYS_NICE)")
        return
    failed = ["%s %.2f > %.2f" % (("p50", "p99")[k], x[k], limit)
              for k, limit in limits for x in ratios if not x[k] <= limit]
    if failed:
        print("FAILED: flooded/idle " + ", ".join(failed))
        sys.exit(1)
    print("within " + ", ".join("%s %.2f" % (("p50", "p99")[k], limit) for k, limit in limits))

if __name__ == "__main__":
    main()
