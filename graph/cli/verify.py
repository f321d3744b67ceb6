"""``verify``, ``follow`` and ``vifbench generate|eval``: the instruction-following verifier.

Exit codes of ``verify`` and ``follow``: 0 sat, 1 unsat (``follow``: the budget was spent without a
sat response), 2 an error — a one-line message, or a verdict that could not be reached (``unknown``).
``vifbench check`` exits the same way (0 sat, 1 unsat, 2 an error); the other ``vifbench`` commands
exit 1 on an error, like the rest of the command line.

``--llm`` takes every spec the formalization pipeline takes (a plugin's provider included). No
command reads a label before it scores: the label-reading plumbing models live in the tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from autonesy.graph.cli.common import (
    LLM_HELP,
    UserError,
    cell,
    console,
    json_option,
    listed,
    llm_timeout_option,
    max_reflections_option,
    print_json,
    progress_printer,
    say,
    user_errors,
)
from autonesy.graph.options import FEEDBACK_MODES, VERIFIERS
from autonesy.tools.config import CHECKER_TIMEOUT_S
from autonesy.tools.llm_spec import LLMSpec, default_llm

if TYPE_CHECKING:  # the command line is built without pydantic (tests/graph/test_cli_startup.py)
    from autonesy.graph.verify.summary import VerificationSummary

CHECK_TYPES = (  # the logic types of autonesy.tools.verify.checkers (a test keeps them equal)
    "keyword_inclusion",
    "keyword_exclusion",
    "response_title",
    "response_subsection_titles",
    "words_per_sentence",
    "even_odd_word_count",
    "total_word_count",
    "start_end_same_word",
    "subsections_start_end_same_word",
)
CHECKERS_HELP = "User checker module: FILE.py, MODULE or MODULE:FUNCTION (repeatable)."


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UserError(f"the {what} file {path} does not exist") from None
    except IsADirectoryError:
        raise UserError(f"the {what} file {path} is a directory") from None


def _spec(text: str | None) -> LLMSpec | None:
    """An ``--llm`` option parsed at the edge (a bad spec is one error line); None when not given."""
    return LLMSpec.parse(text) if text else None


def _backend(spec: LLMSpec) -> Any:
    """The backend of ``spec``."""
    from autonesy.agents.llm import backend_from_spec

    return backend_from_spec(spec)


def _verifiers(values: list[str]) -> list[str]:
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    for name in names:
        if name not in VERIFIERS:
            raise UserError(f"unknown verifier {name!r}; choose among {listed(VERIFIERS)}")
    return names or ["nsvif"]


def _print_verification(summary: VerificationSummary) -> None:
    llms = " + ".join(sorted(set(summary.llms.values())))
    lines = [f"{summary.status} · {summary.verifier} · {llms}"]
    if summary.rounds is not None:
        lines.append(
            f"rounds: {summary.rounds} of {summary.budget} ({summary.feedback} feedback): "
            + " → ".join(h["verdict"] for h in summary.history or [])
        )
    say("\n".join(lines))
    if summary.constraints:
        from rich import box
        from rich.table import Table

        table = Table(box=box.SIMPLE_HEAD)
        for column in ("id", "kind", "checked by", "holds", "constraint"):
            table.add_column(column)
        for c in summary.constraints:
            value = c.get("value")
            table.add_row(
                cell(c["id"]),
                cell(c.get("kind") or "—"),
                cell(c.get("method") or "—"),
                "—" if value is None else ("yes" if value else "no"),
                cell(c["summary"]),
            )
        console.print(table)
        say(f"formula:\n{summary.formula}")
    say(summary.explanation or summary.reason)
    say(
        f"LLM calls: {summary.llm_calls} ({summary.prompt_tokens} prompt + {summary.completion_tokens} "
        f"completion tokens, {summary.llm_seconds:.1f} s; {summary.cached_calls} cached), checker runs: "
        f"{summary.checker_runs} ({summary.checker_seconds:.2f} s), wall {summary.wall_seconds:.1f} s"
    )
    say(f"files: {summary.run_dir}")


def _exit_code(summary: VerificationSummary) -> int:
    return {"sat": 0, "unsat": 1}.get(summary.status, 2)


def verify(
    instruction: Path = typer.Option(..., "--instruction", help="A text file holding the instruction."),
    output: Path = typer.Option(..., "--output", help="A text file holding the response to verify."),
    llm: str | None = typer.Option(None, "--llm", help=LLM_HELP),
    formulation_llm: str | None = typer.Option(
        None, "--formulation-llm", help="LLM of the formulation agent (default: --llm)."
    ),
    checker_llm: str | None = typer.Option(
        None, "--checker-llm", help="LLM of the checking agent: plans and checker code (default: --llm)."
    ),
    judge_llm: str | None = typer.Option(None, "--judge-llm", help="LLM of the judge (default: --llm)."),
    verifier: str = typer.Option("nsvif", "--verifier", help=f"One of: {listed(VERIFIERS)}."),
    checkers: list[str] = typer.Option([], "--checkers", help=CHECKERS_HELP),
    entry_points: bool = typer.Option(
        False,
        "--entry-point-checkers",
        help="Also load checkers installed under the autonesy.verify_checkers entry points.",
    ),
    max_reflections: int = max_reflections_option("Self-reflection rounds on a failing checker before the LLM judges."),
    checker_timeout: float = typer.Option(
        CHECKER_TIMEOUT_S, "--checker-timeout", min=0.1, help="Seconds one checker run may take."
    ),
    out: Path | None = typer.Option(None, "--out", help="Run directory (the same one resumes)."),
    llm_timeout: float = llm_timeout_option(),
    as_json: bool = json_option("Print the summary as JSON."),
) -> None:
    """Verify that a response follows an instruction: exit 0 if sat, 1 if unsat, 2 on an error."""
    from autonesy.graph.verify.run import VerifyConfig, verify_output

    with user_errors(2):
        text, response = _read(instruction, "instruction"), _read(output, "output")
        spec, formulation, checker, judge = map(_spec, (llm, formulation_llm, checker_llm, judge_llm))
        config = VerifyConfig(
            verifier=verifier,
            llm=spec,
            formulation_llm=formulation,
            checker_llm=checker,
            judge_llm=judge,
            checkers=list(checkers),
            entry_point_checkers=entry_points,
            max_reflections=max_reflections,
            checker_wall_s=checker_timeout,
            llm_timeout_s=llm_timeout,
        )
        summary = verify_output(text, response, config, out, notify=progress_printer(as_json))
    if as_json:
        print_json(summary.model_dump())
    else:
        _print_verification(summary)
    raise typer.Exit(_exit_code(summary))


def follow(
    instruction: Path = typer.Option(..., "--instruction", help="A text file holding the instruction."),
    llm: str | None = typer.Option(None, "--llm", help=LLM_HELP),
    writer_llm: str | None = typer.Option(None, "--writer-llm", help="LLM that writes the responses (default: --llm)."),
    judge_llm: str | None = typer.Option(None, "--judge-llm", help="LLM of the judge (default: --llm)."),
    verifier: str = typer.Option("nsvif", "--verifier", help=f"One of: {listed(VERIFIERS)}."),
    feedback: str = typer.Option(
        "explanation",
        "--feedback",
        help=f"What the writer is told after a failed check: {' or '.join(FEEDBACK_MODES)} (the verdict only).",
    ),
    budget: int = typer.Option(5, "--budget", min=1, help="Responses written at most."),
    checkers: list[str] = typer.Option([], "--checkers", help=CHECKERS_HELP),
    max_reflections: int = max_reflections_option(),
    out: Path | None = typer.Option(None, "--out", help="Run directory (the same one resumes)."),
    llm_timeout: float = llm_timeout_option(),
    as_json: bool = json_option(),
) -> None:
    """Write a response, verify it, rewrite it with the explanation until it is sat or the budget is spent."""
    from autonesy.graph.verify.run import VerifyConfig, verify_output

    with user_errors(2):
        text = _read(instruction, "instruction")
        spec, judge, writer = map(_spec, (llm, judge_llm, writer_llm))
        config = VerifyConfig(
            verifier=verifier,
            llm=spec,
            judge_llm=judge,
            writer_llm=writer,
            checkers=list(checkers),
            max_reflections=max_reflections,
            llm_timeout_s=llm_timeout,
            budget=budget,
            feedback=feedback,
        )
        summary = verify_output(text, None, config, out, notify=progress_printer(as_json))
    if as_json:
        print_json(summary.model_dump())
    else:
        _print_verification(summary)
        say("final response:\n" + (summary.output or ""))
    raise typer.Exit(_exit_code(summary))


def generate(
    out: Path = typer.Option(..., "--out", help="Directory for vifbench.jsonl and stats.json."),
    count: int | None = typer.Option(
        None, "--count", min=1, help="Only the first N instructions (groups interleaved; default: all 820)."
    ),
    seed: int = typer.Option(0, "--seed"),
    llm: str | None = typer.Option(
        None, "--llm", help="Let this LLM write the responses (default: synthesised offline). " + LLM_HELP
    ),
    llm_timeout: float = llm_timeout_option(),
    as_json: bool = json_option(),
) -> None:
    """Write VifBench (the Nsvif paper's §A.1–A.2): 820 labelled <instruction, response, verdict> pairs."""
    from autonesy.graph.verify.vifbench import generate_data

    with user_errors(1):
        spec = _spec(llm)
        summary = generate_data(out, count, seed, llm=spec, llm_timeout_s=llm_timeout)
    if as_json:
        print_json(summary)
        return
    from rich import box
    from rich.table import Table

    table = Table(title=cell(f"{summary['pairs']} labelled pairs in {summary['data']}"), box=box.SIMPLE_HEAD)
    for column in (
        "group",
        "instructions",
        "sat",
        "unsat",
        "mean constraints",
        "labels true",
        "labels false",
        "regen.",
    ):
        table.add_column(column, justify="right")
    for group, row in summary["distribution"].items():
        table.add_row(
            cell(group),
            str(row["instructions"]),
            str(row["sat"]),
            str(row["unsat"]),
            f"{row['mean_constraints']:.1f}",
            str(row["labels_true"]),
            str(row["labels_false"]),
            str(row["regenerations"]),
        )
    console.print(table)
    say("sources: " + ", ".join(f"{k} {v}" for k, v in summary["sources"].items()))
    made = summary["composition"]
    say(
        "beside the paper (stats.json): sat/unsat {} (paper {}); unsat with two or more violations {}; most "
        "violated {} (paper {})".format(
            "/".join(map(str, made["sat_unsat"]["ours"])),
            "/".join(map(str, made["sat_unsat"]["paper"])),
            made["unsat_violating_two_or_more"]["ours"],
            ", ".join(made["most_violated"]["ours"]),
            ", ".join(made["most_violated"]["paper"]),
        )
    )
    if "semantic_audit" in summary:
        audit = summary["semantic_audit"]
        say(f"semantic audit: the judge agrees with {audit['agree']} of {audit['judged']} tone/topic labels sampled")


def evaluate(
    data: Path = typer.Option(..., "--data", help="vifbench.jsonl (or the directory holding it)."),
    verifier: list[str] = typer.Option(
        ["nsvif"], "--verifier", help=f"{' | '.join(VERIFIERS)}; repeat or comma-separate to compare."
    ),
    llm: str | None = typer.Option(
        None,
        "--llm",
        help=LLM_HELP,
    ),
    formulation_llm: str | None = typer.Option(None, "--formulation-llm"),
    checker_llm: str | None = typer.Option(None, "--checker-llm"),
    judge_llm: str | None = typer.Option(None, "--judge-llm"),
    checkers: list[str] = typer.Option([], "--checkers", help=CHECKERS_HELP),
    max_reflections: int = max_reflections_option(),
    out: Path = typer.Option(
        ...,
        "--out",
        help="Directory for results-VERIFIER.jsonl, metrics.json, report.md and table-*.csv (the same one resumes).",
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N pairs."),
    workers: int = typer.Option(1, "--workers", min=1, help="Verifications run at the same time."),
    llm_timeout: float = llm_timeout_option(),
    judge_guidance: Path | None = typer.Option(
        None,
        "--judge-guidance",
        help="gepa-cot: the guidance.txt 'vifbench optimize-judge' wrote; the instructions it was optimised on "
        "(optimize.json beside it) are left out of the scored pairs, for every verifier.",
    ),
    as_json: bool = json_option(),
) -> None:
    """Score verifiers on labelled pairs: the Nsvif paper's tables (F1, precision, recall, pass@1, FP/FN; per
    complexity group; LLM calls and the server's prompt and completion tokens), as Markdown and CSV."""
    from autonesy.graph.verify.run import VerifyConfig
    from autonesy.graph.verify.vifbench import evaluate as run_eval
    from autonesy.graph.verify.vifbench import read_optimised_on, report_markdown

    with user_errors(1):
        names = _verifiers(verifier)
        spec, formulation, checker, judge = map(_spec, (llm, formulation_llm, checker_llm, judge_llm))
        config = VerifyConfig(
            llm=spec,
            formulation_llm=formulation,
            checker_llm=checker,
            judge_llm=judge,
            checkers=list(checkers),
            max_reflections=max_reflections,
            llm_timeout_s=llm_timeout,
            judge_guidance=_read(judge_guidance, "judge guidance") if judge_guidance else None,
        )
        optimised_on = read_optimised_on(judge_guidance) if judge_guidance and "gepa-cot" in names else None
        report = run_eval(
            data,
            names,
            config,
            out,
            limit=limit,
            workers=workers,
            optimised_on=optimised_on,
            notify=progress_printer(as_json),
        )
    if as_json:
        print_json(report)
        return
    say(report_markdown(report))
    say(f"files: {report['out']}")


def import_ifeval(
    out: Path = typer.Option(..., "--out", help="Directory for vifbench.jsonl and stats.json."),
    source: Path | None = typer.Option(
        None, "--source", help="Labelled IFEval rows (default: the shipped GPT-4 file)."
    ),
) -> None:
    """IFEval's 541 prompts with GPT-4's responses, labelled by IFEval's checkers (Apache-2.0)."""
    from autonesy.graph.verify.vifbench import import_ifeval as run_import

    with user_errors(1):
        summary = run_import(out, source)
    print_json(summary)


def check(
    constraint_type: str = typer.Argument(..., metavar="TYPE", help="One of: " + ", ".join(CHECK_TYPES) + "."),
    output: Path = typer.Option(..., "--output", help="The response to check (a text file)."),
    param: list[str] = typer.Option(
        [],
        "--param",
        help="KEY=VALUE (repeatable): keywords=A,B | titles=A|B | title=TEXT | max=N | target=N | parity=even|odd.",
    ),
    as_json: bool = json_option('Print {"verdict": ..., "evidence": ...}.'),
) -> None:
    """Check one VifBench logic constraint on a response, with Table 5's conventions: prints sat or unsat.

    Exit code 0 sat, 1 unsat, 2 an error (one line). "around N" words (total_word_count) means within
    max(3, 10 % of N) of N; title and subsection title lines are not counted.
    """
    from autonesy.tools.verify.constraint_check import check_constraint

    with user_errors(2):
        result = check_constraint(constraint_type, _read(output, "output"), param)
    if as_json:
        print_json(result)
    else:
        typer.echo(result["verdict"])
    raise typer.Exit(0 if result["verdict"] == "sat" else 1)


def _print_offline(report: dict[str, Any]) -> None:
    constraints, prompts = report["constraints"], report["prompts"]
    say(f"measures: {report['measures']}")
    if constraints["decided"]:
        say(
            f"constraint-level accuracy {constraints['agree']}/{constraints['decided']} = "
            f"{100 * constraints['accuracy']:.2f} % (semantic, unknown offline: {constraints['semantic_unknown']})"
        )
    say(
        f"prompt-level accuracy {prompts['agree']}/{prompts['n']} = {100 * (prompts['accuracy'] or 0):.2f} % "
        f"(sat by the labels {prompts['label_sat']}; FP {prompts['fp']}, FN {prompts['fn']}, unknown {prompts['unknown']})"
    )
    for d in report["disagreements"]:
        say(f"  {d['id']} {d['constraint']} {d['type']}: ours {d['ours']}, label {d['label']}")


def offline_ifeval(
    source: Path | None = typer.Option(
        None, "--source", help="Labelled IFEval rows (default: the shipped GPT-4 file)."
    ),
    as_json: bool = json_option(),
) -> None:
    """Nsvif's checker-and-solver half on IFEval, offline: constraints and formula from IFEval's metadata,
    our checkers, Z3; accuracy against IFEval's strict labels (read only to score)."""
    from autonesy.graph.verify.offline import ifeval_offline

    with user_errors(1):
        report = ifeval_offline(source)
    print_json(report) if as_json else _print_offline(report)


def offline_data(
    data: Path = typer.Option(..., "--data", help="vifbench.jsonl (or the directory holding it)."),
    as_json: bool = json_option(),
) -> None:
    """The same offline track on VifBench-format data: constraints and formula from each pair's metadata,
    our checkers, Z3 (semantic constraints unknown); accuracy against the pairs' labels."""
    from autonesy.graph.verify.offline import data_offline

    with user_errors(1):
        report = data_offline(data)
    print_json(report) if as_json else _print_offline(report)


def optimize_judge(
    data: Path = typer.Option(..., "--data", help="Labelled pairs; the first half of their instructions is used."),
    out: Path = typer.Option(..., "--out", help="Directory for guidance.txt."),
    llm: str | None = typer.Option(None, "--llm", help="The judge's LLM. " + LLM_HELP),
    reflection_llm: str | None = typer.Option(None, "--reflection-llm", help="GEPA's reflection LLM (default: --llm)."),
    max_metric_calls: int = typer.Option(60, "--max-metric-calls", min=1),
) -> None:
    """GEPA-CoT: optimise the CoT judge's guidance with GEPA (optional extra 'gepa')."""
    from autonesy.graph.verify.vifbench import optimize_judge as run_optimize

    with user_errors(1):
        judge_spec, reflection_spec = _spec(llm) or default_llm(), _spec(reflection_llm)
        judge = _backend(judge_spec)
        reflection = _backend(reflection_spec) if reflection_spec is not None else None
        result = run_optimize(
            data, out, backend=judge, reflection_backend=reflection, max_metric_calls=max_metric_calls
        )
    print_json(result)


def register(app: typer.Typer) -> None:
    """Add ``verify``, ``follow`` and the ``vifbench`` group to the app."""
    app.command("verify")(verify)
    app.command("follow")(follow)
    vifbench_app = typer.Typer(help="VifBench-style labelled data and verifier evaluation.", no_args_is_help=True)
    vifbench_app.command("generate")(generate)
    vifbench_app.command("check")(check)
    vifbench_app.command("eval")(evaluate)
    vifbench_app.command("optimize-judge")(optimize_judge)
    vifbench_app.command("offline-ifeval")(offline_ifeval)
    vifbench_app.command("offline")(offline_data)
    import_app = typer.Typer(help="Labelled data from other benchmarks, as VifBench records.", no_args_is_help=True)
    import_app.command("ifeval")(import_ifeval)
    vifbench_app.add_typer(import_app, name="import")
    app.add_typer(vifbench_app, name="vifbench")
