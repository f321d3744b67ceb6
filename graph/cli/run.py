"""``run``: formalize one task end to end (``autonesy.formalize``; the runner, ``graph/run.py``, resolves the task, its data and training)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from autonesy.agents.options import PROMPT_STYLES
from autonesy.graph.cli.common import (
    INFRA_FAILED_EXIT,
    LLM_HELP,
    UserError,
    cache_option,
    cell,
    console,
    count_text,
    data_dir_option,
    infra_failed_line,
    json_option,
    listed,
    llm_timeout_option,
    max_repairs_option,
    max_tokens_option,
    print_json,
    progress_printer,
    say,
    score_text,
    user_errors,
)
from autonesy.tasks.options import DETAIL_LEVELS
from autonesy.tools.options import FORMATS

if TYPE_CHECKING:  # the command line is built without pydantic (tests/graph/test_cli_startup.py)
    from autonesy.graph.summary import RunSummary


def run(
    task_name: str | None = typer.Option(None, "--task", help="Task name (catalogue, or a plugin's mypkg/name)."),
    task_file: Path | None = typer.Option(None, "--task-file", help="A user task file (*.toml)."),
    llm: str | None = typer.Option(None, "--llm", help=LLM_HELP),
    fmt: str = typer.Option("cpmpy", "--format", help=f"One of: {listed(FORMATS)}."),
    prompt: str = typer.Option("zs-cot", "--prompt", help=f"One of: {listed(PROMPT_STYLES)}."),
    detail: str = typer.Option("detailed", "--detail", help=f"One of: {listed(DETAIL_LEVELS)}."),
    policy: str | None = typer.Option(
        None,
        "--policy",
        help="A registered policy, a plugin's as mypkg/name (autonesy-agent plugins lists them; "
        "default: the prompt style).",
    ),
    decoding: str | None = typer.Option(
        None,
        "--decoding",
        help="free | grammar (decode under the format's answer grammar; default: grammar for the embedded model, "
        "else free).",
    ),
    max_repairs: int = max_repairs_option(),
    out: Path | None = typer.Option(None, "--out", help="Run directory (run again with the same one to resume)."),
    llm_timeout: float = llm_timeout_option(),
    max_tokens: int | None = max_tokens_option(),
    cache: bool = cache_option(),
    train: str = typer.Option(
        "auto",
        "--train",
        help="NeSy predictors to train on the accepted formula: spl,sl | spl | sl | none | auto (the default: "
        "spl,sl on a short schedule with the embedded model, none otherwise).",
    ),
    seeds: int | None = typer.Option(
        None, "--seeds", min=1, help="Training seeds (with --train; default 5, 1 with --train auto)."
    ),
    epochs: int | None = typer.Option(
        None, "--epochs", min=1, help="Training epochs (with --train; default: the trainer's)."
    ),
    data_dir: Path | None = data_dir_option(),
    as_json: bool = json_option("Print the summary as JSON."),
) -> None:
    """Formalize one task end to end: formalize, check, repair, oracle-test, compile, score.

    Exit status: 0 when the attempt ended accepted or rejected, 3 when it ended infra_failed (the LLM
    endpoint failed past its retries; running it again with the same --out retries it), 1 on an error."""
    from autonesy import formalize

    with user_errors():
        if (task_name is None) == (task_file is None):
            raise UserError("give exactly one of --task NAME or --task-file FILE")
        summary = formalize(
            task_name or str(task_file),
            llm=llm or None,
            policy=policy,
            format=fmt,
            prompt=prompt,
            detail=detail,
            out=out,
            max_repairs=max_repairs,
            decoding=decoding,
            cache=cache,
            llm_timeout=llm_timeout,
            max_tokens=max_tokens,
            data=True,
            data_dir=data_dir,
            train=train,
            seeds=seeds,
            epochs=epochs,
            progress=not as_json,
            notify=None if as_json else progress_printer(False),
        )
    if as_json:
        print_json(summary.model_dump())
    else:
        print_summary(summary)
    if summary.status == "infra_failed":
        typer.echo(infra_failed_line(1, f"running it again with --out {summary.run_dir}"), err=True)
        raise typer.Exit(INFRA_FAILED_EXIT)
    if summary.status == "error":
        typer.echo(f"error: the attempt failed ({summary.failure}): {summary.reason}", err=True)
        raise typer.Exit(1)


LOCAL_SUMMARY = (
    "this was the embedded smoke-test model (Gemma 3 270M): it shows every step works — formalize under "
    "the format's grammar, check, repair, compile, score against the expert formula, train SPL and SL "
    "— but its formulas are poor (see the F1 above). For real formalizations point --llm at a capable "
    "model (docs/llms.md)."
)


def outcome_text(summary: RunSummary) -> str:
    """The outcome for a person: ``accepted`` says what it means and never stands without the relation
    to the ground truth and the F1 (an accepted formula may be far from right)."""
    if summary.status == "accepted":
        m = summary.metrics
        if m is not None and m.relation:
            score = f"relation {m.relation}, F1 {score_text(m.f1)}"
        elif m is not None:
            score = "not scored: the model count timed out"
        else:
            score = "not scored: the task has no ground truth"
        passed = summary.oracle_test.passed if summary.oracle_test else None
        verdict = "" if passed is None else f"oracle test {'passed' if passed else 'failed'}; "
        return f"accepted (the formula parsed and passed the syntax checks; {verdict}{score})"
    failure = f" ({summary.failure})" if summary.failure else ""
    if summary.status == "infra_failed":
        return f"infra_failed{failure}, not scored — {summary.reason}"
    return f"{summary.status}{failure} — {summary.reason}"


def print_summary(summary: RunSummary) -> None:
    """The summary in a few lines for a person (``--json`` prints it whole)."""
    lines = [
        f"{summary.task} · {summary.format} · {summary.policy} · {summary.detail} · {summary.llm}"
        f" · {summary.decoding} decoding",
        f"outcome: {outcome_text(summary)}",
        f"repair rounds: {summary.repair_rounds}, semantic rounds: {summary.semantic_rounds}, "
        f"autofixes: {', '.join(summary.autofixes) or 'none'}",
        f"LLM calls: {summary.llm_calls} ({summary.prompt_tokens} prompt + {summary.completion_tokens} "
        f"completion tokens, {summary.llm_seconds:.1f} s)"
        + (f"; {summary.cached_calls} answered from the response cache" if summary.cached_calls else ""),
    ]
    if o := summary.oracle_test:
        lines.append(
            f"oracle test: {'passed' if o.passed else 'failed'} ({o.labels_checked} labels, "
            f"{o.labels_rejected} rejected; {o.probes_checked} probes: {o.too_strict} too strict, "
            f"{o.too_permissive} too permissive)"
        )
    if (m := summary.metrics) and m.relation:  # a score whose count timed out has none of these
        lines.append(
            f"vs ground truth: {m.relation}, F1 {score_text(m.f1)} (precision {score_text(m.precision)}, "
            f"recall {score_text(m.recall)}), MC-R {m.mc_ratio:.4g}, counts by {m.count_method}"
        )
    training = summary.training
    if training and "skipped" in training:
        lines.append(f"training: skipped — {training['skipped']}")
    if compiled := summary.compiled:
        lines.append(
            f"circuit: SDD size {compiled.size}, {count_text(compiled.model_count)} models over the task variables"
            if compiled.ok
            else f"circuit: not compiled — {compiled.note}"
        )
    lines.append(f"files: {summary.run_dir}")
    say("\n".join(lines))
    if training and "results" in training:
        from rich import box
        from rich.table import Table

        from autonesy.nesy.evaluate import results_table

        rows = results_table(training)
        table = Table(title="downstream (test split, mean ± std over seeds)", box=box.SIMPLE_HEAD)
        for column in rows[0]:
            table.add_column(column)
        for row in rows[1:]:
            table.add_row(*map(cell, row))
        console.print(table)
    if (summary.llm or "").startswith("local"):
        say(f"note: {LOCAL_SUMMARY}")


def register(app: typer.Typer) -> None:
    """Add ``run`` to the app."""
    app.command("run")(run)
