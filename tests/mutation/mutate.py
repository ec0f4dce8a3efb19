#!/usr/bin/python3
"""tests/mutation/mutate.py: plants realistic single-point bugs, one at a time, in a scratch copy of
the tree and runs the tests that should catch each; prints killed / survived / stale per mutation
and a score per module. Not part of .ci/run (minutes, not seconds): run it by hand before and
after a refactor, and keep the score in docs/testing.md.

A mutation (tests/mutation/mutations.txt) names a file, an exact snippet of its text and the
replacement: anchored on text, not on line numbers, so it survives edits elsewhere in the file.
A snippet that is no longer found exactly once is reported as STALE (the code moved on: update the
mutation), never counted as killed or survived.

How it runs, bounded:
  1. the source tree (git ls-files: tracked and untracked, not ignored) is mirrored into
     WORK/src; only files whose bytes differ are rewritten, so WORK/build stays incremental
     across runs (the first run builds everything once; no ccache needed);
  2. the baseline: the tests the selected mutations name must pass on the unmutated copy, or
     the run stops (a red test kills every mutation and proves nothing);
  3. per mutation: the snippet replaced in WORK/src, an incremental build of only the named
     test targets, ctest on those tests (or, with --full, on the whole suite), the file put
     back.
Exit status: 0 when no mutation survived, 1 when some survived, 2 on a usage, build or baseline
error. Stale mutations do not change the status; they are listed.

Run from anywhere:  /usr/bin/python3 tests/mutation/mutate.py [--module sensors] [--full] ...
"""
import argparse
import os
import re
import resource
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_LIST = os.path.join(ROOT, "tests", "mutation", "mutations.txt")
KEYS = ("id", "module", "file", "tests", "why", "find", "replace")


# --- the list ------------------------------------------------------------------------------------

def unescape(value):
    """\\n in a snippet is a newline, \\\\ a backslash (snippets otherwise verbatim)"""
    return re.sub(r"\\(n|\\)", lambda m: "\n" if m.group(1) == "n" else "\\", value)


def parse_list(path):
    """blocks of `key: value` lines separated by blank lines; # starts a comment line"""
    mutations, current, errors = [], {}, []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for number, line in enumerate(lines + [""], 1):
        if line.startswith("#"):
            continue
        if not line.strip():
            if current:
                missing = [k for k in KEYS if k not in current]
                if missing:
                    errors.append(f"{path}:{current['_line']}: mutation "
                                  f"{current.get('id', '?')} lacks {', '.join(missing)}")
                else:
                    mutations.append(current)
                current = {}
            continue
        key, sep, value = line.partition(": ")
        if not sep or key not in KEYS:
            errors.append(f"{path}:{number}: expected one of {', '.join(KEYS)} then ': ', "
                          f"got {line[:60]!r}")
            continue
        current.setdefault("_line", number)
        current[key] = unescape(value) if key in ("find", "replace") else value.strip()
    ids = [m["id"] for m in mutations]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        errors.append(f"{path}: id {dup} is used twice")
    for m in mutations:
        if m["find"] == m["replace"]:
            errors.append(f"{path}:{m['_line']}: {m['id']}: find and replace are the same")
        m["tests"] = m["tests"].split()
    return mutations, errors


# --- the scratch copy ----------------------------------------------------------------------------

