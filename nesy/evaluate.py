"""Train SPL / SL on a formula and on the task's ground truth, side by side, and score them downstream.

:func:`train_and_evaluate` is the entry point the graph and the CLI call. For every seed it trains

- the unconstrained backbone (the baseline, no formula),
- each requested method (``spl``, ``sl``) on the candidate **formula**,
- each requested method on the **ground truth**,

all with the same backbone architecture and, per seed, the same initial weights and batch order,
then scores every model on the test split (:mod:`autonesy.nesy.metrics`: F1, precision, recall,
exact-match accuracy, consistency with the ground truth, consistency with the formula it was trained
with). The result is JSON-serialisable: per-seed metrics and mean ± std over seeds, plus the
formula's relation to the ground truth and its MC-R.

A formula whose model set equals the ground truth's (relation ``equal``) defines the same SPL
distribution and the same semantic loss, so its runs are not repeated: the ground-truth results are
reported for it with ``"reused_from": "ground_truth"``. An unsatisfiable formula cannot be trained
on; its entries carry ``"skipped"`` with the reason, and the ground truth and baseline still run.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from autonesy.nesy.checkpoint import TrainingStore, fingerprint
from autonesy.nesy.constraint import Constraint, constraint_for
from autonesy.nesy.metrics import METRICS, downstream_metrics, format_mean_std, summarize
from autonesy.nesy.trainer import Arrays, TrainConfig, predict, train
from autonesy.tools.cnf import CNF

METHODS = ("spl", "sl")
TARGETS = ("formula", "ground_truth")
DEFAULT_SEEDS = 5


def make_method(name: str, constraint: Constraint | None = None, sl_weight: float = 1.0):
    """``none`` (unconstrained), ``spl`` or ``sl`` on ``constraint``."""
    from autonesy.nesy.sl import SemanticLoss, Unconstrained

    if name == "none":
        return Unconstrained()
    if constraint is None:
        raise ValueError(f"method {name!r} needs a formula")
    if name == "spl":
        from autonesy.nesy.spl import SPL

        return SPL(constraint)
    if name == "sl":
        return SemanticLoss(constraint, weight=sl_weight)
    raise ValueError(f"unknown method {name!r}; choose from spl, sl, none")


def parse_methods(spec: str | Sequence[str]) -> tuple[str, ...]:
    """``"spl,sl"`` → ("spl", "sl"); ``"none"`` or empty → (); unknown names raise ValueError."""
    items = [s.strip().lower() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if items in ([], ["none"]):
        return ()
    unknown = [s for s in items if s not in METHODS]
    if unknown:
        raise ValueError(f"unknown training method(s) {', '.join(unknown)}; choose from {', '.join(METHODS)} or none")
    return tuple(dict.fromkeys(items))


def _formula_facts(formula: CNF, truth: CNF, formula_score: Any) -> dict[str, Any]:
    if formula_score is None:
        from autonesy.tools.metrics import score_formula

        formula_score = score_formula(formula, truth)
    score = formula_score.to_dict() if hasattr(formula_score, "to_dict") else dict(formula_score)
    return {
        "relation": score.get("relation"),
        "mc_ratio": score.get("mc_ratio"),
        "precision": score.get("precision"),
        "recall": score.get("recall"),
        "f1": score.get("f1"),
    }


def _run(
    name: str,
    constraint: Constraint | None,
    data: Arrays,
    truth: Constraint,
    seed: int,
    config: TrainConfig,
    progress: bool,
    desc: str,
    sl_weight: float,
    store: TrainingStore | None = None,
    target: tuple[str, CNF | None] = ("backbone", None),
) -> dict[str, Any]:
    """One training run and its test metrics; with ``store``, a run finished before is read back and
    an unfinished one continues from its last epoch."""
    key = f"{name}-{target[0]}-seed{seed}"
    identity = fingerprint(target[0], target[1].clauses if target[1] is not None else None, sl_weight)
    row_print = fingerprint(identity, name, seed, config.to_dict(), data.x_train, data.y_train, data.y_test)
    if store is not None:
        done = store.load_row(key, row_print)
        if done is not None:
            return done
    method = make_method(name, constraint, sl_weight)
    result = train(
        method, data, seed=seed, config=config, progress=progress, desc=desc, store=store, key=key, identity=identity
    )
    start = time.perf_counter()
    y_pred = predict(result.model, method, data.x_test, config.eval_batch_size)
    row = downstream_metrics(data.y_test, y_pred, truth, constraint)
    row.update(result.summary())
    row["predict_seconds"] = time.perf_counter() - start
    if store is not None:
        store.save_row(key, row_print, row)
    return row


def train_and_evaluate(
    task,
    formula: CNF | None,
    data: Any,
    *,
    methods: str | Sequence[str] = METHODS,
    seeds: int | Sequence[int] = DEFAULT_SEEDS,
    epochs: int | None = None,
    progress: bool = True,
    config: TrainConfig | None = None,
    formula_score: Any = None,
    baseline: bool = True,
    sl_weight: float = 1.0,
    resume_dir: Path | None = None,
) -> dict[str, Any]:
    """Train on ``formula`` and on the task's ground truth; JSON-serialisable results.

    ``task``: a :class:`~autonesy.tasks.task.Task` (nesy/ knows no catalogue: the caller resolves names). ``formula``: the accepted CNF
    (None: ground truth and baseline only). ``data``: see :meth:`Arrays.from_any`. ``seeds``: a count
    (seeds 0..n-1) or explicit seeds. ``epochs`` overrides ``config.epochs``. ``formula_score``: the
    formula's :class:`~autonesy.tools.metrics.FormulaScore` (or its dict) when already computed.
    ``resume_dir``: where each run's state is saved after every epoch and its result when done, so
    calling again after a kill continues (see :mod:`autonesy.nesy.checkpoint`).
    """
    start = time.perf_counter()
    truth_cnf = task.ground_truth
    arrays = Arrays.from_any(data)
    if arrays.num_outputs != task.num_vars:
        raise ValueError(
            f"task {task.name!r} has {task.num_vars} variables but the labels have {arrays.num_outputs} columns"
        )
    if formula is not None and formula.num_task_vars != task.num_vars:
        raise ValueError(f"the formula has {formula.num_task_vars} task variables, the task {task.num_vars}")
    config = config or TrainConfig()
    if epochs is not None:
        config = TrainConfig(**{**config.to_dict(), "epochs": int(epochs)})
    seed_list = list(range(int(seeds))) if isinstance(seeds, (int, np.integer)) else [int(s) for s in seeds]
    if not seed_list:
        raise ValueError("at least one seed is needed")
    method_names = parse_methods(methods)

    truth = constraint_for(truth_cnf, name="ground truth")
    result: dict[str, Any] = {
        "task": task.name,
        "num_vars": task.num_vars,
        "seeds": seed_list,
        "methods": list(method_names),
        "config": config.to_dict(),
        "sizes": {"train": len(arrays.y_train), "val": len(arrays.y_val), "test": len(arrays.y_test)},
        "ground_truth": {"model_count": truth.model_count, "sdd_size": truth.sdd_size},
        "formula": None,
        "baseline": None,
        "results": {},
        "notes": [],
    }

    targets: dict[str, Constraint | None] = {"ground_truth": truth}
    reuse_formula = False
    if formula is None:
        result["notes"].append("no formula given: trained on the ground truth only")
    else:
        constraint = constraint_for(formula, name="formula")
        facts = _formula_facts(formula, truth_cnf, formula_score)
        facts.update(
            {
                "model_count": constraint.model_count,
                "sdd_size": constraint.sdd_size,
                "satisfiable": not constraint.is_false,
            }
        )
        result["formula"] = facts
        if constraint.is_false:
            result["notes"].append("the formula is unsatisfiable: SPL and SL cannot be trained on it (skipped)")
        elif facts["relation"] == "equal":
            reuse_formula = True
            result["notes"].append("the formula is equivalent to the ground truth: its results are the ground truth's")
        else:
            targets["formula"] = constraint

    runs = len(seed_list) * (int(baseline) + len(method_names) * len(targets))
    outer = None
    if progress:
        import sys

        from tqdm import tqdm

        outer = tqdm(total=runs, desc=f"training on {task.name}", unit="run", file=sys.stderr, disable=None)

    def tick() -> None:
        if outer is not None:
            outer.update(1)

    store = TrainingStore(resume_dir) if resume_dir is not None else None
    cnfs = {"ground_truth": truth_cnf, "formula": formula}
    try:
        if baseline:
            rows = []
            for seed in seed_list:
                rows.append(
                    _run("none", None, arrays, truth, seed, config, progress, f"backbone seed {seed}", sl_weight, store)
                )
                tick()
            result["baseline"] = {"per_seed": rows, "summary": summarize(rows)}
        for name in method_names:
            entry: dict[str, Any] = {}
            for target in ("ground_truth", "formula"):
                if target not in targets:
                    continue
                rows = []
                for seed in seed_list:
                    rows.append(
                        _run(
                            name,
                            targets[target],
                            arrays,
                            truth,
                            seed,
                            config,
                            progress,
                            f"{name} on {target.replace('_', ' ')} seed {seed}",
                            sl_weight,
                            store,
                            (target, cnfs[target]),
                        )
                    )
                    tick()
                entry[target] = {"per_seed": rows, "summary": summarize(rows)}
            if formula is not None and "formula" not in targets:
                if reuse_formula:
                    entry["formula"] = {**entry["ground_truth"], "reused_from": "ground_truth"}
                else:
                    entry["formula"] = {"skipped": "the formula is unsatisfiable"}
            result["results"][name] = entry
    finally:
        if outer is not None:
            outer.close()
    result["seconds"] = time.perf_counter() - start
    return result


def results_table(
    result: Mapping[str, Any], metrics: Sequence[str] = ("f1", "precision", "recall", "accuracy", "consistency")
) -> list[list[str]]:
    """Rows [predictor, trained on, metric mean ± std ...] with a header row, for printing side by side."""
    rows = [["predictor", "trained on", *metrics]]
    if result.get("baseline"):
        rows.append(["backbone", "—", *(format_mean_std(result["baseline"]["summary"], m) for m in metrics)])
    for name, entry in result.get("results", {}).items():
        for target in ("formula", "ground_truth"):
            if target not in entry:
                continue
            part = entry[target]
            label = target.replace("_", " ")
            if "skipped" in part:
                rows.append([name.upper(), label, *(["skipped"] * len(metrics))])
            else:
                rows.append([name.upper(), label, *(format_mean_std(part["summary"], m) for m in metrics)])
    return rows


__all__ = ["METHODS", "METRICS", "TARGETS", "make_method", "parse_methods", "results_table", "train_and_evaluate"]
