"""Time to score each task's ground truth and two perturbations of it, by counting method, side by side.

For every task: the ground truth against itself, with one clause dropped, with one clause added
(a deterministic choice that changes the model set), and with both at once ("swap-1": neither
clause set contains the other, so the overlap must really be counted). Each is scored with every
counting method, each method starting with an empty ground-truth cache; the table reports seconds
per score, the time ratio ApproxMC / auto, and ApproxMC's relative error on the candidate count.

``auto`` keeps exact ground-truth counts on disk (``$AUTONESY_CACHE_DIR/counts``); the run points
that at an empty temporary folder, so the ``auto`` column is cold (every count computed, the ground
truth once per task), and ``auto-warm`` scores again with the in-memory cache emptied before every
score, so its ground-truth counts come from the disk and everything else is counted again.

    python benchmarks/formula_metrics.py [--tasks a,b] [--methods auto,ganak,sdd,approxmc] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import tempfile
import time

from autonesy.tasks.registry import TASK_NAMES, get_task
from autonesy.tools import metrics
from autonesy.tools.cnf import CNF
from autonesy.tools.counting import count_models
from autonesy.tools.metrics import score_formula

METHODS = ("auto", "auto-warm", "ganak", "sdd", "approxmc")


def perturbations(truth: CNF, seed: int = 0) -> dict[str, CNF]:
    rng = random.Random(seed)
    base = count_models(truth).value
    clauses = list(truth.clauses)
    order = list(range(len(clauses)))
    rng.shuffle(order)
    dropped = next(
        (
            truth.with_clauses(clauses[:i] + clauses[i + 1 :])
            for i in order[:50]
            if count_models(truth.with_clauses(clauses[:i] + clauses[i + 1 :])).value != base
        ),
        truth.with_clauses(clauses[1:]),
    )
    for _ in range(200):
        a, b = rng.sample(range(1, truth.num_task_vars + 1), 2)
        clause = (a * rng.choice((1, -1)), b * rng.choice((1, -1)))
        added = truth.with_clauses(clauses + [clause])
        if 0 < count_models(added).value < base:
            break
    swapped = dropped.with_clauses(dropped.clauses + (clause,))
    return {"self": truth, "drop-1": dropped, "add-1": added, "swap-1": swapped}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(TASK_NAMES))
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()
    os.environ["AUTONESY_CACHE_DIR"] = tempfile.mkdtemp(prefix="formula-metrics-")
    methods = args.methods.split(",")
    names = args.tasks.split(",")
    variants = {name: perturbations(get_task(name).ground_truth) for name in names}
    rows = []
    print(
        f"{'task':13} {'variant':7} {'models':>14} "
        + " ".join(f"{m + ' s':>10}" for m in methods)
        + f" {'approx/auto':>11} {'approx err':>10}  auto used"
    )
    totals = dict.fromkeys(methods, 0.0)
    for name in names:
        truth = get_task(name).ground_truth
        for variant, candidate in variants[name].items():
            row = {"task": name, "variant": variant}
            for method in methods:
                in_memory = dict(metrics._truth_counts)
                if method == "auto-warm":  # the disk cache alone; the cold run's memory is put back after
                    metrics._truth_counts.clear()
                start = time.perf_counter()
                score = score_formula(candidate, truth, method.removesuffix("-warm"))
                if method == "auto-warm":
                    row["warm_truth_from_disk"] = bool(score.counts["truth"]["params"].get("from_cache"))
                    metrics._truth_counts.clear()
                    metrics._truth_counts.update(in_memory)
                row[method] = time.perf_counter() - start
                totals[method] += row[method]
                row[f"{method}_count"] = score.candidate_count
                row[f"{method}_used"] = score.count_method
                row[f"{method}_exact"] = score.exact
            exact = row[f"{methods[0]}_count"]
            if "approxmc" in methods and "auto" in methods:
                row["approx_rel_error"] = abs(row["approxmc_count"] - exact) / max(exact, 1)
                row["approx_over_auto"] = row["approxmc"] / row["auto"]
            rows.append(row)
            print(
                f"{name:13} {variant:7} {exact:>14,} "
                + " ".join(f"{row[m]:>10.3f}" for m in methods)
                + f" {row.get('approx_over_auto', float('nan')):>11.2f} {row.get('approx_rel_error', float('nan')):>10.3f}"
                + f"  {row.get('auto_used', '')}",
                flush=True,
            )
    print("total seconds: " + ", ".join(f"{m} {t:.2f}" for m, t in totals.items()))
    for variant in ("self", "drop-1", "add-1", "swap-1"):
        part = {m: sum(r[m] for r in rows if r["variant"] == variant) for m in methods}
        print(f"  {variant:7}: " + ", ".join(f"{m} {t:.2f}" for m, t in part.items()))
    if "auto-warm" in methods:
        from_disk = sum(r["warm_truth_from_disk"] for r in rows)
        print(f"auto-warm: ground-truth count read from the disk cache in {from_disk} of {len(rows)} scores")
    inexact = [f"{r['task']}/{r['variant']}" for r in rows if "auto" in methods and not r["auto_exact"]]
    print(f"auto exact everywhere: {not inexact}" + (f" (inexact: {', '.join(inexact)})" if inexact else ""))
    if args.json_out:
        with open(args.json_out, "w") as handle:
            json.dump({"rows": rows, "totals": totals}, handle, indent=2)


if __name__ == "__main__":
    main()
