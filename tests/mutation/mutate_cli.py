#!/usr/bin/env python3
"""Mutation run through the CLI of every text parser (issue 44 acceptance).

For each parser target: a real seed input, N deterministic mutants of it (byte flips, deleted / duplicated /
swapped lines, numbers replaced by edge values, truncation, inserted junk), each run through the CLI binary
with a timeout. The promise: every mutant ends in exit 0 (accepted) or exit 2 (an input error); never a
signal, never exit 3 (internal error), never a timeout. Prints one table row per target and exits 1 when
the promise is broken (the offending mutants are kept under --keep DIR).

Usage: mutate_cli.py BUILD_DIR [--count 150] [--timeout 20] [--seed 44] [--only NAME] [--keep DIR]
Standard library only; runs one mutant at a time (the machine's cores are shared).
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REL = os.path.join(ROOT, "tests", "reliability")
SHARED_LOGS = "/work/shared/data/real-logs"

# Values that broke parsers before: zero, negatives, huge, tiny, not-a-number, overflow, empty.
EDGE_NUMBERS = ["0", "-1", "-0", "1e308", "1e-320", "nan", "inf", "-inf", "99999999999999999999", "2147483648",
                "1e9", "0.0000001", "", "1,5", "0x10", "3.", ".5", "1e", "+", "NaN", "1000000"]
JUNK = ["\x00", "\xef\xbb\xbf", "\"", "'", "#", ",", "|", ":", "=", "[", "]", "{", "}", "\t", "\r", "\\",
        "\xff", "...", " ", "\n", "None", "True", "null"]


def seeds():
    """(name, seed file, argv template with {in} and {tmp}). Seeds are files in the repository."""
    default = os.path.join(ROOT, "scenarios", "default.toml")
    small = os.path.join(ROOT, "scenarios", "examples", "qwen3-30b-p5en-2n.toml")
    return [
        ("scenario-toml", small, ["moetwin", "inspect", "{in}"]),
        ("scenario-predict", small, ["moetwin", "predict", "{in}", "--threads", "1"]),
        ("live-runs-csv", os.path.join(ROOT, "validate", "tests", "data", "two-campaigns.csv"),
         ["moetwin", "inspect", "--runs", "{in}"]),
        ("megatron-log", os.path.join(REL, "mlog-world.log"),
         ["moetwin", "import", "megatron-log", "{in}", "--scenario", default]),
        ("nccl-tests-log", os.path.join(REL, "nt-zerotime.log"),
         ["moetwin-calibrate", "import", "nccl-tests", "{in}", "--db", "{tmp}/db.h5"]),
        ("deepep-log", os.path.join(REL, "dp-negtime.log"),
         ["moetwin-calibrate", "import", "deepep", "{in}", "--db", "{tmp}/db.h5"]),
        ("kernel-bench-csv", os.path.join(REL, "bench-ranks1e6.csv"),
         ["moetwin", "dispatch", "--bench", "{in}"]),
        ("fitted-profile-toml", os.path.join(ROOT, "calibrate", "profiles", "fitted", "live-fit.toml"),
         ["moetwin", "predict", small, "--profile", "{in}", "--threads", "1"]),
        ("report-csv", None, ["moetwin", "report", "{in}", "--out", "{tmp}/r.html"]),
    ]


def repair_seeds(work, binaries):
    """Seeds that are bad inputs themselves are repaired first, so that mutants start from a valid file."""
    fixed = {}
    text = open(os.path.join(REL, "mlog-world.log"), encoding="utf-8").read()
    fixed["megatron-log"] = text.replace("world_size ...................................... 200",
                                         "world_size ...................................... 256")
    text = open(os.path.join(REL, "nt-zerotime.log"), encoding="utf-8").read()
    fixed["nccl-tests-log"] = re.sub(r"(?m)^(\s+\d+\s+\d+\s+\w+\s+\w+\s+-?\d+\s+)0\.00\b", r"\g<1>37.89", text)
    text = open(os.path.join(REL, "dp-negtime.log"), encoding="utf-8").read()
    fixed["deepep-log"] = text.replace("-544.47 us", "544.47 us")
    text = open(os.path.join(REL, "bench-ranks1e6.csv"), encoding="utf-8").read()
    fixed["kernel-bench-csv"] = text.replace(",1000000,1,", ",8,1,")
    # A predict CSV of the small scenario: the report's input.
    out = os.path.join(work, "predict.csv")
    small = os.path.join(ROOT, "scenarios", "examples", "qwen3-30b-p5en-2n.toml")
    subprocess.run([binaries["moetwin"], "predict", small, "--format", "csv", "--out", out], check=True,
                   stderr=subprocess.DEVNULL)
    fixed["report-csv"] = open(out, encoding="utf-8").read()
    return fixed


def mutate(text, rng):
    lines = text.split("\n")
    kind = rng.randrange(9)
    if kind == 0 and text:  # flip bytes
        b = bytearray(text.encode("utf-8", "surrogateescape"))
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(b))
            b[i] = rng.randrange(256)
        return bytes(b)
    if kind == 1 and len(lines) > 1:  # delete a line
        del lines[rng.randrange(len(lines))]
    elif kind == 2:  # duplicate a line (possibly far away)
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    elif kind == 3 and len(lines) > 1:  # swap two lines
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind in (4, 5, 6):  # replace numbers by edge values
        numbers = list(re.finditer(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", text))
        if numbers:
            out = text
            for m in sorted(rng.sample(numbers, min(len(numbers), rng.randint(1, 3))), key=lambda m: -m.start()):
                out = out[:m.start()] + rng.choice(EDGE_NUMBERS) + out[m.end():]
            return out.encode("utf-8", "surrogateescape")
    elif kind == 7:  # truncate
        return text.encode("utf-8", "surrogateescape")[:rng.randrange(len(text) + 1)]
    else:  # insert junk
        i = rng.randrange(len(text) + 1)
        text = text[:i] + "".join(rng.choice(JUNK) for _ in range(rng.randint(1, 5))) + text[i:]
        return text.encode("utf-8", "surrogateescape")
    return "\n".join(lines).encode("utf-8", "surrogateescape")


def run_target(name, seed_text, argv, binaries, count, timeout, rng, keep):
    stats = {"mutants": 0, "codes": {}, "signals": {}, "exit3": 0, "timeouts": 0, "seconds": 0.0}
    bad = []
    for k in range(count):
        tmp = tempfile.mkdtemp(prefix="mut-")
        try:
            suffix = os.path.splitext(argv_seed_name(name))[1]
            path = os.path.join(tmp, "input" + suffix)
            with open(path, "wb") as f:
                f.write(mutate(seed_text, rng))
            cmd = [binaries.get(a, a) for a in argv]
            cmd = [a.replace("{in}", path).replace("{tmp}", tmp) for a in cmd]
            start = time.monotonic()
            try:
                p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout,
                                   env=dict(os.environ, MOETWIN_CATALOG=os.path.join(ROOT, "catalog", "data")))
                code = p.returncode
            except subprocess.TimeoutExpired:
                code = None
            stats["seconds"] += time.monotonic() - start
            stats["mutants"] += 1
            if code is None:
                stats["timeouts"] += 1
                bad.append((k, "timeout", path))
            elif code < 0:
                sig = signal.Signals(-code).name
                stats["signals"][sig] = stats["signals"].get(sig, 0) + 1
                bad.append((k, sig, path))
            else:
                stats["codes"][code] = stats["codes"].get(code, 0) + 1
                if code == 3:
                    stats["exit3"] += 1
                    bad.append((k, "exit 3: " + p.stderr.decode("utf-8", "replace").strip()[:200], path))
                elif code not in (0, 2):
                    bad.append((k, "exit %d" % code, path))
            if keep and bad and bad[-1][0] == k:
                os.makedirs(keep, exist_ok=True)
                shutil.copy(path, os.path.join(keep, "%s-%03d%s" % (name, k, suffix)))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return stats, bad


def argv_seed_name(name):
    return {"scenario-toml": "x.toml", "scenario-predict": "x.toml", "fitted-profile-toml": "x.toml",
            "live-runs-csv": "x.csv", "kernel-bench-csv": "x.csv", "report-csv": "x.csv"}.get(name, "x.log")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build_dir")
    ap.add_argument("--count", type=int, default=150)
    ap.add_argument("--timeout", type=float, default=20)
    ap.add_argument("--seed", type=int, default=44)
    ap.add_argument("--only", action="append")
    ap.add_argument("--keep")
    args = ap.parse_args()
    binaries = {"moetwin": os.path.join(args.build_dir, "cli", "moetwin"),
                "moetwin-calibrate": os.path.join(args.build_dir, "calibrate", "moetwin-calibrate")}
    for b in binaries.values():
        if not os.access(b, os.X_OK):
            sys.exit("not built: " + b)
    work = tempfile.mkdtemp(prefix="mutate-cli-")
    fixed = repair_seeds(work, binaries)
    broken = False
    print("| parser | command | mutants | exit codes seen | signals | exit 3 | timeouts | seconds |")
    print("|---|---|---|---|---|---|---|---|")
    for name, seed_file, argv in seeds():
        if args.only and name not in args.only:
            continue
        text = fixed.get(name) or open(seed_file, encoding="utf-8").read()
        rng = random.Random("%d-%s" % (args.seed, name))
        stats, bad = run_target(name, text, argv, binaries, args.count, args.timeout, rng, args.keep)
        codes = ", ".join("%d: %d" % (c, n) for c, n in sorted(stats["codes"].items()))
        sigs = ", ".join("%s: %d" % kv for kv in sorted(stats["signals"].items())) or "0"
        command = " ".join(os.path.basename(a) if a.startswith(ROOT) else a for a in argv)
        print("| %s | `%s` | %d | %s | %s | %d | %d | %.0f |" % (name, command, stats["mutants"], codes, sigs,
                                                               stats["exit3"], stats["timeouts"],
                                                               stats["seconds"]))
        sys.stdout.flush()
        for k, what, _ in bad:
            broken = True
            print("  %s mutant %d: %s" % (name, k, what), file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
