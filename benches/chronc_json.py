"""One fresh `chronc ... --json` process, timed: what the benchmark scripts
(benches/peers/compare_binaries.py, benches/parallel/scaling.py) share."""

import json
import resource
import subprocess
import time


def timed_json_run(argv, env=None):
    """Runs argv (a `chronc run ... --json` command line) to completion and
    returns its JSON report, the process's wall seconds and its CPU seconds
    (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(out), wall, cpu
