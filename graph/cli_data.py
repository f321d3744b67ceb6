"""`autonesy-agent data …`: build and inspect the tasks' annotated train/val/test data.

Commands live on ``data_app``, which graph/cli.py mounts as ``data``. Conventions as in cli.py:
problems the user can fix print one ``error: …`` line and exit 1; ``--json`` prints JSON only.
``--data-dir`` overrides $AUTONESY_DATA_DIR, which overrides the user cache directory.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Iterator, List, Optional

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from autonesy.tasks.data.store import ENV_VAR, DataError

data_app = typer.Typer(help="Annotated train/val/test data of the tasks: build it, inspect it.", no_args_is_help=True)
console = Console()

DATA_DIR_HELP = f"Data directory (default: ${ENV_VAR}, else the user cache directory)."


@contextlib.contextmanager
def _user_errors() -> Iterator[None]:
    from autonesy.graph.cli import user_errors  # imported late: cli.py imports this module

    with user_errors():
        yield


def _print_json(data) -> None:
    typer.echo(json.dumps(data, indent=2, default=str))


def _parse_sizes(text: Optional[str]) -> Optional[list[int]]:
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",")]
    try:
        values = [int(p) for p in parts]
    except ValueError:
        raise DataError(f"--sizes takes TRAIN,VAL,TEST as three positive integers, got {text!r}") from None
    if len(values) != 3 or min(values) < 1:
        raise DataError(f"--sizes takes TRAIN,VAL,TEST as three positive integers, got {text!r}")
    return values


def _sizes_text(sizes: dict) -> str:
    return f"{sizes['train']}/{sizes['val']}/{sizes['test']}"


@data_app.command("build")
def build(
    tasks: Optional[List[str]] = typer.Argument(None, help="Task names (or use --all)."),
    all_tasks: bool = typer.Option(False, "--all", help="Build all 18 catalogue tasks."),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
    seed: int = typer.Option(0, "--seed", help="Random seed; the same seed gives byte-identical data."),
    sizes: Optional[str] = typer.Option(None, "--sizes", help="TRAIN,VAL,TEST split sizes (default per task)."),
    force: bool = typer.Option(False, "--force", help="Rebuild even when an intact cache entry exists."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bars (only on a terminal)."),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON list instead of a table."),
) -> None:
    """Generate (or verify the cached) train/val/test splits of tasks; every label is checked against the ground truth."""
    from autonesy.tasks.data.dataset import build_dataset
    from autonesy.tasks.registry import TASK_NAMES, get_task

    rows = []
    with _user_errors():
        if all_tasks == bool(tasks):
            raise DataError("give task names or --all (not both)")
        names = list(TASK_NAMES) if all_tasks else list(dict.fromkeys(tasks))
        for name in names:
            get_task(name)  # unknown names fail before anything is built
        split_sizes = _parse_sizes(sizes)
        for name in names:
            report = build_dataset(name, data_dir, seed=seed, sizes=split_sizes, progress=None if progress else False, force=force)
            manifest = report.manifest
            rows.append({
                "task": name,
                "status": "built" if report.built else "cached",
                "seconds": round(report.seconds, 3),
                "provenance": manifest["provenance"],
                "sizes": manifest["sizes"],
                "x_shape": manifest["x_shape"],
                "seed": manifest["seed"],
                "directory": str(report.directory),
            })
            if not as_json:
                console.print(
                    f"{name}: {rows[-1]['status']} in {report.seconds:.2f} s "
                    f"({_sizes_text(manifest['sizes'])}, {manifest['provenance']})",
                    highlight=False, markup=False,
                )
    if as_json:
        _print_json(rows)
        return
    if rows:
        console.print(f"data directory: {Path(rows[0]['directory']).parents[2]}", highlight=False, markup=False)


@data_app.command("show")
def show(
    task_name: str = typer.Argument(..., help="A catalogue task name."),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help=DATA_DIR_HELP),
    seed: int = typer.Option(0, "--seed"),
    sizes: Optional[str] = typer.Option(None, "--sizes", help="TRAIN,VAL,TEST split sizes (default per task)."),
    grid: Optional[Path] = typer.Option(None, "--grid", help="Write a PNG grid of examples with their labels (image tasks)."),
    split: str = typer.Option("test", "--split", help="Split shown in the --grid picture."),
    count: int = typer.Option(16, "--count", help="Examples in the --grid picture."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Split sizes, provenance and label statistics of a task's data (built first if missing)."""
    from autonesy.tasks.data.dataset import label_statistics, load_dataset
    from autonesy.tasks.data.grid import render_grid
    from autonesy.tasks.registry import get_task

    from autonesy.tasks.data.generators import generator_for

    with _user_errors():
        get_task(task_name)
        if grid is not None and generator_for(task_name).modality != "image":
            raise DataError(f"{task_name}: its data are feature vectors, not images; --grid is for image tasks")
        dataset = load_dataset(task_name, data_dir, seed=seed, sizes=_parse_sizes(sizes), progress=None if not as_json else False)
        stats = label_statistics(dataset)
        grid_path = render_grid(dataset, grid, split=split, count=count) if grid is not None else None
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
        _print_json(record)
        return
    console.print(f"{dataset.task}: {dataset.provenance} data — {record['source']}", style="bold", highlight=False, markup=False)
    console.print(f"seed {dataset.seed}, generator {record['generator_version']}, in {dataset.directory}", highlight=False, markup=False)
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("split")
    for column in ("examples", "x shape", "distinct labels", "true per row", "all valid"):
        table.add_column(column, justify="right")
    for name, s in stats.items():
        table.add_row(name, f"{s['size']:,}", "x".join(map(str, s["x_shape"][1:])), f"{s['distinct_labels']:,}",
                      f"{s['mean_true_per_row']:.2f}", "yes" if s["all_valid"] else "NO")
    console.print(table)
    rates = stats["train"]["true_rate"]
    ordered = sorted(rates.items(), key=lambda kv: -kv[1])
    shown = ", ".join(f"{k} {v:.2f}" for k, v in ordered[:8])
    console.print(f"most often true (train): {shown}", highlight=False, markup=False)
    rare = [k for k, v in rates.items() if v == 0]
    if rare:
        console.print(f"never true (train): {len(rare)} variables, e.g. {', '.join(rare[:5])}", highlight=False, markup=False)
    if grid_path:
        console.print(f"wrote {grid_path}", highlight=False, markup=False)


