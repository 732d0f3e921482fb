#!/usr/bin/env python3
"""The parallel runtime's scaling workload and its benchmark matrix.

The workload is the C++ Chronon simulator's (../shared/reference,
"Epoch-free placement and scaling"), as `.chr`: P pairs, each a producer and
a consumer joined by a depth-16, two-stage CDC FIFO; D domains, domain d at
250 MHz << (d mod 4) with a phase of 37*d ps; pair p's producer in domain
(2p) mod D, its consumer in (2p+1) mod D; `work` iterations of a 64-bit LCG
per tick; `skew` multiplies pair 0's work.

    benches/parallel/scaling.py design P D WORK SKEW > s.chr   # one design
    benches/parallel/scaling.py run [--reps N] [--threads 1,2,auto] [--rows R] [--print] [--record]
    benches/parallel/scaling.py threshold [--reps N]

`--print` adds a `print` of every item each consumer takes (to standard
error under --json): the lines of every thread count must equal the
serial run's, byte for byte.

`--record` records every run with every writer (`--trace`, `--perfetto`
with `--trace-ticks`, `--vcd`, `--counters`) into a fresh folder: every
file of every thread count must equal the serial run's, byte for byte
(compared by SHA-256).

`threshold` measures what `auto`'s thresholds rest on (compiler/src/parallel/
plan.rs, MIN_WORK_NODES and the rule for runs without a limit): fresh
processes of examples/independent_models.chr at three `--until` lengths and
of a tiny design stopped by `finish`, serial against 2 workers, median
process wall time of 15 runs each (interleaved).

`run` builds nothing: it runs target/release/chronc (build it first) as
fresh processes, interleaving the thread counts within each repetition,
and prints per row and thread count the run's wall time (the report's
`wall_seconds`: the run loop, without compiling), the process's wall and
CPU time, as median [min, max], with the ratio to serial. Every run's
state digest and instant count must equal the serial run's.
"""
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from chronc_json import timed_json_run  # noqa: E402

ROWS = [
    # pairs, domains, work, skew, --until
    (4, 2, 0, 1, "2ms"),
    (32, 2, 0, 1, "200us"),
    (32, 8, 0, 1, "200us"),
    (32, 32, 0, 1, "200us"),
    (4, 2, 4000, 1, "20us"),
    (16, 8, 4000, 1, "10us"),
    (16, 8, 4000, 16, "5us"),
]


def design(pairs, domains, work, skew, prints=False):
    freqs = ["250 MHz", "500 MHz", "1 GHz", "2 GHz"]
    clocks = ", ".join(
        f"{freqs[d % 4]} phase {37 * d} ps" if d else freqs[0] for d in range(domains)
    )
    # A loop unrolls to at most 4,096 iterations, so pair 0's skewed work
    # is `skew` loops one after the other, in units of its own.
    def unit(kind, name, loops):
        port = "out tx: u64;" if kind == "p" else "in rx: u64 cdc;"
        body = [f"unit {name}<WORK: u32 = 0> {{", f"    {port}"]
        body += ["    reg seq: u64 = 0;"] if kind == "p" else ["    reg sum: u64 = 0;"]
        body += ["    reg x: u64 = 1;", "    tick {", "        let h: u64 = x;"]
        body += [
            "        for k in 0..WORK { h = h * 6364136223846793005 + 1442695040888963407; }"
        ] * loops
        body.append("        x <= h;")
        if kind == "p":
            body.append("        if tx.try_send(seq ^ h) { seq <= seq + 1; }")
        else:
            take = "sum <= sum + v;"
            if prints:
                take += ' print("took {:#x} sum {}", v, sum + v);'
            body += [f"        if let Some(v) = rx.take() {{ {take} }}", "        rx.request();"]
        return body + ["    }", "}", ""]

    out = [
        f"// Scaling workload: {pairs} pairs, {domains} domains, work {work}, skew {skew}",
        "// (benches/parallel/scaling.py generates it).",
        f"clock dom[{domains}] = [{clocks}];",
        "",
    ]
    out += unit("p", "Producer", 1) + unit("c", "Consumer", 1)
    if skew > 1:
        out += unit("p", "HeavyProducer", skew) + unit("c", "HeavyConsumer", skew)
    out.append("system Scaling {")
    for p in range(pairs):
        heavy = "Heavy" if p == 0 and skew > 1 else ""
        out.append(f"    inst p{p}: {heavy}Producer<WORK = {work}> on dom[{(2 * p) % domains}];")
        out.append(f"    inst c{p}: {heavy}Consumer<WORK = {work}> on dom[{(2 * p + 1) % domains}];")
        out.append(f"    cdc p{p}.tx -> c{p}.rx depth 16 sync 2;")
    out.append("}")
    return "\n".join(out) + "\n"


