#!/usr/bin/python3
"""Loop lateness of `achilles run` beside cyclictest, on the same machine in the same run.

For each rate, runs cyclictest (rt-tests) and the Achilles real-time loop at the same time for
the same number of periods (each has a CPU of this 2-CPU machine, and both live through the
same stalls of the virtual machine), reads each one's wake-up lateness distribution
(cyclictest's histogram; the "whole run" status line of achilles), and prints a markdown table
with the p99 ratio, for several rounds and their median. The target of issue 4 is achilles p99
<= 1.5 x cyclictest p99.
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def percentile_from_histogram(counts, q):
    """counts: {latency_us: n}; the smallest latency whose cumulative share reaches q."""
    total = sum(counts.values())
    if total == 0:
        return float("nan")
    seen = 0
    for us in sorted(counts):
        seen += counts[us]
        if seen >= q * total:
            return float(us)
    return float(max(counts))


def start_cyclictest(rate, seconds, rt):
    interval = int(round(1e6 / rate))
    loops = int(rate * seconds)
    cmd = ["cyclictest", "-m", "-q", "-i", str(interval), "-l", str(loops), "-h", "20000"]
    if rt:
        cmd += ["-p", "80"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def finish_cyclictest(proc):
    out, _ = proc.communicate()
    counts, maximum = {}, None
    for line in out.splitlines():
        m = re.match(r"^(\d+)\s+(\d+)\s*$", line)
        if m and int(m.group(2)) > 0:
            counts[int(m.group(1))] = int(m.group(2))
        m = re.match(r"^# Max Latencies:\s+(\d+)", line)
        if m:
            maximum = float(m.group(1))
    return {
        "p50": percentile_from_histogram(counts, 0.50),
        "p99": percentile_from_histogram(counts, 0.99),
        "max": maximum if maximum is not None else float(max(counts)),
    }


def run_achilles(binary, config, rate, seconds, rt):
    cmd = [binary, "run", config, "--rate", str(rate), "--duration", str(seconds),
           "--status-period", "0", "--no-zmq"]
    if rt:
        cmd += ["--rt"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("achilles run failed:\n" + proc.stderr)
    line = [l for l in proc.stderr.splitlines() if "whole run" in l]
    if not line:
        sys.exit("no 'whole run' line in:\n" + proc.stderr)
    m = re.search(r"late p50/p99/max (\d+)/(\d+)/(\d+) us", line[-1])
    c = re.search(r"compute p50/p99 ([\d.]+)/([\d.]+) us", line[-1])
    o = re.search(r"overruns (\d+) skipped (\d+)", line[-1])
    return {
        "p50": float(m.group(1)), "p99": float(m.group(2)), "max": float(m.group(3)),
        "compute_p50": float(c.group(1)), "compute_p99": float(c.group(2)),
        "overruns": int(o.group(1)), "skipped": int(o.group(2)), "cmd": " ".join(cmd),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "tools", "achilles"),
                    help="the achilles binary (default: build/tools/achilles)")
    ap.add_argument("--config", default=os.path.join(ROOT, "configs", "club_arm.json"))
    ap.add_argument("--rates", default="1000,10000", help="comma-separated rates in Hz")
    ap.add_argument("--seconds", type=float, default=5.0, help="length of each run")
    ap.add_argument("--rt", action="store_true",
                    help="both with real-time priority (cyclictest -p 80, achilles --rt)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds per rate (median reported)")
    args = ap.parse_args()
    if not os.path.exists(args.binary):
        sys.exit(f"{args.binary}: not found (build first, or pass --binary)")
    print(f"# loop lateness, {args.seconds:g} s per run, "
          f"{'SCHED_FIFO 80' if args.rt else 'normal priority'}, {os.cpu_count()} CPUs\n")
    print("| rate Hz | cyclictest p50/p99/max us | achilles p50/p99/max us | p99 ratio "
          "| achilles compute p50/p99 us | overruns / skipped |")
    print("|---:|---|---|---:|---|---|")
    medians = []
    for rate in [float(r) for r in args.rates.split(",")]:
        ratios = []
        for _ in range(args.rounds):
            proc = start_cyclictest(rate, args.seconds, args.rt)
            ach = run_achilles(args.binary, args.config, rate, args.seconds, args.rt)
            cyc = finish_cyclictest(proc)
            ratio = ach["p99"] / cyc["p99"] if cyc["p99"] > 0 else float("inf")
            ratios.append(ratio)
            print(f"| {rate:g} | {cyc['p50']:.0f}/{cyc['p99']:.0f}/{cyc['max']:.0f} "
                  f"| {ach['p50']:.0f}/{ach['p99']:.0f}/{ach['max']:.0f} | {ratio:.2f} "
                  f"| {ach['compute_p50']:.1f}/{ach['compute_p99']:.1f} "
                  f"| {ach['overruns']} / {ach['skipped']} |")
            sys.stdout.flush()
        medians.append((rate, sorted(ratios)[len(ratios) // 2]))
    print()
    for rate, median in medians:
        print(f"median p99 ratio at {rate:g} Hz: {median:.2f}")
    print("\nTarget: achilles p99 <= 1.5 x cyclictest p99 (issue 4). Lateness is the wake-up "
          "time after the absolute deadline, measured the same way by both.")


if __name__ == "__main__":
    main()
