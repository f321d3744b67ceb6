"""Time to score each task's ground truth and two perturbations of it, by counting method, side by side.

For every task: the ground truth against itself, with one clause dropped, and with one clause
added (a deterministic choice that changes the model set). Each is scored with exact SDD counting,
with the automatic exact hybrid (enumeration → SDD → Ganak) and with ApproxMC; the table reports
seconds, the time ratio ApproxMC / exact, and ApproxMC's relative error on the candidate count.

    python benchmarks/formula_metrics.py [--tasks a,b] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import random
import time

from autonesy.tasks.registry import TASK_NAMES, get_task
from autonesy.tools.cnf import CNF
from autonesy.tools.counting import count_models
from autonesy.tools.metrics import score_formula

METHODS = ("sdd", "auto", "approxmc")


def perturbations(truth: CNF, seed: int = 0) -> dict[str, CNF]:
    rng = random.Random(seed)
    base = count_models(truth).value
    clauses = list(truth.clauses)
    order = list(range(len(clauses)))
    rng.shuffle(order)
    dropped = next(
        (truth.with_clauses(clauses[:i] + clauses[i + 1 :]) for i in order[:50]
         if count_models(truth.with_clauses(clauses[:i] + clauses[i + 1 :])).value != base),
        truth.with_clauses(clauses[1:]),
    )
    for _ in range(200):
        a, b = rng.sample(range(1, truth.num_task_vars + 1), 2)
        clause = (a * rng.choice((1, -1)), b * rng.choice((1, -1)))
        added = truth.with_clauses(clauses + [clause])
        if 0 < count_models(added).value < base:
            break
    return {"self": truth, "drop-1": dropped, "add-1": added}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(TASK_NAMES))
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()
    rows = []
    header = f"{'task':13} {'variant':7} {'models':>22} " + " ".join(f"{m + ' s':>10}" for m in METHODS) + f" {'approx/sdd':>10} {'approx err':>10}"
    print(header)
    totals = dict.fromkeys(METHODS, 0.0)
    for name in args.tasks.split(","):
        truth = get_task(name).ground_truth
        for variant, candidate in perturbations(truth).items():
            row = {"task": name, "variant": variant}
            for method in METHODS:
                start = time.perf_counter()
                score = score_formula(candidate, truth, method)
                row[method] = time.perf_counter() - start
                totals[method] += row[method]
                row[f"{method}_count"] = score.candidate_count
                row[f"{method}_used"] = score.count_method
            exact = row["sdd_count"]
            row["approx_rel_error"] = abs(row["approxmc_count"] - exact) / max(exact, 1)
            row["approx_over_sdd"] = row["approxmc"] / row["sdd"]
            rows.append(row)
            print(f"{name:13} {variant:7} {exact:>22,} " + " ".join(f"{row[m]:>10.3f}" for m in METHODS)
                  + f" {row['approx_over_sdd']:>10.2f} {row['approx_rel_error']:>10.3f}")
    print("total seconds: " + ", ".join(f"{m} {t:.2f}" for m, t in totals.items()))
    if args.json_out:
        with open(args.json_out, "w") as handle:
            json.dump({"rows": rows, "totals": totals}, handle, indent=2)


if __name__ == "__main__":
    main()