def source_files():
    out = subprocess.run(["git", "-C", ROOT, "ls-files", "-co", "--exclude-standard", "-z"],
                         capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0")
            if p and not p.startswith("build") and os.path.isfile(os.path.join(ROOT, p))]


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def write_bytes(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def mirror(src_dir):
    """WORK/src := the tree, rewriting only what differs (mtimes of the rest kept)"""
    wanted, changed = set(source_files()), 0
    for rel in wanted:
        data = read_bytes(os.path.join(ROOT, rel))
        dst = os.path.join(src_dir, rel)
        if not os.path.exists(dst) or read_bytes(dst) != data:
            write_bytes(dst, data)
            os.chmod(dst, os.stat(os.path.join(ROOT, rel)).st_mode & 0o777)
            changed += 1
    removed = 0
    for base, _dirs, files in os.walk(src_dir):
        for name in files:
            rel = os.path.relpath(os.path.join(base, name), src_dir)
            if rel not in wanted:
                os.remove(os.path.join(base, name))
                removed += 1
    return changed, removed


def run(cmd, log, timeout=None):
    """runs cmd, appends its output to the log file; returns (exit code, seconds)"""
    t0 = time.monotonic()
    with open(log, "a") as f:
        f.write(f"\n$ {' '.join(cmd)}\n")
        f.flush()
        try:
            rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            f.write(f"(timed out after {timeout} s)\n")
            rc = 124
    return rc, time.monotonic() - t0


def build_targets(build_dir, log):
    """the build system's target names (to build only the tests a mutation names)"""
    out = subprocess.run(["cmake", "--build", build_dir, "--target", "help"],
                         capture_output=True, text=True).stdout
    return {m.group(1) for m in re.finditer(r"^\.\.\. (\S+)", out, re.M)}


def build(args, build_dir, tests, targets, log):
    """only the named tests' targets; everything when one of them is a script or with --full"""
    cmd = ["cmake", "--build", build_dir, "-j", str(args.jobs)]
    if not args.full and all(t in targets for t in tests):
        for t in tests:
            cmd += ["--target", t]
    return run(cmd, log)


def ctest(args, build_dir, tests, log, stop=True):
    """stop: end at the first failure (a mutant is killed by one)"""
    cmd = ["ctest", "--test-dir", build_dir, "--timeout", str(args.timeout), "-j",
           str(args.jobs), "--output-on-failure"] + (["--stop-on-failure"] if stop else [])
    if not args.full:
        cmd += ["-R", "^(" + "|".join(re.escape(t) for t in tests) + ")$"]
    return run(cmd, log, timeout=args.timeout * (1 if not args.full else 4) + 60)


def ctest_missing(build_dir, tests):
    """the names that select no ctest test (a misspelt or renamed one). ctest -N lists, besides
    the named tests, the fixtures they require (view_npm_setup for the view tests), so the
    listing is compared by name, not counted."""
    out = subprocess.run(["ctest", "--test-dir", build_dir, "-N", "-R",
                          "^(" + "|".join(re.escape(t) for t in tests) + ")$"],
                         capture_output=True, text=True).stdout
    listed = set(re.findall(r"Test +#\d+: (\S+)", out))
    return [t for t in tests if t not in listed]


# --- one mutation --------------------------------------------------------------------------------

def pick_file(m, root):
    """`file` may name several paths (a file that moved between rooms): the first that exists"""
    for rel in m["file"].split():
        if os.path.exists(os.path.join(root, rel)):
            return rel
    return None


def mutate_one(args, m, src_dir, build_dir, targets, log):
    rel = pick_file(m, src_dir)
    if rel is None:
        return "stale", f"{m['file']}: no such file", 0.0
    path = os.path.join(src_dir, rel)
    original = read_bytes(path)
    text = original.decode("utf-8")
    found = text.count(m["find"])
    if found != 1:
        return "stale", f"snippet found {found} times in {rel} (expected once)", 0.0
    write_bytes(path, text.replace(m["find"], m["replace"]).encode("utf-8"))
    try:
        with open(log, "a") as f:
            f.write(f"\n===== {m['id']}: {rel}\n--- {m['find']}\n+++ {m['replace']}\n")
        rc, tb = build(args, build_dir, m["tests"], targets, log)
        if rc != 0:
            return "error", "the mutant does not build (fix the mutation)", tb
        rc, tt = ctest(args, build_dir, m["tests"], log)
        if rc != 0:
            return "killed", "by " + (", ".join(failed_tests(log)) or "?"), tb + tt
        return "survived", "", tb + tt
    finally:
        write_bytes(path, original)


# --- the run -------------------------------------------------------------------------------------

def baseline(args, build_dir, tests, log):
    """the named tests (or the suite) on the unmutated copy; a failure is re-run twice, as the
    timing tests can fail on a busy machine. Returns the tests that stay red (their mutations
    are not run: a red test would kill them and prove nothing), or None without ctest."""
    print(f"baseline: {'the whole suite' if args.full else ' '.join(tests)} ...", flush=True)
    rc, tt = ctest(args, build_dir, tests, log, stop=False)
    red = set(failed_tests(log)) if rc != 0 else set()
    for _ in range(2):
        if not red:
            break
        print(f"  red: {' '.join(sorted(red))}; running them again", flush=True)
        sub = argparse.Namespace(**{**vars(args), "full": False})
        rc, _t = ctest(sub, build_dir, sorted(red), log, stop=False)
        red = set(failed_tests(log)) if rc != 0 else set()
    if rc != 0 and not red:
        print(f"baseline: ctest failed without naming a test; see {log}", file=sys.stderr)
        return None
    print(f"  {'passed' if not red else 'RED: ' + ' '.join(sorted(red))} ({tt:.0f} s)", flush=True)
    return red


def select(mutations, args):
    out = []
    for m in mutations:
        if args.module and m["module"] not in args.module:
            continue
        if args.only and not any(re.search(p, m["id"]) for p in args.only):
            continue
        out.append(m)
    return out


def score_row(label, rs):
    k = sum(1 for r in rs if r[1] == "killed")
    s = sum(1 for r in rs if r[1] == "survived")
    score = f"{100.0 * k / (k + s):.0f} %" if k + s else "-"
    return f"| {label} | {len(rs)} | {k} | {s} | {len(rs) - k - s} | {score} |"


def score_table(results):
    """markdown, as docs/testing.md keeps it; the score is killed / (killed + survived)"""
    lines = ["| module | planted | killed | survived | stale, red or not building | score |",
             "|---|---:|---:|---:|---:|---:|"]
    for mod in sorted({r[0]["module"] for r in results}):
        lines.append(score_row(mod, [r for r in results if r[0]["module"] == mod]))
    lines.append(score_row("**all**", results))
    return "\n".join(lines)


def failed_tests(log):
    """the tests ctest reported failing in the last run of the log"""
    text = open(log).read()
    tail = text[text.rfind("\n$ ctest"):]
    failed = re.findall(r"\d+ - (\S+) \((?:Failed|Timeout|SEGFAULT|Subprocess aborted|"
                        r"Exception|Child aborted|[A-Za-z ]+)\)", tail)
    # a test that reported itself skipped (exit 77) did not fail: it is listed as "(Skipped)"
    skipped = re.findall(r"\d+ - (\S+) \(Skipped\)", tail)
    return sorted(set(failed) - set(skipped))


def main():
    ap = argparse.ArgumentParser(
        description="Plant each mutation of the list in a scratch copy of the tree, run the tests "
                    "that should catch it, print killed / survived / stale and a score per module.",
        epilog="Example: /usr/bin/python3 tests/mutation/mutate.py --module sensors --module fit")
    ap.add_argument("--list", default=DEFAULT_LIST, help="the mutation list (default: %(default)s)")
    ap.add_argument("--work", default="/tmp/achilles-mutation",
                    help="scratch directory: WORK/src and WORK/build, kept between runs so the "
                         "next run builds incrementally (default: %(default)s)")
    ap.add_argument("--module", action="append",
                    help="only mutations of this module (repeatable): sim, sensors, fit, runtime, "
                         "zmq, serial, replay, log")
    ap.add_argument("--only", action="append", metavar="REGEX",
                    help="only mutations whose id matches (repeatable)")
    ap.add_argument("--full", action="store_true",
                    help="run the whole suite against every mutant instead of its named tests "
                         "(slow: about the suite's time per mutation)")
    ap.add_argument("--jobs", type=int, default=2, help="build and ctest parallelism (default 2)")
    ap.add_argument("--timeout", type=int, default=180,
                    help="ctest timeout per test, s (default %(default)s): a mutant that hangs "
                         "counts as killed, but the test should have failed an assertion instead")
    ap.add_argument("--budget", type=float, default=0,
                    help="stop starting mutations after this many minutes (0: no limit)")
    ap.add_argument("--check", action="store_true",
                    help="only parse the list and report stale snippets; build and run nothing")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the baseline run (when the same tree just passed it)")
    args = ap.parse_args()

    mutations, errors = parse_list(args.list)
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        return 2
    chosen = select(mutations, args)
    if not chosen:
        print("no mutation selected", file=sys.stderr)
        return 2

    if args.check:
        stale = 0
        for m in chosen:
            rel = pick_file(m, ROOT)
            n = read_bytes(os.path.join(ROOT, rel)).decode().count(m["find"]) if rel else -1
            if n != 1:
                stale += 1
                print(f"STALE    {m['id']:<28} {m['file']}: snippet found "
                      f"{max(n, 0)} times" + ("" if n >= 0 else " (no such file)"))
        print(f"{len(chosen)} mutations, {stale} stale")
        return 0

    src_dir, build_dir = os.path.join(args.work, "src"), os.path.join(args.work, "build")
    log = os.path.join(args.work, "mutate.log")
    os.makedirs(args.work, exist_ok=True)
    open(log, "w").close()
    t_start = time.monotonic()
    changed, removed = mirror(src_dir)
    print(f"scratch copy {src_dir}: {changed} files written, {removed} removed; log {log}",
          flush=True)
    if not os.path.exists(os.path.join(build_dir, "CMakeCache.txt")):
        rc, _ = run(["cmake", "-S", src_dir, "-B", build_dir,
                     "-DCMAKE_BUILD_TYPE=RelWithDebInfo"], log)
        if rc != 0:
            print(f"configure failed: see {log}", file=sys.stderr)
            return 2
    all_tests = sorted({t for m in chosen for t in m["tests"]})
    print("building the unmutated copy ...", flush=True)
    rc, tb = run(["cmake", "--build", build_dir, "-j", str(args.jobs)], log)
    if rc != 0:
        print(f"the unmutated copy does not build: see {log}", file=sys.stderr)
        return 2
    print(f"  built in {tb:.0f} s", flush=True)
    targets = build_targets(build_dir, log)
    for m in chosen:
        missing = ctest_missing(build_dir, m["tests"])
        if missing:
            print(f"{m['id']}: {' '.join(missing)} are not ctest tests", file=sys.stderr)
            return 2
    red = set()
    if not args.no_baseline:
        red = baseline(args, build_dir, all_tests, log)
        if red is None:
            return 2

    results = []
    for i, m in enumerate(chosen, 1):
        if args.budget and time.monotonic() - t_start > 60 * args.budget:
            print(f"budget of {args.budget:g} min used: {len(chosen) - i + 1} mutations not run")
            break
        if red & set(m["tests"]):
            status, note, secs = "red", "baseline red: " + " ".join(sorted(red & set(m["tests"]))), 0.0
        else:
            status, note, secs = mutate_one(args, m, src_dir, build_dir, targets, log)
        results.append((m, status, note, secs))
        tag = {"killed": "killed  ", "survived": "SURVIVED", "stale": "STALE   ",
               "error": "ERROR   ", "red": "RED     "}[status]
        print(f"[{i:>2}/{len(chosen)}] {tag} {m['module']:<8} {m['id']:<28} {secs:5.0f} s  "
              f"{m['why']}" + (f" [{note}]" if note else ""), flush=True)
    # the mutated files are back; a last incremental build leaves WORK/build matching the tree
    run(["cmake", "--build", build_dir, "-j", str(args.jobs)], log)

    print()
    print(score_table(results))
    survived = [r for r in results if r[1] == "survived"]
    for m, status, note, _ in results:
        if status != "killed":
            print(f"{status}: {m['id']} ({m['file']}): {note or m['why']}")
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"\n{len(results)} mutations in {(time.monotonic() - t_start) / 60:.1f} min of wall "
          f"time, {(ru.ru_utime + ru.ru_stime) / 60:.1f} min of CPU time "
          f"({'whole suite' if args.full else 'named tests'} per mutant)")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
