"""``tasks`` (the catalogue) and ``task show|export`` (one task)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from autonesy.graph.cli.common import cell, console, count_text, json_option, print_json, say, user_errors
from autonesy.graph.cli.plugins import warn_broken

TASK_HELP = "A catalogue task name, or a task file (*.toml)."


def list_tasks(as_json: bool = json_option("Print a JSON list instead of a table.")) -> None:
    """The 18-task catalogue and the installed plugins' tasks (``mypkg/name``) with ground-truth statistics;
    a plugin that cannot be used is one warning line."""
    from rich import box
    from rich.table import Table

    from autonesy.tasks.registry import load_task
    from autonesy.tasks.summary import task_summary
    from autonesy.tools import registry

    broken: list[registry.PluginError] = registry.load_plugins()
    rows = []
    with user_errors():
        for entry in registry.entries("task"):
            try:
                rows.append(task_summary(load_task(entry.name)))
            except registry.PluginError as failure:  # a plugin's task that cannot be built: not the catalogue's
                broken.append(failure)
    warn_broken(broken)
    if as_json:
        print_json(rows)
        return
    table = Table(title="tasks (auto-nesy-bench, then plugins)", box=box.SIMPLE_HEAD)
    table.add_column("task", no_wrap=True)
    for column in ("vars", "clauses", "aux", "published", "models"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("counted by")
    table.add_column("data")
    for row in rows:
        table.add_row(
            cell(row["name"]),
            str(row["num_vars"]),
            f"{row['num_clauses']:,}",
            str(row["num_aux_vars"]),
            f"{row['published_clauses']:,}" if row["published_clauses"] else "—",
            count_text(row["model_count"]),
            cell(row["count_method"]),
            cell(row["data_provenance"]),
        )
    console.print(table)


def show_task(
    name: str = typer.Argument(..., help=TASK_HELP),
    detail: str = typer.Option("detailed", "--detail", help="Description level: detailed or not-detailed."),
    as_json: bool = json_option(),
) -> None:
    """Variables with meanings, the description, and ground-truth statistics."""
    from rich.table import Table

    from autonesy.tasks.registry import load_task
    from autonesy.tasks.summary import task_record

    with user_errors():
        task = load_task(name)
        description = task.descriptions.get(detail)
        record = task_record(task)
    if as_json:
        print_json(record)
        return
    say(f"{task.name} — {task.metadata.source_dataset} ({task.metadata.licence})", style="bold")
    table = Table(show_header=True)
    table.add_column("#", justify="right")
    table.add_column("variable")
    table.add_column("meaning")
    for index, variable in enumerate(task.variables, start=1):
        table.add_row(str(index), cell(variable.name), cell(variable.meaning))
    console.print(table)
    say(f"Description ({detail})", style="bold")
    say(f"{description}\n")
    stats = {
        k: record[k]
        for k in (
            "num_clauses",
            "num_aux_vars",
            "published_clauses",
            "model_count",
            "count_method",
            "equivalence_method",
            "data_provenance",
        )
    }
    stats["model_count"] = count_text(stats["model_count"])  # str() refuses a count past 4,300 digits
    say("Ground truth: " + ", ".join(f"{k}={v}" for k, v in stats.items()))
    if task.metadata.design_notes:
        say(f"Design: {task.metadata.design_notes}")


def export_task(
    name: str = typer.Argument(..., help=TASK_HELP),
    out: Path = typer.Option(..., "--out", help="Directory for NAME.cnf and NAME.json."),
) -> None:
    """Write the ground truth as DIMACS (task variables 1..N named in comments) and the task as JSON
    (a plugin's task ``mypkg/name`` as ``mypkg+name.cnf``)."""
    from autonesy.graph.summary import json_safe
    from autonesy.tasks.registry import load_task
    from autonesy.tasks.summary import task_record
    from autonesy.tools import registry, safe_files
    from autonesy.tools.cnf import to_dimacs

    with user_errors():
        task = load_task(name)
        out = safe_files.output_dir(out)
        stem = registry.path_component(task.name)  # a plugin's mypkg/name is one file name
        cnf_path, json_path = out / f"{stem}.cnf", out / f"{stem}.json"
        ground_truth = to_dimacs(task.ground_truth, task.names, comments=[f"ground truth of task {task.name}"])
        safe_files.write_text(cnf_path, ground_truth)
        safe_files.write_text(json_path, json.dumps(json_safe(task_record(task)), indent=2))  # counts past 2^53 as text
    say(f"wrote {cnf_path} and {json_path}")


def register(app: typer.Typer) -> None:
    """Add ``tasks`` and the ``task`` group to the app."""
    app.command("tasks")(list_tasks)
    task_app = typer.Typer(help="Inspect and export one task.", no_args_is_help=True)
    task_app.command("show")(show_task)
    task_app.command("export")(export_task)
    app.add_typer(task_app, name="task")
