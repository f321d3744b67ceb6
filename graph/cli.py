"""The `autonesy-agent` command line: a thin layer over tasks/ and tools/ (no domain logic here)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Iterator, Optional

import typer
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from autonesy.tasks.registry import TASK_NAMES, load_task
from autonesy.tasks.summary import task_record, task_summary
from autonesy.tasks.task import DETAIL_LEVELS, TaskError
from autonesy.tools.cnf import to_dimacs
from autonesy.tools.compile import CompilationBudgetExceeded, compile_to_sdd
from autonesy.tools.counting import COUNT_METHODS
from autonesy.tools.formats import convert
from autonesy.tools.formats.base import FORMATS
from autonesy.tools.metrics import score_formula

app = typer.Typer(
    name="autonesy-agent",
    help="LLM agents that formalize constraints into CNF, score them against expert formulas, and train NeSy predictors.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
task_app = typer.Typer(help="Inspect and export one task.", no_args_is_help=True)
app.add_typer(task_app, name="task")
console = Console()


class UserError(Exception):
    """A problem the user can fix; printed as one line, exit code 1."""


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    try:
        yield
    except (TaskError, UserError, CompilationBudgetExceeded, OSError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None


def _print_json(data) -> None:
    typer.echo(json.dumps(data, indent=2, default=str))


@app.command("tasks")
def list_tasks(as_json: bool = typer.Option(False, "--json", help="Print a JSON list instead of a table.")) -> None:
    """The 18-task catalogue with ground-truth statistics."""
    with user_errors():
        rows = [task_summary(load_task(name)) for name in TASK_NAMES]
    if as_json:
        _print_json(rows)
        return
    table = Table(title="auto-nesy-bench tasks", box=box.SIMPLE_HEAD)
    table.add_column("task", no_wrap=True)
    for column in ("vars", "clauses", "aux", "published", "models"):
        table.add_column(column, justify="right", no_wrap=True)
    table.add_column("counted by")
    table.add_column("data")
    for row in rows:
        table.add_row(
            row["name"], str(row["num_vars"]), f"{row['num_clauses']:,}", str(row["num_aux_vars"]),
            f"{row['published_clauses']:,}" if row["published_clauses"] else "—",
            f"{row['model_count']:,}", row["count_method"], row["data_provenance"],
        )
    console.print(table)


@task_app.command("show")
def show_task(
    name: str = typer.Argument(..., help="A catalogue task name, or a task file (*.toml)."),
    detail: str = typer.Option("detailed", "--detail", help="Description level: detailed or not-detailed."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Variables with meanings, the description, and ground-truth statistics."""
    with user_errors():
        task = load_task(name)
        description = task.descriptions.get(detail)
        record = task_record(task)
    if as_json:
        _print_json(record)
        return
    console.print(f"{task.name} — {task.metadata.source_dataset} ({task.metadata.licence})", style="bold", markup=False)
    table = Table(show_header=True)
    table.add_column("#", justify="right")
    table.add_column("variable")
    table.add_column("meaning")
    for index, variable in enumerate(task.variables, start=1):
        table.add_row(str(index), Text(variable.name), Text(variable.meaning))
    console.print(table)
    console.print(f"Description ({detail})", style="bold")
    console.print(f"{description}\n", highlight=False, markup=False)
    stats = {k: record[k] for k in ("num_clauses", "num_aux_vars", "published_clauses", "model_count", "count_method", "equivalence_method", "data_provenance")}
    console.print("Ground truth: " + ", ".join(f"{k}={v}" for k, v in stats.items()), highlight=False, markup=False)
    if task.metadata.design_notes:
        console.print(f"Design: {task.metadata.design_notes}", highlight=False, markup=False)


@task_app.command("export")
def export_task(
    name: str = typer.Argument(..., help="A catalogue task name, or a task file (*.toml)."),
    out: Path = typer.Option(..., "--out", help="Directory for NAME.cnf and NAME.json."),
) -> None:
    """Write the ground truth as DIMACS (task variables 1..N named in comments) and the task as JSON."""
    with user_errors():
        task = load_task(name)
        out.mkdir(parents=True, exist_ok=True)
        cnf_path, json_path = out / f"{task.name}.cnf", out / f"{task.name}.json"
        cnf_path.write_text(to_dimacs(task.ground_truth, task.names, comments=[f"ground truth of task {task.name}"]))
        json_path.write_text(json.dumps(task_record(task), indent=2))
    console.print(f"wrote {cnf_path} and {json_path}", highlight=False, markup=False)


