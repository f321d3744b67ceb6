"""Where exact counting, SDD compilation, SPL and SL stop being practical: a ladder of growing constraints.

Families of constraints, each as a CNF over task variables 1..N (auxiliaries above N), written as DIMACS
task files with ``--out``:

- ``grid-path k``: the chosen edges of a k × k grid graph form one simple path from the top-left to
  the bottom-right cell (Warcraft's constraint; the SPL paper uses 12 × 12). Degree constraints (the
  ends touch one chosen edge, every other cell none or two) plus reachability: r(v, t) — cell v is
  reached from the start within t steps along chosen edges — defined by Tseitin clauses, and every
  cell with a chosen edge reached within k² − 1 steps, which rules out detached cycles.
- ``grid-path-overlap k``: what scoring counts when truth and answer write reachability differently:
  ``grid-path k`` (a cell's layers only from the step a neighbour can first reach it) conjoined with
  ``benchmarks/held_out_counts.py``'s ``grid_paths`` (every cell at every layer, the corners' degree as an
  exactly-one); the same paths, OEIS A007764.
- ``grid-cycles k``: the same paths encoded as the Warcraft task does, without auxiliaries: the
  degree constraints plus one clause per simple cycle of the grid (13, 213 and 9,349 cycles for
  k = 3, 4, 5; 1.2 million for k = 6, so the ladder stops at 5).
- ``sudoku n``: n × n Sudoku (boxes 2 × 2, 2 × 3, 3 × 3), one-hot cells: n³ variables, 729 for 9 × 9.
- ``exactly-k n``: exactly n/2 of n variables (sequential counter: auxiliaries).
- ``exactly-k-totalizer n``: the same constraint as pysat's totalizer writes it (a tree of unary adders).
- ``exactly-k-overlap n``: what scoring counts, the overlap of a ground truth and an answer in another
  encoding: ``exactly-k n`` (sequential counter) conjoined with ``exactly-k-totalizer n`` and the clause
  x1 ∨ x2 (C(n, n/2) − C(n − 2, n/2) models). Its two sides alone are the two rows above.
- ``exactly-k-sortnet-overlap n`` and ``exactly-k-cardnet-overlap n``: the same overlap with the answer's
  exactly-n/2 as PySAT's sorting network (``sortnetwrk``) or cardinality network (``cardnetwrk``) instead
  of the totalizer: comparators, whose wires are functions of the counts of two halves.
- ``at-most-k-mtotalizer-overlap n``: at most n/2 of n by a sequential counter conjoined with the same
  bound as PySAT's modulo totalizer (``mtotalizer``) and x1 ∨ x2 (the sum over i ≤ n/2 of C(n, i) −
  C(n − 2, i) models): the modulo totalizer's digits are no function of the counted variables, so
  structure recovery reads it only up to 16 variables, row by row.
- ``sudoku-overlap n``: ``sudoku n`` (pairwise at-most-ones) conjoined with the same Sudoku whose
  at-most-ones are sequential counters (the same count as ``sudoku n``).
- ``latin n``: n × n Latin squares, one variable per (row, column, symbol), no auxiliaries (symmetric
  under rows, columns, symbols and their roles: counted by orbits).
- ``golfers w``: 9 social golfers in 3 groups of 3 for w weeks, no two meeting twice, no auxiliaries
  (one clause per subset for the group sizes, per pair of weeks for a second meeting): 4 weeks are
  the affine plane of order 3, one orbit of 26,127,360 schedules.

For each size: variables, clauses, the model count and the seconds of each counting method
(``auto`` — enumeration, auxiliary elimination, unminimised SDDs, Ganak, minimised SDD, with
auxiliaries the frontier dynamic programme, without them the one-hot one, and counting by orbits — and each
route alone on the CNF as built: enumeration, Ganak, minimised SDD, ApproxMC), the SDD's size and compile time, and the CPU time of one SL and
one SPL training step relative to the bare backbone step (an MLP on random features, batch 128,
labels that satisfy the constraint). Every step has a time limit (``--limit``, 60 s): counting
through :mod:`autonesy.tools.counting`'s own limits, the NeSy step in a forked child that is killed.
A method that fails at one size is not tried at larger sizes of the same family.

    python benchmarks/scaling.py [--quick] [--limit 60] [--families grid-path,grid-cycles,sudoku,exactly-k]
                                 [--sizes exactly-k=50,100,200] [--methods auto,ganak] [--no-nesy]
                                 [--out DIR] [--json OUT] [--md benchmarks/results/scaling.md]

Each count also records its CPU seconds (this process's threads and its forked counters), and the
table the load average, so runs on a shared machine can be read.
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import resource
import time
from collections.abc import Callable
from pathlib import Path

from pysat.card import EncType

from autonesy.tasks.encoding import ClauseBuilder
from autonesy.tools.cnf import CNF, to_dimacs
from autonesy.tools.compile import CompilationBudgetExceeded
from autonesy.tools.counting import CounterFailed, CountTimedOut, EnumerationCapReached, count_models

COUNT_METHODS = ("auto", "enumeration", "ganak", "sdd", "approxmc")
ENUMERATION_CAP = 100_000
LADDERS = {
    "grid-path": (2, 3, 4, 5, 6, 8, 12),
    "grid-path-overlap": (4, 5, 6, 7, 8),
    "grid-cycles": (2, 3, 4, 5),
    "sudoku": (4, 6, 9),
    "exactly-k": (10, 20, 50, 100, 200),
    "exactly-k-totalizer": (20, 40, 60, 100),
    "exactly-k-overlap": (10, 20, 50, 100, 200),
    "exactly-k-sortnet-overlap": (10, 20, 50, 100, 200),
    "exactly-k-cardnet-overlap": (10, 20, 50, 100, 200),
    "at-most-k-mtotalizer-overlap": (10, 16, 20, 50),
    "sudoku-overlap": (4, 6, 9),
    "latin": (4, 5, 6),
    "golfers": (2, 3, 4),
}
QUICK = {
    "grid-path": (2, 3, 4),
    "grid-path-overlap": (3, 4),
    "grid-cycles": (2, 3, 4),
    "sudoku": (4, 6),
    "exactly-k": (10, 20, 50),
    "exactly-k-totalizer": (20, 40),
    "exactly-k-overlap": (10, 20, 50),
    "exactly-k-sortnet-overlap": (10, 20, 50),
    "exactly-k-cardnet-overlap": (10, 20, 50),
    "at-most-k-mtotalizer-overlap": (10, 16, 20),
    "sudoku-overlap": (4, 6),
    "latin": (4, 5),
    "golfers": (3, 4),
}


def _grid_degrees(k: int):
    """A k × k grid's cells and edges, and a builder holding its path degree constraints."""
    cells = list(itertools.product(range(k), range(k)))
    edges = [((r, c), (r, c + 1)) for r in range(k) for c in range(k - 1)] + [
        ((r, c), (r + 1, c)) for r in range(k - 1) for c in range(k)
    ]
    builder = ClauseBuilder(len(edges))
    incident = {cell: [] for cell in cells}
    for index, (a, b) in enumerate(edges, start=1):
        incident[a].append(index)
        incident[b].append(index)
    for cell, lits in incident.items():
        if cell in (cells[0], cells[-1]):
            builder.exactly_one(lits)
            continue
        for edge in lits:
            builder.implies([edge], [other for other in lits if other != edge])
        for triple in itertools.combinations(lits, 3):
            builder.add([-e for e in triple])
    return cells, edges, incident, builder