def run_once(chronc, path, until, threads, printed, record=None):
    args = [chronc, "run", path, "--until", until, "--threads", threads, "--json", "-q"]
    if record is not None:
        args += [
            "--trace", os.path.join(record, "trace"),
            "--perfetto", os.path.join(record, "run.pftrace"), "--trace-ticks",
            "--vcd", os.path.join(record, "run.vcd"),
            "--counters", os.path.join(record, "counters.csv"),
        ]
    return timed_json_run(args, stderr=printed)


def digests(folder):
    """Every file under `folder`: relative path -> SHA-256; removes them."""
    out = {}
    for dirpath, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, folder)] = hashlib.sha256(f.read()).hexdigest()
            os.remove(path)
    return out


def fmt(xs, scale=1e3):
    xs = sorted(x * scale for x in xs)
    return f"{statistics.median(xs):.1f} [{xs[0]:.1f}, {xs[-1]:.1f}]"


THRESHOLD_CASES = [
    ("examples/independent_models.chr", ["--until", "100us"]),
    ("examples/independent_models.chr", ["--until", "500us"]),
    ("examples/independent_models.chr", ["--until", "2ms"]),
    ("tests/user_designs/fault_and_finish.chr", []),
]


def threshold(chronc, root, reps):
    print("| design | args | serial ms | 2 workers ms | ratio |")
    print("|---|---|---|---|---|")
    for path, args in THRESHOLD_CASES:
        times = {"1": [], "2": []}
        for _ in range(reps):
            for t in times:
                start = time.perf_counter()
                subprocess.run(
                    [chronc, "run", os.path.join(root, path), *args, "--threads", t, "-q"],
                    capture_output=True,
                )
                times[t].append(time.perf_counter() - start)
        serial, two = (statistics.median(times[t]) * 1e3 for t in ("1", "2"))
        print(f"| {path} | {' '.join(args)} | {serial:.2f} | {two:.2f} | {serial / two:.2f}x |")


def main(argv):
    if len(argv) >= 1 and argv[0] == "design":
        p, d, w, s = (int(x) for x in argv[1:5])
        sys.stdout.write(design(p, d, w, s))
        return 0
    reps, threads, rows = 5, ["1", "2", "auto"], range(len(ROWS))
    prints = "--print" in argv
    records = "--record" in argv
    args = iter(a for a in argv[1:] if a not in ("--print", "--record"))
    for a in args:
        if a == "--reps":
            reps = int(next(args))
        elif a == "--threads":
            threads = next(args).split(",")
        elif a == "--rows":
            rows = [int(r) for r in next(args).split(",")]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    chronc = os.path.join(root, "target", "release", "chronc")
    if argv and argv[0] == "threshold":
        threshold(chronc, root, reps if "--reps" in argv else 15)
        return 0
    print("| pairs/domains/work/skew | --until | threads | workers | run ms | ratio | process ms | ratio | CPU ms | plan ms |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for r in rows:
            p, d, w, s, until = ROWS[r]
            path = os.path.join(tmp, f"scaling_{p}_{d}_{w}_{s}.chr")
            with open(path, "w") as f:
                f.write(design(p, d, w, s, prints))
            results = {t: [] for t in threads}
            printed = {t: [] for t in threads}
            recorded = {t: [] for t in threads}
            record = os.path.join(tmp, "record") if records else None
            for _ in range(reps):
                for t in threads:
                    results[t].append(run_once(chronc, path, until, t, printed[t], record))
                    if record:
                        recorded[t].append(digests(record))
            if records:
                files = recorded[threads[0]][0]
                assert len(files) >= 5, (r, files)
                for t in threads:
                    assert all(x == files for x in recorded[t]), (r, t, "recordings differ")
            lines = printed[threads[0]][0]
            assert not prints or lines.count("\n") > 0, (r, "nothing printed")
            for t in threads:
                assert all(x == lines for x in printed[t]), (r, t, "printed lines differ")
            serial = results[threads[0]]
            digest = serial[0][0]["state_digest"]
            base = statistics.median(x[0]["wall_seconds"] for x in serial)
            base_process = statistics.median(x[1] for x in serial)
            for t in threads:
                for rep, _, _ in results[t]:
                    assert rep["state_digest"] == digest, (r, t, "digest differs")
                    assert rep["instants"] == serial[0][0]["instants"], (r, t)
                runs = [x[0]["wall_seconds"] for x in results[t]]
                workers = results[t][0][0]["parallel"]["workers"]
                plan = [x[0]["parallel"]["plan_ms"] for x in results[t]]
                print(
                    f"| {p}/{d}/{w}/{s} | {until} | {t} | {workers} | {fmt(runs)} | "
                    f"{base / statistics.median(runs):.2f}x | {fmt([x[1] for x in results[t]])} | "
                    f"{base_process / statistics.median(x[1] for x in results[t]):.2f}x | "
                    f"{fmt([x[2] for x in results[t]])} | {statistics.median(plan):.3f} |",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