def _read_formula(task_name: str, fmt: str, file: Path):
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    task = load_task(task_name)
    text = file.read_text()
    if "<cnf" not in text.lower():  # a bare formula file: the whole file is the block
        text = f"<cnf>\n{text}\n</cnf>"
    conversion = convert(text, fmt, task.names)
    if conversion.error is not None:
        raise UserError(f"{file}: {conversion.error}")
    return task, conversion


@app.command("score")
def score(
    file: Path = typer.Argument(..., help="The formula text, with or without a <cnf> block."),
    task_name: str = typer.Option(..., "--task", help="Task name or task file."),
    fmt: str = typer.Option(..., "--format", help=f"One of: {', '.join(FORMATS)}."),
    method: str = typer.Option("auto", "--count", help=f"Counting method: {', '.join(COUNT_METHODS)}."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Score a formula against the task's ground truth (precision, recall, F1, relation, MC-R)."""
    with user_errors():
        task, conversion = _read_formula(task_name, fmt, file)
        result = score_formula(conversion.cnf, task.ground_truth, method)
    data = {**result.to_dict(), "task": task.name, "format": fmt, "autofixes": list(conversion.autofixes)}
    if as_json:
        _print_json(data)
        return
    console.print(
        f"{task.name}: relation {result.relation}, F1 {result.f1:.4f} "
        f"(precision {result.precision:.4f}, recall {result.recall:.4f}), MC-R {result.mc_ratio:.4g}\n"
        f"TP {result.tp:,}  FP {result.fp:,}  FN {result.fn:,}  TN {result.tn:,}  "
        f"(counts: {result.count_method}, {'exact' if result.exact else 'approximate'})",
        highlight=False, markup=False,
    )
    if conversion.autofixes:
        console.print("autofixes: " + ", ".join(conversion.autofixes), highlight=False, markup=False)


@app.command("compile")
def compile_formula(
    file: Path = typer.Argument(..., help="The formula text, with or without a <cnf> block."),
    task_name: str = typer.Option(..., "--task", help="Task name or task file."),
    fmt: str = typer.Option(..., "--format", help=f"One of: {', '.join(FORMATS)}."),
    out: Path = typer.Option(..., "--out", help="Directory for the DIMACS file and the SDD."),
    time_limit: float = typer.Option(60.0, "--time-limit", help="Compilation time budget in seconds."),
) -> None:
    """Convert a formula to CNF and compile it to an SDD over exactly the task's variables."""
    with user_errors():
        task, conversion = _read_formula(task_name, fmt, file)
        out.mkdir(parents=True, exist_ok=True)
        stem = file.stem
        (out / f"{stem}.cnf").write_text(to_dimacs(conversion.cnf, task.names))
        sdd = compile_to_sdd(conversion.cnf, time_limit_s=time_limit)
        sdd_path, vtree_path = sdd.save(out, stem)
    console.print(
        f"wrote {out / (stem + '.cnf')}, {sdd_path} and {vtree_path}: SDD size {sdd.size}, "
        f"{sdd.model_count():,} models over {task.num_vars} variables, {sdd.seconds:.2f} s",
        highlight=False, markup=False,
    )


@app.command("run")
def run(
    task_name: Optional[str] = typer.Option(None, "--task", help="Task name."),
    task_file: Optional[Path] = typer.Option(None, "--task-file", help="A user task file (*.toml)."),
    detail: str = typer.Option("detailed", "--detail", help=f"One of: {', '.join(DETAIL_LEVELS)}."),
) -> None:
    """Formalize one task end to end (the agentic pipeline lands with the graph; for now: the task it would run)."""
    with user_errors():
        if (task_name is None) == (task_file is None):
            raise UserError("give exactly one of --task NAME or --task-file FILE")
        task = load_task(task_name or str(task_file))
        task.descriptions.get(detail)
    show_task(task_name or str(task_file), detail=detail, as_json=False)


def main() -> None:  # pragma: no cover - console-script entry
    app()
