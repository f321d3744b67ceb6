"""``data build|show|fetch|load``: build and inspect the tasks' annotated train/val/test data.

``--data-dir`` overrides $AUTONESY_DATA_DIR, which overrides the user cache directory.
"""

from __future__ import annotations

from pathlib import Path

import typer

from autonesy.graph.cli.common import (
    UserError,
    cell,
    console,
    data_dir_option,
    json_option,
    print_json,
    say,
    user_errors,
)
from autonesy.tools.config import DATA_DIR_ENV


def _parse_sizes(text: str | None) -> list[int] | None:
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise UserError(f"--sizes takes TRAIN,VAL,TEST as three positive integers, got {text!r}") from None
    if len(values) != 3 or min(values) < 1:
        raise UserError(f"--sizes takes TRAIN,VAL,TEST as three positive integers, got {text!r}")
    return values


def _sizes_text(sizes: dict) -> str:
    return f"{sizes['train']}/{sizes['val']}/{sizes['test']}"


def build(
    tasks: list[str] | None = typer.Argument(None, help="Task names (or use --all)."),
    all_tasks: bool = typer.Option(False, "--all", help="Build all 18 catalogue tasks."),
    data_dir: Path | None = data_dir_option(),
    seed: int = typer.Option(0, "--seed", help="Random seed; the same seed gives byte-identical data."),
    sizes: str | None = typer.Option(None, "--sizes", help="TRAIN,VAL,TEST split sizes (default per task)."),
    force: bool = typer.Option(False, "--force", help="Rebuild even when an intact cache entry exists."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bars (only on a terminal)."),
    as_json: bool = json_option("Print a JSON list instead of a table."),
) -> None:
    """Generate (or verify the cached) train/val/test splits of tasks; every label is checked against the ground truth."""
    from autonesy.tasks.data.dataset import build_dataset
    from autonesy.tasks.registry import TASK_NAMES, get_task

    rows = []
    with user_errors():
        if all_tasks == bool(tasks):
            raise UserError("give task names or --all (not both)")
        names = list(TASK_NAMES) if all_tasks else list(dict.fromkeys(tasks or ()))
        chosen = [get_task(name) for name in names]  # unknown names fail before anything is built
        split_sizes = _parse_sizes(sizes)
        for name, task in zip(names, chosen):
            report = build_dataset(
                task, data_dir, seed=seed, sizes=split_sizes, progress=None if progress else False, force=force
            )
            manifest = report.manifest
            rows.append(
                {
                    "task": name,
                    "status": "built" if report.built else "cached",
                    "seconds": round(report.seconds, 3),
                    "provenance": manifest["provenance"],
                    "sizes": manifest["sizes"],
                    "x_shape": manifest["x_shape"],
                    "seed": manifest["seed"],
                    "directory": str(report.directory),
                }
            )
            if not as_json:
                say(
                    f"{name}: {rows[-1]['status']} in {report.seconds:.2f} s "
                    f"({_sizes_text(manifest['sizes'])}, {manifest['provenance']})"
                )
    if as_json:
        print_json(rows)
        return
    if rows:
        say(f"data directory: {Path(rows[0]['directory']).parents[2]}")


def show(
    task_name: str = typer.Argument(..., help="A catalogue task name."),
    data_dir: Path | None = data_dir_option(),
    seed: int = typer.Option(0, "--seed"),
    sizes: str | None = typer.Option(None, "--sizes", help="TRAIN,VAL,TEST split sizes (default per task)."),
    grid: Path | None = typer.Option(
        None, "--grid", help="Write a PNG grid of examples with their labels (image tasks)."
    ),
    split: str = typer.Option("test", "--split", help="Split shown in the --grid picture."),
    count: int = typer.Option(16, "--count", help="Examples in the --grid picture."),
    as_json: bool = json_option(),
) -> None:
    """Split sizes, provenance and label statistics of a task's data (built first if missing)."""
    from rich import box
    from rich.table import Table

    from autonesy.tasks.data.dataset import label_statistics, load_dataset
    from autonesy.tasks.data.generators import generator_for
    from autonesy.tasks.data.grid import render_grid
    from autonesy.tasks.registry import get_task

    with user_errors():
        task = get_task(task_name)
        if grid is not None and generator_for(task_name).modality != "image":
            raise UserError(f"{task_name}: its data are feature vectors, not images; --grid is for image tasks")
        dataset = load_dataset(
            task, data_dir, seed=seed, sizes=_parse_sizes(sizes), progress=None if not as_json else False
        )
        stats = label_statistics(task, dataset)
        grid_path = render_grid(task, dataset, grid, split=split, count=count) if grid is not None else None
    manifest = dataset.manifest
    record = {
        "task": dataset.task,
        "seed": dataset.seed,
        "provenance": dataset.provenance,
        "source": manifest.get("source"),
        "modality": dataset.modality,
        "generator_version": manifest.get("generator_version"),
        "directory": str(dataset.directory),
        "sizes": dataset.sizes,
        "x_shape": manifest.get("x_shape"),
        "extras": manifest.get("extras"),
        "splits": stats,
        "grid": str(grid_path) if grid_path else None,
    }
    if as_json:
        print_json(record)
        return
    say(f"{dataset.task}: {dataset.provenance} data — {record['source']}", style="bold")
    say(f"seed {dataset.seed}, generator {record['generator_version']}, in {dataset.directory}")
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("split")
    for column in ("examples", "x shape", "distinct labels", "true per row", "all valid"):
        table.add_column(column, justify="right")
    for name, s in stats.items():
        table.add_row(
            cell(name),
            f"{s['size']:,}",
            "x".join(map(str, s["x_shape"][1:])),
            f"{s['distinct_labels']:,}",
            f"{s['mean_true_per_row']:.2f}",
            "yes" if s["all_valid"] else "NO",
        )
    console.print(table)
    rates = stats["train"]["true_rate"]
    ordered = sorted(rates.items(), key=lambda kv: -kv[1])
    shown = ", ".join(f"{k} {v:.2f}" for k, v in ordered[:8])
    say(f"most often true (train): {shown}")
    rare = [k for k, v in rates.items() if v == 0]
    if rare:
        say(f"never true (train): {len(rare)} variables, e.g. {', '.join(rare[:5])}")
    if grid_path:
        say(f"wrote {grid_path}")


def fetch(
    name: str = typer.Argument(..., help="cifar10, cifar100 or sushi (the datasets we may not redistribute)."),
    out: Path | None = typer.Option(
        None, "--out", help="Folder to download into and unpack in (default: the data directory)."
    ),
    force: bool = typer.Option(False, "--force", help="Download again even if the unpacked folder is already there."),
) -> None:
    """Download an original dataset that cannot ship with us; its terms are printed first and downloading accepts them."""
    from autonesy.tasks.data.fetch import EXTERNAL_DATASETS, fetch_dataset
    from autonesy.tasks.data.store import resolve_data_dir

    with user_errors():
        if name not in EXTERNAL_DATASETS:
            raise UserError(f"unknown dataset {name!r}; choose one of {', '.join(EXTERNAL_DATASETS)}")
        out = resolve_data_dir(out)
        folder = fetch_dataset(name, out, echo=typer.echo, force=force)
    typer.echo(f"{name}: ready in {folder}; read it with: autonesy-agent data load {name} --data-dir {out}")


def load(
    task_name: str = typer.Argument(
        ..., help="A task with an original-format loader (warcraft, cifar10, sushi, mn-add, …)."
    ),
    data_dir: Path | None = typer.Option(
        None,
        "--data-dir",
        "--source",
        help="Folder holding the original dataset in its own layout, or a data directory holding that folder "
        f"(default: ${DATA_DIR_ENV}, else the user cache directory).",
    ),
    drop_invalid: bool = typer.Option(
        False, "--drop-invalid", help="Skip label rows that violate the task's constraint instead of failing."
    ),
    as_json: bool = json_option(),
) -> None:
    """Read a task's train/val/test data from the original dataset's files and check every label."""
    from rich import box
    from rich.table import Table

    from autonesy.tasks.data.dataset import label_statistics
    from autonesy.tasks.data.loaders import load_original
    from autonesy.tasks.data.store import resolve_data_dir
    from autonesy.tasks.registry import get_task

    with user_errors():
        task = get_task(task_name)
        dataset = load_original(task, resolve_data_dir(data_dir), invalid="drop" if drop_invalid else None)
        stats = label_statistics(task, dataset)
    manifest = dataset.manifest
    record = {
        "task": dataset.task,
        "provenance": dataset.provenance,
        "source": manifest["source"],
        "modality": dataset.modality,
        "directory": str(dataset.directory),
        "sizes": dataset.sizes,
        "dropped": manifest["dropped"],
        "x_shape": manifest["x_shape"],
        "extras": manifest["extras"],
        "notes": manifest["notes"],
        "splits": stats,
    }
    if as_json:
        print_json(record)
        return
    say(f"{dataset.task}: {record['source']}", style="bold")
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("split")
    for column in ("examples", "dropped", "x shape", "distinct labels", "all valid"):
        table.add_column(column, justify="right")
    for name, s in stats.items():
        table.add_row(
            cell(name),
            f"{s['size']:,}",
            f"{record['dropped'][name]:,}",
            "x".join(map(str, s["x_shape"][1:])),
            f"{s['distinct_labels']:,}",
            "yes" if s["all_valid"] else "NO",
        )
    console.print(table)
    say(record["notes"])


def group() -> typer.Typer:
    """The ``data`` command group."""
    data_app = typer.Typer(
        help="Annotated train/val/test data of the tasks: build it, inspect it.", no_args_is_help=True
    )
    data_app.command("build")(build)
    data_app.command("show")(show)
    data_app.command("fetch")(fetch)
    data_app.command("load")(load)
    return data_app


def register(app: typer.Typer) -> None:
    """Add the ``data`` command group to the app."""
    app.add_typer(group(), name="data")
