"""CPU time of one training step per task: bare backbone, SL and SPL, side by side, as ratios.

For every task: the task's backbone (small CNN for images, MLP for features) with three objectives —
the unconstrained task loss, SL (KLay) and SPL (cirkit) on the ground truth — each with its own copy
of the same initial weights and its own Adam optimiser. One step = forward, loss, backward,
optimiser step on a batch of the trainer's size (``TrainConfig.batch_size``, 128). Each call is
timed in CPU seconds of the calling thread (``time.thread_time``; torch runs on that one thread, as in
training), which other processes' load does not inflate the way it inflates wall time; the three
steps run round-robin, and the table shows the median over rounds (min in the JSON).

Also reported, per task: the constraint layer alone, forward + backward of log Z_x over the same
batch of logits — SPL's cirkit soft-evidence circuit against KLay's circuit of the same SDD (the
cost of building SPL on cirkit rather than KLay) — and the time to build both circuits once.

    python benchmarks/nesy_step.py [--tasks a,b] [--batch 128] [--rounds 15] [--threads 1]
                                   [--data-dir DIR] [--json OUT] [--out benchmarks/results/nesy_step.md]

Inputs and labels come from the task's training split (``autonesy.tasks.data``; built into the
data directory on first use). The aim: SL within 2× and SPL within 5× of the backbone step.
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import sys
import time
from pathlib import Path

import torch


def measure(task_name: str, batch: int, rounds: int, data_dir: str | None) -> dict:
    from autonesy.nesy.backbones import make_backbone
    from autonesy.nesy.constraint import constraint_for, sdd_height
    from autonesy.nesy.sl import SemanticLoss, Unconstrained
    from autonesy.nesy.spl import SPL
    from autonesy.tasks.data.dataset import load_dataset
    from autonesy.tasks.registry import get_task

    task = get_task(task_name)
    data = load_dataset(task, data_dir=data_dir, progress=False)
    x = torch.from_numpy(data.train.x[:batch]).float()
    y = torch.from_numpy(data.train.y[:batch]).to(torch.uint8)
    if len(x) < batch:  # small split: repeat rows
        reps = -(-batch // len(x))
        x, y = x.repeat(reps, *([1] * (x.ndim - 1)))[:batch], y.repeat(reps, 1)[:batch]

    start = time.perf_counter()
    constraint = constraint_for(task.ground_truth, name="ground truth")
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    spl = SPL(constraint)
    cirkit_build_s = time.perf_counter() - start
    start = time.perf_counter()
    sl = SemanticLoss(constraint)
    klay_build_s = time.perf_counter() - start
    methods = {"backbone": Unconstrained(), "sl": sl, "spl": spl}
    valid = spl.satisfies(y)
    assert bool(valid.all()), "training labels must satisfy the ground truth"

    base = make_backbone(tuple(x.shape[1:]), task.num_vars, seed=0)
    models = {k: copy.deepcopy(base) for k in methods}
    optims = {k: torch.optim.Adam(m.parameters(), lr=1e-3) for k, m in models.items()}

    def step(key: str) -> None:
        model, method, optim = models[key], methods[key], optims[key]
        loss = method.loss(model(x), y, valid)
        optim.zero_grad(set_to_none=True)
        loss.backward()
        optim.step()

    logits = base(x).detach()

    def layer_spl() -> None:
        l = logits.clone().requires_grad_()
        spl.log_partition(l).sum().backward()

    def layer_klay() -> None:
        l = logits.clone().requires_grad_()
        sl.log_wmc(l).sum().backward()

    def layer_map() -> None:
        spl.predict(logits)

    timed = {
        "backbone": lambda: step("backbone"),
        "sl": lambda: step("sl"),
        "spl": lambda: step("spl"),
        "logz_cirkit": layer_spl,
        "logz_klay": layer_klay,
        "map": layer_map,
    }
    for fn in timed.values():  # warm-up
        fn()
        fn()
    samples: dict[str, list[float]] = {k: [] for k in timed}
    walls: dict[str, list[float]] = {k: [] for k in timed}
    for _ in range(rounds):
        for key, fn in timed.items():
            wall, cpu = time.perf_counter(), time.thread_time()
            fn()
            samples[key].append(time.thread_time() - cpu)
            walls[key].append(time.perf_counter() - wall)
    ms = {k: 1e3 * statistics.median(v) for k, v in samples.items()}
    return {
        "ms_min": {k: 1e3 * min(v) for k, v in samples.items()},
        "wall_ms": {k: 1e3 * statistics.median(v) for k, v in walls.items()},
        "sl_ratio_min": min(samples["sl"]) / min(samples["backbone"]),
        "spl_ratio_min": min(samples["spl"]) / min(samples["backbone"]),
        "vtree": constraint.choice.get("chosen", constraint.sdd.vtree_type),
        "sdd_height": sdd_height(constraint.sdd.node),
        "task": task_name,
        "num_vars": task.num_vars,
        "modality": "image" if x.ndim == 4 else "features",
        "sdd_size": constraint.sdd_size,
        "ms": ms,
        "sl_ratio": ms["sl"] / ms["backbone"],
        "spl_ratio": ms["spl"] / ms["backbone"],
        "cirkit_vs_klay": ms["logz_cirkit"] / ms["logz_klay"],
        "build_s": {"sdd": compile_s, "cirkit+map": cirkit_build_s, "klay": klay_build_s},
    }


def main() -> None:
    from autonesy.nesy.trainer import TrainConfig
    from autonesy.tasks.registry import TASK_NAMES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default=",".join(TASK_NAMES))
    parser.add_argument("--batch", type=int, default=TrainConfig().batch_size)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch intra-op threads (1, as in training: thread CPU time then covers all of the work)",
    )
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--json", dest="json_out")
    parser.add_argument(
        "--out", type=Path, default=Path("benchmarks/results/nesy_step.md"), help="the table, as Markdown"
    )
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    lines: list[str] = []
    loads = [_load()]

    def say(line: str = "") -> None:  # every line to the terminal and to the table
        lines.append(line)
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    say(
        f"batch {args.batch}, {args.rounds} rounds, torch {torch.__version__}, {torch.get_num_threads()} thread(s); "
        "step = forward + loss + backward + Adam step; thread CPU ms, median over rounds; ratios to the backbone "
        "step measured in the same rounds"
    )
    header = (
        f"{'task':13} {'N':>4} {'mod':>4} {'sdd':>5} {'h':>3} | {'backbone ms':>11} {'SL ms':>8} {'SL/bb':>6} {'SPL ms':>8} "
        f"{'SPL/bb':>6} | {'logZ cirkit':>11} {'logZ KLay':>9} {'cirk/KLay':>9} {'MAP ms':>7} | {'build s':>7}"
    )
    say(header)
    say("-" * len(header))
    rows = []
    for name in args.tasks.split(","):
        r = measure(name.strip(), args.batch, args.rounds, args.data_dir)
        rows.append(r)
        ms = r["ms"]
        say(
            f"{r['task']:13} {r['num_vars']:>4} {r['modality'][:4]:>4} {r['sdd_size']:>5} {r['sdd_height']:>3} | {ms['backbone']:>11.2f} "
            f"{ms['sl']:>8.2f} {r['sl_ratio']:>6.2f} {ms['spl']:>8.2f} {r['spl_ratio']:>6.2f} | "
            f"{ms['logz_cirkit']:>11.2f} {ms['logz_klay']:>9.2f} {r['cirkit_vs_klay']:>9.2f} {ms['map']:>7.2f} | "
            f"{sum(r['build_s'].values()):>7.2f}"
        )
    sl_ok = sum(r["sl_ratio"] <= 2 for r in rows)
    spl_ok = sum(r["spl_ratio"] <= 5 for r in rows)
    say(
        f"\nSL within 2x of the backbone on {sl_ok}/{len(rows)} tasks (max {max(r['sl_ratio'] for r in rows):.2f}x); "
        f"SPL within 5x on {spl_ok}/{len(rows)} (max {max(r['spl_ratio'] for r in rows):.2f}x); "
        f"cirkit log Z / KLay log Z: median {statistics.median(r['cirkit_vs_klay'] for r in rows):.2f}x"
    )
    misses = [
        f"{r['task']} (SL {r['sl_ratio']:.2f}, SPL {r['spl_ratio']:.2f})"
        for r in rows
        if r["sl_ratio"] > 2 or r["spl_ratio"] > 5
    ]
    say("misses: " + (", ".join(misses) if misses else "none"))
    loads.append(_load())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        "# One training step per task: backbone, SL and SPL (thread CPU ms)\n\n"
        f"Command: `{' '.join(['python', 'benchmarks/nesy_step.py', *sys.argv[1:]])}`; load average (1 min) before and after: "
        f"{', '.join(loads)}.\n\n```\n" + "\n".join(lines) + "\n```\n"
    )
    if args.json_out:
        with open(args.json_out, "w") as fh:
            json.dump({"batch": args.batch, "threads": torch.get_num_threads(), "rows": rows}, fh, indent=2)


def _load() -> str:
    with open("/proc/loadavg") as fh:
        return fh.read().split()[0]


if __name__ == "__main__":
    main()