def grid_cycles(k: int) -> CNF:
    cells, edges, _, builder = _grid_degrees(k)
    index = {frozenset(edge): i for i, edge in enumerate(edges, start=1)}
    neighbours = {cell: [] for cell in cells}
    for a, b in edges:
        neighbours[a].append(b)
        neighbours[b].append(a)
    cycles: set[frozenset[int]] = set()

    def extend(origin, path) -> None:  # each cycle from its smallest cell, through larger cells only
        for nxt in neighbours[path[-1]]:
            if nxt == origin and len(path) >= 4:
                cycles.add(frozenset(index[frozenset(p)] for p in zip(path, path[1:] + [origin])))
            elif nxt > origin and nxt not in path:
                path.append(nxt)
                extend(origin, path)
                path.pop()

    for origin in cells:
        extend(origin, [origin])
    for cycle in sorted(cycles, key=sorted):
        builder.add([-e for e in sorted(cycle)])
    return builder.cnf()


def grid_path(k: int) -> CNF:
    cells, edges, incident, builder = _grid_degrees(k)
    start = cells[0]
    steps = k * k - 1
    previous = {cell: None for cell in cells}  # r(v, t - 1) as a literal; None = false (t = 0, v ≠ start)
    start_true = builder.new_var()
    builder.add([start_true])
    previous[start] = start_true
    for _ in range(steps):
        current = {}
        for cell in cells:
            ways = [previous[cell]] if previous[cell] is not None else []
            for index, (a, b) in enumerate(edges, start=1):
                other = b if a == cell else a if b == cell else None
                if other is not None and previous[other] is not None:
                    both = builder.new_var()
                    builder.iff_and(both, [previous[other], index])
                    ways.append(both)
            if ways:
                current[cell] = builder.new_var()
                builder.iff_or(current[cell], ways)
            else:
                current[cell] = None
        previous = current
    for cell, lits in incident.items():  # a cell on a chosen edge is reached from the start
        for edge in lits:
            builder.add([-edge] + ([previous[cell]] if previous[cell] is not None else []))
    return builder.cnf()


