"""The min-degree elimination order of SDD compilation before and after the heap: CPU seconds side by
side on growing sparse formulas, and whether both give the same order.

Before, each step scanned every remaining variable (O(n²) over the formula); DCP-Bench-Open's
age_changing (127,768 variables) outlasted the 300 s attempt limit in the order alone. The "before" side is
``tools/compile.py`` at a git revision (``--before-rev``, default 461361e, the last one with the
scan), loaded as a module; the "after" side is the installed one. Each formula is a random
3-CNF with ``2n`` clauses over ``n`` variables (seeded), sizes past ``MIN_FILL_MAX_VARS`` so that
min-degree is used. Times are ``time.thread_time()`` (per-thread CPU, so a loaded machine
matters less); sizes where the before side passes ``--limit`` seconds are not run on it again.

    python benchmarks/elimination_order.py [--sizes 1000,2000,4000,8000,16000] [--limit 120]
        [--before-rev REV] [--dimacs FILE]   # FILE: also time the after side on a real formula
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autonesy.tools.cnf import CNF, read_dimacs
from autonesy.tools.compile import elimination_order

ROOT = Path(__file__).resolve().parent.parent


def load_before(rev: str):
    """``tools/compile.py`` at ``rev`` as a module (its imports resolve to the installed package)."""
    source = subprocess.run(
        ["git", "show", f"{rev}:tools/compile.py"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / "compile_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("compile_before", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def random_3cnf(num_vars: int, seed: int) -> CNF:
    rng = random.Random(seed)
    clauses = tuple(
        tuple(v * rng.choice((1, -1)) for v in rng.sample(range(1, num_vars + 1), 3)) for _ in range(2 * num_vars)
    )
    return CNF(num_vars, clauses)


def cpu_seconds(order_of, cnf: CNF) -> tuple[float, list[int]]:
    start = time.thread_time()
    order = order_of(cnf)
    return time.thread_time() - start, order


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,2000,4000,8000,16000")
    parser.add_argument("--limit", type=float, default=120.0)
    parser.add_argument("--before-rev", default="461361e")
    parser.add_argument("--dimacs", type=Path)
    args = parser.parse_args()
    before = load_before(args.before_rev)
    print(f"{'variables':>9} {'clauses':>8} {'before s':>9} {'after s':>8} {'ratio':>8}  same order")
    before_ok = True
    for size in (int(s) for s in args.sizes.split(",")):
        cnf = random_3cnf(size, seed=size)
        after_s, after_order = cpu_seconds(elimination_order, cnf)
        if before_ok:
            before_s, before_order = cpu_seconds(before.elimination_order, cnf)
            before_ok = before_s <= args.limit
            ratio, same = f"{before_s / max(after_s, 1e-9):8.1f}", str(before_order == after_order)
            before_text = f"{before_s:9.2f}"
        else:
            before_text, ratio, same = f"{'-':>9}", f"{'-':>8}", "not run (before past --limit)"
        print(f"{size:>9} {len(cnf.clauses):>8} {before_text} {after_s:8.2f} {ratio}  {same}", flush=True)
    if args.dimacs:
        cnf = read_dimacs(args.dimacs)
        seconds, _ = cpu_seconds(elimination_order, cnf)
        print(f"{args.dimacs.name}: {cnf.num_vars} variables, {len(cnf.clauses)} clauses, after {seconds:.2f} s")


if __name__ == "__main__":
    sys.exit(main())