# `data fetch` and `data load`: original datasets (tasks/data/fetch.py, tasks/data/loaders.py).


@data_app.command("fetch")
def fetch(
    name: str = typer.Argument(..., help="cifar10, cifar100 or sushi (the datasets we may not redistribute)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Folder to download into and unpack in (default: the data directory)."),
    force: bool = typer.Option(False, "--force", help="Download again even if the unpacked folder is already there."),
) -> None:
    """Download an original dataset that cannot ship with us; its terms are printed first and downloading accepts them."""
    from autonesy.tasks.data.fetch import EXTERNAL_DATASETS, FetchError, fetch_dataset
    from autonesy.tasks.data.store import resolve_data_dir

    with _user_errors():
        if name not in EXTERNAL_DATASETS:
            raise DataError(f"unknown dataset {name!r}; choose one of {', '.join(EXTERNAL_DATASETS)}")
        out = resolve_data_dir(out)
        try:
            folder = fetch_dataset(name, out, echo=typer.echo, force=force)
        except FetchError as error:
            raise DataError(str(error)) from None
    typer.echo(f"{name}: ready in {folder}; read it with: autonesy-agent data load {name} --data-dir {out}")


@data_app.command("load")
def load(
    task_name: str = typer.Argument(..., help="A task with an original-format loader (warcraft, cifar10, sushi, mn-add, …)."),
    data_dir: Optional[Path] = typer.Option(
        None, "--data-dir", "--source",
        help="Folder holding the original dataset in its own layout, or a data directory holding that folder "
        f"(default: ${ENV_VAR}, else the user cache directory).",
    ),
    drop_invalid: bool = typer.Option(False, "--drop-invalid", help="Skip label rows that violate the task's constraint instead of failing."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Read a task's train/val/test data from the original dataset's files and check every label."""
    from autonesy.tasks.data.dataset import label_statistics
    from autonesy.tasks.data.loaders import load_original
    from autonesy.tasks.data.store import resolve_data_dir

    with _user_errors():
        dataset = load_original(task_name, resolve_data_dir(data_dir), invalid="drop" if drop_invalid else None)
        stats = label_statistics(dataset)
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
        _print_json(record)
        return
    console.print(f"{dataset.task}: {record['source']}", style="bold", highlight=False, markup=False)
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("split")
    for column in ("examples", "dropped", "x shape", "distinct labels", "all valid"):
        table.add_column(column, justify="right")
    for name, s in stats.items():
        table.add_row(name, f"{s['size']:,}", f"{record['dropped'][name]:,}", "x".join(map(str, s["x_shape"][1:])),
                      f"{s['distinct_labels']:,}", "yes" if s["all_valid"] else "NO")
    console.print(table)
    console.print(record["notes"], highlight=False, markup=False)
