#!/usr/bin/env python3
"""Side-by-side speed of chronc builds (or settings) on the peer designs.

Usage: compare_binaries.py [--runs N] [--only NAME,...] LABEL=COMMAND ...

Each COMMAND is a chronc binary path, optionally prefixed with environment
assignments (`CHRONON_NO_IR_OPT=1 /tmp/chronc`). Runs alternate between the
variants (A B C A B C ...) so that load changes on a noisy machine hit them
alike. Per design and variant it prints the median [min, max] of the run
loop's Medges/s (chronc's own `edges_per_second`) and of Mcycles per second
of process CPU time (user + system, compile included), and checks that
every variant reports the same counters. `--only pipe256` (names from
DESIGNS and EXTRA, comma-separated) runs only those designs.
"""

import os
import shlex
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from chronc_json import timed_json_run  # noqa: E402

DESIGNS = [
    ("pipe16", ["benches/peers/pipeline.chr", "-p", "N=16"], 20_000_000),
    ("pipe256", ["benches/peers/pipeline.chr", "-p", "N=256"], 2_000_000),
    ("fifo", ["benches/peers/async_fifo.chr"], 8_000_000),
]

# Run only when named in --only: pipelines around the vectorizer's
# threshold (8 groups of four 32-bit stages).
EXTRA = [
    ("pipe32", ["benches/peers/pipeline.chr", "-p", "N=32"], 10_000_000),
    ("pipe64", ["benches/peers/pipeline.chr", "-p", "N=64"], 6_000_000),
]


def parse_variant(arg):
    label, _, command = arg.partition("=")
    words = shlex.split(command)
    env = dict(os.environ)
    while words and "=" in words[0] and not words[0].startswith("/"):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    if not words:
        sys.exit(f"no binary in {arg!r}")
    return label, words[0], env


def run(binary, env, args, cycles):
    report, wall, cpu = timed_json_run(
        [binary, "run", *args, "--cycles", str(cycles), "--json", "-q"], env=env
    )
    counters = [(c["unit"], c["name"], c["value"]) for c in report["counters"]]
    return report["edges_per_second"] / 1e6, cycles / cpu / 1e6, wall, counters


def summary(xs):
    return f"{statistics.median(xs):.2f} [{min(xs):.2f}, {max(xs):.2f}]"


def main():
    argv = sys.argv[1:]
    runs = 7
    only = None
    while argv[:1] in (["--runs"], ["--only"]):
        if argv[0] == "--runs":
            runs = int(argv[1])
        else:
            only = set(argv[1].split(","))
        argv = argv[2:]
    variants = [parse_variant(a) for a in argv]
    if not variants:
        sys.exit(__doc__)
    print(f"runs per variant: {runs}; load average {os.getloadavg()[0]:.2f}")
    print("| design | variant | run loop Medges/s | Mcycles per CPU s (process) | ratio to first |")
    print("|---|---|---|---|---|")
    for name, args, cycles in DESIGNS + EXTRA:
        if (name not in only) if only is not None else (name, args, cycles) in EXTRA:
            continue
        loop = {v[0]: [] for v in variants}
        cpu = {v[0]: [] for v in variants}
        seen = {}
        for _ in range(runs):
            for label, binary, env in variants:
                m, c, _, counters = run(binary, env, args, cycles)
                loop[label].append(m)
                cpu[label].append(c)
                seen.setdefault(str(counters), label)
        if len(seen) != 1:
            sys.exit(f"{name}: variants disagree on the counters: {seen}")
        base = statistics.median(loop[variants[0][0]])
        for label, _, _ in variants:
            ratio = statistics.median(loop[label]) / base
            print(f"| {name} | {label} | {summary(loop[label])} | {summary(cpu[label])} | {ratio:.2f} |")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
