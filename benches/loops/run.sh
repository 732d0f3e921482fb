#!/usr/bin/env bash
# The same 4,000-iteration loop unrolled (`for i in 0..4000` with
# `--exec reroll=off`), kept a loop by the compiler (the same source with
# rerolling on, the default) and written as a run-time loop (`for i in
# 0..4000 max 4000`), side by side: process wall time, CPU time and peak
# memory from source to the end of a run of one edge (compile-bound) and of
# CYCLES edges, ROUNDS interleaved rounds, medians with min and max.
# Usage: CHRONC=target/release/chronc bash benches/loops/run.sh
set -euo pipefail
cd "$(dirname "$0")"
export CHRONC=${CHRONC:-../../target/release/chronc}
exec python3 - "${ROUNDS:-7}" "${CYCLES:-20000}" <<'PY'
import os, statistics, subprocess, sys, time

rounds, cycles = int(sys.argv[1]), int(sys.argv[2])
chronc = os.environ["CHRONC"]
rows = {}
# form: (source, extra arguments)
forms = {
    "unrolled": ("unrolled.chr", ["--exec", "reroll=off"]),
    "rerolled": ("unrolled.chr", []),
    "runtime": ("runtime.chr", []),
}
for _ in range(rounds):
    for kind, (source, extra) in forms.items():
        for n in (1, cycles):
            t = time.perf_counter()
            p = subprocess.Popen([chronc, "run", source, "--cycles", str(n), "-q", *extra],
                                 stdout=subprocess.DEVNULL)
            _, status, use = os.wait4(p.pid, 0)
            wall = time.perf_counter() - t
            assert status == 0, f"{kind} exited {status}"
            cpu = use.ru_utime + use.ru_stime
            rows.setdefault((kind, n), []).append((wall, cpu, use.ru_maxrss / 1024))

def med(v):
    v = sorted(v)
    return f"{statistics.median(v) * 1e3:8.1f} [{v[0] * 1e3:.1f}, {v[-1] * 1e3:.1f}]"

print(f"{'form':9} {'edges':>6}  {'wall ms median [min, max]':>28}  {'CPU ms median [min, max]':>28}  peak MB")
for kind in forms:
    for n in (1, cycles):
        v = rows[(kind, n)]
        print(f"{kind:9} {n:>6}  {med([x[0] for x in v]):>28}  {med([x[1] for x in v]):>28}"
              f"  {statistics.median(x[2] for x in v):7.1f}")
for kind in forms:
    a = statistics.median(x[1] for x in rows[(kind, 1)])
    b = statistics.median(x[1] for x in rows[(kind, cycles)])
    print(f"{kind}: {(b - a) / cycles / 4000 * 1e9:.2f} ns CPU per iteration (run minus start-up)")
PY