def sudoku(n: int, at_most_one: int = EncType.pairwise) -> CNF:
    box_rows, box_cols = {4: (2, 2), 6: (2, 3), 9: (3, 3)}[n]

    def var(r: int, c: int, d: int) -> int:
        return (r * n + c) * n + d + 1

    builder = ClauseBuilder(n**3)
    for r, c in itertools.product(range(n), range(n)):
        builder.exactly_one([var(r, c, d) for d in range(n)])
    units = (
        [[(r, c) for c in range(n)] for r in range(n)]
        + [[(r, c) for r in range(n)] for c in range(n)]
        + [
            [(br + r, bc + c) for r in range(box_rows) for c in range(box_cols)]
            for br in range(0, n, box_rows)
            for bc in range(0, n, box_cols)
        ]
    )
    for unit, d in itertools.product(units, range(n)):
        builder.at_most([var(r, c, d) for r, c in unit], 1, at_most_one)
    return builder.cnf()


def sudoku_overlap(n: int) -> CNF:
    return sudoku(n).conjoin(sudoku(n, EncType.seqcounter))


def exactly_half(n: int) -> CNF:
    return ClauseBuilder(n).exactly(list(range(1, n + 1)), n // 2).cnf()


def exactly_half_totalizer(n: int) -> CNF:
    return ClauseBuilder(n).exactly(list(range(1, n + 1)), n // 2, EncType.totalizer).cnf()


def exactly_half_overlap(n: int, encoding: int = EncType.totalizer) -> CNF:
    answer = ClauseBuilder(n).exactly(list(range(1, n + 1)), n // 2, encoding).cnf()
    return exactly_half(n).conjoin(answer.with_clauses(answer.clauses + ((1, 2),)))


def at_most_half_mtotalizer_overlap(n: int) -> CNF:
    truth = ClauseBuilder(n).at_most(list(range(1, n + 1)), n // 2).cnf()
    answer = ClauseBuilder(n).at_most(list(range(1, n + 1)), n // 2, EncType.mtotalizer).cnf()
    return truth.conjoin(answer.with_clauses(answer.clauses + ((1, 2),)))


def latin_squares(n: int) -> CNF:
    def var(r: int, c: int, s: int) -> int:
        return (r * n + c) * n + s + 1

    builder = ClauseBuilder(n**3)
    for a, b in itertools.product(range(n), repeat=2):  # a cell's symbol, a row's and a column's symbol places
        for line in (
            [var(a, b, s) for s in range(n)],
            [var(a, s, b) for s in range(n)],
            [var(s, a, b) for s in range(n)],
        ):
            builder.exactly_one(line)
    return builder.cnf()


def social_golfers(weeks: int, golfers: int = 9, groups: int = 3, size: int = 3) -> CNF:
    var = {key: i + 1 for i, key in enumerate(itertools.product(range(golfers), range(weeks), range(groups)))}
    builder = ClauseBuilder(len(var))
    for g, w in itertools.product(range(golfers), range(weeks)):
        builder.exactly_one([var[g, w, r] for r in range(groups)])
    for w, r in itertools.product(range(weeks), range(groups)):
        members = [var[g, w, r] for g in range(golfers)]
        for subset in itertools.combinations(members, size + 1):
            builder.add([-m for m in subset])
        for subset in itertools.combinations(members, golfers - size + 1):
            builder.add(list(subset))
    for (g1, g2), (w1, w2) in itertools.product(
        itertools.combinations(range(golfers), 2), itertools.combinations(range(weeks), 2)
    ):
        for r1, r2 in itertools.product(range(groups), repeat=2):
            builder.add([-var[g1, w1, r1], -var[g2, w1, r1], -var[g1, w2, r2], -var[g2, w2, r2]])
    return builder.cnf()


def grid_path_overlap(k: int) -> CNF:
    from held_out_counts import grid_paths  # it imports this module

    return grid_path(k).conjoin(grid_paths(k))


BUILDERS: dict[str, Callable[[int], CNF]] = {
    "grid-path": grid_path,
    "grid-path-overlap": grid_path_overlap,
    "grid-cycles": grid_cycles,
    "sudoku": sudoku,
    "exactly-k": exactly_half,
    "exactly-k-totalizer": exactly_half_totalizer,
    "exactly-k-overlap": exactly_half_overlap,
    "exactly-k-sortnet-overlap": lambda n: exactly_half_overlap(n, EncType.sortnetwrk),
    "exactly-k-cardnet-overlap": lambda n: exactly_half_overlap(n, EncType.cardnetwrk),
    "at-most-k-mtotalizer-overlap": at_most_half_mtotalizer_overlap,
    "sudoku-overlap": sudoku_overlap,
    "latin": latin_squares,
    "golfers": social_golfers,
}


def _cpu_now() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def count_row(cnf: CNF, methods: list[str], limit: float) -> dict:
    row: dict = {}
    for method in methods:
        start, cpu = time.perf_counter(), _cpu_now()
        try:
            if method == "enumeration":
                from autonesy.tools.counting import count_by_enumeration

                result = count_by_enumeration(cnf, ENUMERATION_CAP, limit)
            else:
                result = count_models(cnf, method, time_limit_s=limit)
        except EnumerationCapReached:
            row[method] = {"outcome": f"over {ENUMERATION_CAP:,} models", "seconds": time.perf_counter() - start}
        except (CountTimedOut, CompilationBudgetExceeded, CounterFailed) as error:
            outcome = "timed out" if isinstance(error, CountTimedOut) else type(error).__name__
            row[method] = {"outcome": outcome, "seconds": time.perf_counter() - start}
        else:
            row[method] = {
                "outcome": "ok",
                "seconds": result.seconds,
                "count": result.value,
                "exact": result.exact,
                "method": result.method,
                **{k: v for k, v in result.params.items() if k in ("sdd_size",)},
            }
        row[method]["cpu_s"] = _cpu_now() - cpu
    return row


def _nesy_step_ratios(cnf: CNF, rounds: int, queue) -> None:
    """In a forked child: thread CPU time of one backbone, SL and SPL step, as ratios."""
    try:
        import statistics

        import torch

        from autonesy.nesy.backbones import make_backbone
        from autonesy.nesy.constraint import constraint_for
        from autonesy.nesy.sl import SemanticLoss, Unconstrained
        from autonesy.nesy.spl import SPL
        from autonesy.tools.enumeration import enumerate_models

        torch.set_num_threads(1)
        label = torch.tensor(enumerate_models(cnf, cap=1, time_limit_s=10)[:1], dtype=torch.uint8)
    except EnumerationCapReached:  # more than one model: take the first one the solver finds
        label = torch.tensor([_one_model(cnf)], dtype=torch.uint8)
    except Exception as error:  # noqa: BLE001 - reported to the parent
        queue.put({"outcome": f"{type(error).__name__}: {error}"})
        return
    try:
        start = time.perf_counter()
        constraint = constraint_for(cnf)
        methods = {"backbone": Unconstrained(), "sl": SemanticLoss(constraint), "spl": SPL(constraint)}
        build_s = time.perf_counter() - start
        x = torch.randn(128, 32, generator=torch.Generator().manual_seed(0))
        y = label.expand(128, -1).contiguous()
        valid = torch.ones(128, dtype=torch.bool)
        samples = {}
        for key, method in methods.items():
            model = make_backbone((32,), cnf.num_task_vars, seed=0)
            optim = torch.optim.Adam(model.parameters(), lr=1e-3)
            times = []
            for _ in range(rounds + 1):
                cpu = time.thread_time()
                loss = method.loss(model(x), y, valid)
                optim.zero_grad(set_to_none=True)
                loss.backward()
                optim.step()
                times.append(time.thread_time() - cpu)
            samples[key] = statistics.median(times[1:])
        queue.put(
            {
                "outcome": "ok",
                "build_s": build_s,
                "sdd_size": constraint.sdd_size,
                "vtree": constraint.choice.get("chosen"),
                "backbone_ms": 1e3 * samples["backbone"],
                "sl_ratio": samples["sl"] / samples["backbone"],
                "spl_ratio": samples["spl"] / samples["backbone"],
            }
        )
    except Exception as error:  # noqa: BLE001 - reported to the parent
        queue.put({"outcome": f"{type(error).__name__}: {str(error)[:80]}"})


def _one_model(cnf: CNF) -> list[int]:
    from pysat.solvers import Solver

    with Solver(name="glucose4", bootstrap_with=[list(c) for c in cnf.clauses]) as solver:
        for var in cnf.task_vars:
            solver.add_clause([var, -var])
        solver.solve()
        model = solver.get_model()
    return [int(model[i] > 0) for i in range(cnf.num_task_vars)]


def nesy_row(cnf: CNF, limit: float, rounds: int = 5) -> dict:
    context = multiprocessing.get_context("fork")  # this script runs one thread: forking it is safe
    queue = context.Queue()
    child = context.Process(target=_nesy_step_ratios, args=(cnf, rounds, queue))
    start = time.perf_counter()
    child.start()
    child.join(limit)
    if child.is_alive():
        child.kill()
        child.join()
        return {"outcome": "timed out", "seconds": time.perf_counter() - start}
    result = queue.get() if not queue.empty() else {"outcome": f"died (exit {child.exitcode})"}
    return {**result, "seconds": time.perf_counter() - start}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and a 10 s limit")
    parser.add_argument("--limit", type=float, default=None, help="seconds per step (60; 10 with --quick)")
    parser.add_argument("--families", default=",".join(LADDERS))
    parser.add_argument("--out", type=Path, help="write each CNF as a DIMACS task file here")
    parser.add_argument("--json", dest="json_out")
    parser.add_argument("--sizes", action="append", default=[], help="FAMILY=a,b,c: these sizes only")
    parser.add_argument("--methods", default=",".join(COUNT_METHODS))
    parser.add_argument("--no-nesy", action="store_true", help="skip the SL/SPL step timing")
    parser.add_argument("--md", type=Path, help="also write the table as markdown here")
    args = parser.parse_args()
    limit = args.limit or (10.0 if args.quick else 60.0)
    ladders = dict(QUICK if args.quick else LADDERS)
    for choice in args.sizes:
        family, sizes = choice.split("=")
        ladders[family] = tuple(int(size) for size in sizes.split(","))
    methods = [m for m in COUNT_METHODS if m in args.methods.split(",")]
    loads = [open("/proc/loadavg").read().split()[0]]
    print(f"time limit {limit:g} s per step; a method that fails is not tried on larger sizes of its family")
    header = (
        f"{'family':10} {'size':>5} {'N':>5} {'aux':>6} {'clauses':>8} {'models':>24} "
        + " ".join(f"{m[:6] + ' s':>9}" for m in COUNT_METHODS)
        + f" {'sdd size':>9} | {'SL/bb':>6} {'SPL/bb':>6} {'nesy s':>7}"
    )
    print(header)
    print("-" * len(header))
    rows, largest = [], {}
    for family in args.families.split(","):
        active = list(methods)
        nesy_active = not args.no_nesy
        for size in ladders[family]:
            start = time.perf_counter()
            cnf = BUILDERS[family](size)
            build_s = time.perf_counter() - start
            if args.out:
                args.out.mkdir(parents=True, exist_ok=True)
                (args.out / f"{family}-{size}.cnf").write_text(to_dimacs(cnf, comments=[f"{family} {size}"]))
            counts = count_row(cnf, active, limit)
            nesy = nesy_row(cnf, limit) if nesy_active else {"outcome": "skipped"}
            loads.append(open("/proc/loadavg").read().split()[0])
            exact = [
                counts[m]["count"] for m in ("auto", "ganak", "sdd", "enumeration") if counts.get(m, {}).get("exact")
            ]
            models = exact[0] if exact else None
            if len(set(exact)) > 1:
                raise SystemExit(f"{family} {size}: exact methods disagree: {exact}")
            row = {
                "family": family,
                "size": size,
                "num_task_vars": cnf.num_task_vars,
                "num_aux": cnf.num_aux_vars,
                "clauses": len(cnf.clauses),
                "build_s": build_s,
                "models": models,
                "counts": counts,
                "nesy": nesy,
                "load": loads[-1],
            }
            rows.append(row)
            if args.md:  # after every row: a run stopped part-way keeps what it measured
                args.md.parent.mkdir(parents=True, exist_ok=True)
                args.md.write_text(markdown(rows, methods, limit, loads))

            def cell(method: str) -> str:
                if method not in counts:
                    return f"{'-':>9}"
                entry = counts[method]
                return f"{entry['seconds']:>9.2f}" if entry["outcome"] == "ok" else f"{entry['outcome'][:9]:>9}"

            sdd_size = counts.get("sdd", {}).get("sdd_size")
            ratios = (
                f"{nesy['sl_ratio']:>6.2f} {nesy['spl_ratio']:>6.2f}"
                if nesy["outcome"] == "ok"
                else f"{nesy['outcome'][:13]:>13}"
            )
            print(
                f"{family:10} {size:>5} {cnf.num_task_vars:>5} {cnf.num_aux_vars:>6} {len(cnf.clauses):>8} "
                f"{(f'{models:,}' if models is not None else '?'):>24} "
                + " ".join(cell(m) for m in COUNT_METHODS)
                + f" {(sdd_size if sdd_size is not None else '-'):>9} | {ratios} {nesy.get('seconds', 0):>7.1f}",
                flush=True,
            )
            for method in list(active):
                if counts[method]["outcome"] == "ok":
                    largest[(family, method)] = size
                else:
                    active.remove(method)
            if nesy["outcome"] == "ok":
                largest[(family, "sl+spl")] = size
            else:
                nesy_active = False
    print("\nlargest size handled within the limit:")
    for family in args.families.split(","):
        print(
            f"  {family:10} " + ", ".join(f"{m} {largest.get((family, m), 'none')}" for m in (*COUNT_METHODS, "sl+spl"))
        )
    if args.json_out:
        with open(args.json_out, "w") as handle:
            json.dump({"limit_s": limit, "rows": rows}, handle, indent=2, default=str)


def markdown(rows: list[dict], methods: list[str], limit: float, loads: list[str]) -> str:
    """The table as markdown: per method wall seconds / CPU seconds, or why it gave no count."""
    lines = [
        f"# Scaling ladder: exact counting by method (limit {limit:g} s per count)",
        "",
        f"Load average (1 min) at the start and after each row: {', '.join(loads)}. Each cell: wall s / CPU s "
        "(this process and its forked counters), or the outcome; `auto` names the route that answered; a method "
        "that failed is not tried on larger sizes of its family (-).",
        "",
        "| family | size | N | aux | clauses | models | " + " | ".join(methods) + " | load |",
        "|---|---|---|---|---|---|" + "---|" * len(methods) + "---|",
    ]
    for row in rows:
        cells = []
        for method in methods:
            entry = row["counts"].get(method)
            if entry is None:
                cells.append("-")
            elif entry["outcome"] == "ok":
                note = "" if entry.get("exact", True) else " (approx.)"
                if method == "auto" and entry.get("method"):
                    note += f" {entry['method']}"
                cells.append(f"{entry['seconds']:.2f} / {entry['cpu_s']:.2f}{note}")
            else:
                cells.append(f"{entry['outcome']} ({entry['seconds']:.0f} s)")
        models = f"{row['models']:,}" if row["models"] is not None else "?"
        lines.append(
            f"| {row['family']} | {row['size']} | {row['num_task_vars']} | {row['num_aux']} | {row['clauses']} | "
            f"{models} | " + " | ".join(cells) + f" | {row['load']} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
