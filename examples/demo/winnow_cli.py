"""The `winnow` CLI as the demo scenarios and the text benchmark run it (text_scenario.py,
image_scenario.py, bench/text_near_duplicates.py)."""

import resource
import subprocess
import sys
from pathlib import Path


def run_winnow(winnow, *arguments):
    """Runs the CLI; its stdout. Stops the scenario with winnow's message on failure."""
    command = [str(winnow), *map(str, arguments)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{Path(sys.argv[0]).stem}: {' '.join(command[:3])} failed ({done.returncode}):\n"
                 f"{done.stderr.strip()}")
    return done.stdout


def children_cpu_seconds():
    """User + system CPU time of the finished child processes so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
