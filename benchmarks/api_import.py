"""What ``import autonesy`` costs, beside what touching a heavy name costs: each line a fresh interpreter.

    python benchmarks/api_import.py [--runs 5]

Printed per snippet: the minimum wall and CPU time (user + system of the child) over the runs, the
modules loaded, which heavy libraries among them, and the ratio of its minimum CPU time to a bare
``python -c pass``. The runs alternate snippet by snippet, so a change of the machine's load hits all.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

HEAVY = ("torch", "langgraph", "langchain_core", "langchain_openai", "ray", "pysdd", "pysat", "pydantic")
SNIPPETS = {
    "python -c pass": "pass",
    "import autonesy": "import autonesy",
    "autonesy.load_task": "import autonesy; autonesy.load_task('fashion')",
    "autonesy.score": "import autonesy; autonesy.score",
    "autonesy.SemanticLoss": "import autonesy; autonesy.SemanticLoss",
    "autonesy.formalize": "import autonesy; autonesy.formalize",
}
PROBE = "import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"


def run_once(code: str) -> tuple[float, float, list[str]]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PROBE.format(code=code)], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    walls: dict[str, list[float]] = {name: [] for name in SNIPPETS}
    cpus: dict[str, list[float]] = {name: [] for name in SNIPPETS}
    modules: dict[str, list[str]] = {}
    for _ in range(runs):
        for name, code in SNIPPETS.items():
            wall, cpu, loaded = run_once(code)
            walls[name].append(wall)
            cpus[name].append(cpu)
            modules[name] = loaded
    base = min(cpus["python -c pass"])
    print("| snippet | min wall s | min CPU s | CPU / bare python | modules | heavy libraries loaded |")
    print("|---|---:|---:|---:|---:|---|")
    for name in SNIPPETS:
        roots = {m.split(".")[0] for m in modules[name]}
        heavy = ", ".join(sorted(roots & set(HEAVY))) or "none"
        print(
            f"| {name} | {min(walls[name]):.3f} | {min(cpus[name]):.3f} | {min(cpus[name]) / base:.1f} | "
            f"{len(modules[name])} | {heavy} |"
        )


if __name__ == "__main__":
    main()
