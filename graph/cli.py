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

from autonesy.agents.llm import LLMError
from autonesy.agents.policies import POLICIES
from autonesy.graph.attempt import TrainingRequest
from autonesy.graph.run import RunConfig, RunError, run_attempt
from autonesy.graph.trace import attempt_report, error_taxonomy, find_run_dirs
from autonesy.graph.cli_data import data_app
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
app.add_typer(data_app, name="data")
console = Console()
errors = Console(stderr=True)


class UserError(Exception):
    """A problem the user can fix; printed as one line, exit code 1."""


@contextlib.contextmanager
def user_errors() -> Iterator[None]:
    try:
        yield
    except (TaskError, UserError, RunError, LLMError, CompilationBudgetExceeded, OSError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(1) from None


def task_data(task_spec: str, data_dir: Optional[Path]):
    """The task's annotated splits (built on first use) for the oracle test and training; None for
    tasks without data (task files, external benchmarks)."""
    from autonesy.tasks.data.dataset import load_dataset
    from autonesy.tasks.registry import CATALOGUE

    if task_spec not in CATALOGUE:
        return None
    return load_dataset(task_spec, data_dir)


def training_labels(task_spec: str, data_dir: Optional[Path] = None):
    """The task's training labels for the oracle test (None for tasks without annotated data)."""
    dataset = task_data(task_spec, data_dir)
    return None if dataset is None else dataset.train.y


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
    bare = "<cnf" not in text.lower()
    if bare:  # a bare formula file: the whole file is the block
        text = f"<cnf>\n{text}\n</cnf>"
    conversion = convert(text, fmt, task.names)
    if conversion.error is not None:
        prefix = f"no <cnf> block, and the whole file is not a {fmt} formula either: " if bare else ""
        raise UserError(f"{file}: {prefix}{conversion.error}")
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
    task_name: Optional[str] = typer.Option(None, "--task", help="Catalogue task name."),
    task_file: Optional[Path] = typer.Option(None, "--task-file", help="A user task file (*.toml)."),
    llm: Optional[str] = typer.Option(None, "--llm", help="openai:MODEL | http://HOST:PORT/v1@MODEL | local | replay:TRACE | CONFIG.toml (default: $AUTONESY_LLM, else local)."),
    fmt: str = typer.Option("cpmpy", "--format", help=f"One of: {', '.join(FORMATS)}."),
    prompt: str = typer.Option("zs-cot", "--prompt", help="zs or zs-cot."),
    detail: str = typer.Option("detailed", "--detail", help=f"One of: {', '.join(DETAIL_LEVELS)}."),
    policy: Optional[str] = typer.Option(None, "--policy", help=f"One of: {', '.join(POLICIES)} (default: the prompt style)."),
    max_repairs: int = typer.Option(5, "--max-repairs", min=0, help="Syntax-repair rounds before rejecting."),
    out: Optional[Path] = typer.Option(None, "--out", help="Run directory (run again with the same one to resume)."),
    llm_timeout: float = typer.Option(120.0, "--llm-timeout", min=0.1, help="Seconds to wait for one LLM answer."),
    train: str = typer.Option("none", "--train", help="NeSy predictors to train on the accepted formula: spl,sl | spl | sl | none."),
    seeds: int = typer.Option(5, "--seeds", min=1, help="Training seeds (with --train)."),
    epochs: Optional[int] = typer.Option(None, "--epochs", min=1, help="Training epochs (with --train; default: the trainer's)."),
    data_dir: Optional[Path] = typer.Option(None, "--data-dir", help="Data directory (default: $AUTONESY_DATA_DIR, else the user cache)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Formalize one task end to end: formalize, check, repair, oracle-test, compile, score."""
    with user_errors():
        if (task_name is None) == (task_file is None):
            raise UserError("give exactly one of --task NAME or --task-file FILE")
        config = RunConfig(task=task_name or str(task_file), format=fmt, prompt=prompt, detail=detail,
                           policy=policy, llm=llm, max_repairs=max_repairs, llm_timeout_s=llm_timeout)
        notify = (lambda message: None) if as_json else (lambda message: errors.print(message, markup=False))
        dataset = task_data(config.task, data_dir)
        training = None
        if train != "none":
            from autonesy.nesy.evaluate import parse_methods

            if dataset is None:
                raise UserError(f"--train needs annotated data, and task {config.task!r} has none")
            try:
                methods = parse_methods(train)
            except ValueError as error:
                raise UserError(str(error)) from None
            training = TrainingRequest(methods, dataset, seeds, epochs, progress=not as_json)
        labels = dataset.train.y if dataset is not None else None
        summary = run_attempt(config, out, labels=labels, training=training, notify=notify)
    if as_json:
        _print_json(summary)
        return
    _print_summary(summary)


def _print_summary(summary: dict) -> None:
    status = "accepted" if summary["accepted"] else f"rejected — {summary['reason']}"
    lines = [f"{summary['task']} · {summary['format']} · {summary['policy']} · {summary['detail']} · {summary['llm']}",
             f"outcome: {status}",
             f"repair rounds: {summary['repair_rounds']}, semantic rounds: {summary['semantic_rounds']}, "
             f"autofixes: {', '.join(summary['autofixes']) or 'none'}",
             f"LLM calls: {summary['llm_calls']} ({summary['prompt_tokens']} prompt + {summary['completion_tokens']} "
             f"completion tokens, {summary['llm_seconds']:.1f} s)"]
    if summary["oracle_test"]:
        o = summary["oracle_test"]
        lines.append(f"oracle test: {'passed' if o['passed'] else 'failed'} ({o['labels_checked']} labels, "
                     f"{o['labels_rejected']} rejected; {o['probes_checked']} probes: {o['too_strict']} too strict, "
                     f"{o['too_permissive']} too permissive)")
    if summary["metrics"]:
        m = summary["metrics"]
        lines.append(f"vs ground truth: {m['relation']}, F1 {m['f1']:.4f} (precision {m['precision']:.4f}, "
                     f"recall {m['recall']:.4f}), MC-R {m['mc_ratio']:.4g}, counts by {m['count_method']}")
    training = summary.get("training")
    if training and "skipped" in training:
        lines.append(f"training: skipped — {training['skipped']}")
    compiled = summary["compiled"]
    if compiled:
        lines.append(f"circuit: SDD size {compiled['size']}" if compiled.get("ok") else f"circuit: not compiled — {compiled['note']}")
    lines.append(f"files: {summary['run_dir']}")
    console.print("\n".join(lines), highlight=False, markup=False)
    if training and "results" in training:
        from autonesy.nesy.evaluate import results_table

        rows = results_table(training)
        table = Table(title="downstream (test split, mean ± std over seeds)", box=box.SIMPLE_HEAD)
        for column in rows[0]:
            table.add_column(column)
        for row in rows[1:]:
            table.add_row(*row)
        console.print(table)


@app.command("trace")
def trace(
    run_dirs: list[Path] = typer.Argument(..., help="Run directories (or folders holding them)."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Show each attempt's repair loop and the error taxonomy (per format, model and error kind)."""
    with user_errors():
        reports = [attempt_report(path) for path in find_run_dirs(run_dirs)]
        taxonomy = error_taxonomy(reports)
    if as_json:
        _print_json({"attempts": reports, "taxonomy": taxonomy})
        return
    for report in reports:
        console.print(f"{report['run_dir']}: {report['task']} · {report['format']} · {report['policy']} · "
                      f"{report['model']} → {report['status']}" + (f" ({report['reason']})" if report["reason"] else ""),
                      highlight=False, markup=False)
        if report["autofixes"]:
            console.print(f"  autofixes: {', '.join(report['autofixes'])}", highlight=False, markup=False)
        for item in report["rounds"]:
            first_line = item["error"].splitlines()[0] if item["error"] else ""
            console.print(f"  round {item['round']}: [{item['error_kind']}] {first_line[:120]} → {item['verdict']}"
                          + (f" ({item['changed']})" if item.get("changed") else ""), highlight=False, markup=False)
        console.print(f"  LLM calls: {report['llm_calls']}", highlight=False, markup=False)
    if taxonomy:
        table = Table(title="syntax errors by format, model and kind", box=box.SIMPLE_HEAD)
        for column in ("format", "model", "error kind", "count"):
            table.add_column(column)
        for row in taxonomy:
            table.add_row(row["format"], Text(row["model"]), row["error_kind"], str(row["count"]))
        console.print(table)


from autonesy.graph import cli_sweep  # noqa: E402 - registers sweep and report

cli_sweep.register(app)

from autonesy.graph import cli_verify  # noqa: E402 - registers verify, follow and vifbench

cli_verify.register(app)


def main() -> None:  # pragma: no cover - console-script entry
    app()
