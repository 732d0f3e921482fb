"""One fresh `chronc ... --json` process, timed: what the benchmark scripts
(benches/peers/compare_binaries.py, benches/parallel/scaling.py) share."""

import json
import resource
import subprocess
import time


def timed_json_run(argv, env=None, stderr=None):
    """Runs argv (a `chronc run ... --json` command line) to completion and
    returns its JSON report, the process's wall seconds and its CPU seconds
    (user + system). With `stderr` (a list), appends what the process wrote
    there (its `print` lines under --json)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if stderr is not None:
        stderr.append(done.stderr)
    return json.loads(done.stdout), wall, cpu
