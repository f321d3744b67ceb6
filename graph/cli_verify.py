"""Command line of the instruction-following verifier: ``verify``, ``follow``, ``vifbench generate|eval``.

Registered on the main app by ``register(app)`` (called at the end of :mod:`autonesy.graph.cli`).
Exit codes of ``verify`` and ``follow``: 0 sat, 1 unsat (``follow``: the budget was spent without a
sat response), 2 an error — a one-line message, or a verdict that could not be reached (``unknown``).
``vifbench`` commands exit 1 on an error, like the rest of the command line.

``--llm`` takes every spec the formalization pipeline takes, plus ``oracle`` (``vifbench eval``: the
scripted VifBench ground-truth model built from the evaluated data — the verifier's self-test) and
``oracle:DATA.jsonl`` (the same, from a data file, for any command), and ``flawed`` / ``flawed:DATA.jsonl``
(the oracle with the failure modes the Nsvif paper reports — the scripted run that tells verifiers apart).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Iterator, Optional

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from autonesy.agents.llm import ChatBackend, LangChainChatBackend, LLMError
from autonesy.graph.verify import FEEDBACK_MODES, VERIFIERS

console = Console()
errors = Console(stderr=True)
LLM_HELP = ("openai:MODEL | http://HOST:PORT/v1@MODEL | local | replay:TRACE | CONFIG.toml | oracle:DATA.jsonl "
            "(default: $AUTONESY_LLM, else local).")


class CommandError(Exception):
    """A problem the user can fix; printed as one line."""


@contextlib.contextmanager
def one_line_errors(code: int) -> Iterator[None]:
    from autonesy.graph.verify_run import VerifyError
    from autonesy.tools.user_checkers import UserCheckerError

    try:
        yield
    except (CommandError, VerifyError, UserCheckerError, LLMError, OSError, UnicodeDecodeError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(code) from None


def _print_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, default=str))


def _read(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CommandError(f"the {what} file {path} does not exist") from None
    except IsADirectoryError:
        raise CommandError(f"the {what} file {path} is a directory") from None


def oracle_backend(records: list[dict[str, Any]], kind: str = "oracle") -> ChatBackend:
    from autonesy.agents.verify import flawed_chat_model, oracle_chat_model

    try:
        model = oracle_chat_model(records) if kind == "oracle" else flawed_chat_model(records)
    except (ValueError, KeyError) as error:
        raise CommandError(f"'--llm {kind}' answers from VifBench records only ({error})") from None
    return LangChainChatBackend(model, kind, model.model_name, retries=1)


def _special(spec: Optional[str], records: list[dict[str, Any]] | None = None) -> ChatBackend | None:
    """A backend for the scripted specs (``oracle``, ``flawed``, with ``:DATA.jsonl``); None for every
    other spec (resolved by ``backend_from_spec``)."""
    if not _is_special(spec):
        return None
    kind, _, path = spec.partition(":")
    if not path:
        if records is None:
            raise CommandError(f"'--llm {kind}' answers from the evaluated data; elsewhere write {kind}:DATA.jsonl")
        return oracle_backend(records, kind)
    from autonesy.graph.vifbench import read_data

    return oracle_backend(read_data(Path(path)), kind)


def _role_backends(specs: dict[str, Optional[str]], records=None) -> dict[str, ChatBackend]:
    """Backends for the roles whose spec is an ``oracle`` spec (one backend per distinct spec)."""
    found, made = {}, {}
    for role, spec in specs.items():
        if spec is not None and spec not in made:
            made[spec] = _special(spec, records)
        if spec is not None and made[spec] is not None:
            found[role] = made[spec]
    return found


def _is_special(spec: Optional[str]) -> bool:
    return spec is not None and spec.partition(":")[0] in ("oracle", "flawed")


def _verifiers(values: list[str]) -> list[str]:
    names = [name.strip() for value in values for name in value.split(",") if name.strip()]
    for name in names:
        if name not in VERIFIERS:
            raise CommandError(f"unknown verifier {name!r}; choose among {', '.join(VERIFIERS)}")
    return names or ["nsvif"]


def _print_verification(summary: dict[str, Any]) -> None:
    status = summary["status"]
    llms = " + ".join(sorted(set(summary["llms"].values())))
    lines = [f"{status} · {summary['verifier']} · {llms}"]
    if summary.get("rounds") is not None:
        lines.append(f"rounds: {summary['rounds']} of {summary['budget']} ({summary['feedback']} feedback): "
                     + " → ".join(h["verdict"] for h in summary["history"]))
    console.print("\n".join(lines), highlight=False, markup=False)
    if summary["constraints"]:
        table = Table(box=box.SIMPLE_HEAD)
        for column in ("id", "kind", "checked by", "holds", "constraint"):
            table.add_column(column)
        for c in summary["constraints"]:
            value = c.get("value")
            table.add_row(c["id"], str(c.get("kind") or "—"), str(c.get("method") or "—"),
                          "—" if value is None else ("yes" if value else "no"), c["summary"])
        console.print(table)
        console.print(f"formula:\n{summary['formula']}", highlight=False, markup=False)
    console.print(summary["explanation"] or summary["reason"], highlight=False, markup=False)
    console.print(f"LLM calls: {summary['llm_calls']} ({summary['prompt_tokens']} prompt + {summary['completion_tokens']} "
                  f"completion tokens, {summary['llm_seconds']:.1f} s; {summary['cached_calls']} cached), checker runs: "
                  f"{summary['checker_runs']} ({summary['checker_seconds']:.2f} s), wall {summary['wall_seconds']:.1f} s",
                  highlight=False, markup=False)
    console.print(f"files: {summary['run_dir']}", highlight=False, markup=False)


def _exit_code(summary: dict[str, Any]) -> int:
    return {"sat": 0, "unsat": 1}.get(summary["status"], 2)


def register(app: typer.Typer) -> None:
    """Add ``verify``, ``follow`` and the ``vifbench`` group to the main app."""
    vifbench_app = typer.Typer(help="VifBench-style labelled data and verifier evaluation.", no_args_is_help=True)
    app.add_typer(vifbench_app, name="vifbench")

    @app.command("verify")
    def verify(
        instruction: Path = typer.Option(..., "--instruction", help="A text file holding the instruction."),
        output: Path = typer.Option(..., "--output", help="A text file holding the response to verify."),
        llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP),
        formulation_llm: Optional[str] = typer.Option(None, "--formulation-llm", help="LLM of the formulation agent (default: --llm)."),
        checker_llm: Optional[str] = typer.Option(None, "--checker-llm", help="LLM of the checking agent: plans and checker code (default: --llm)."),
        judge_llm: Optional[str] = typer.Option(None, "--judge-llm", help="LLM of the judge (default: --llm)."),
        verifier: str = typer.Option("nsvif", "--verifier", help=f"One of: {', '.join(VERIFIERS)}."),
        checkers: list[str] = typer.Option([], "--checkers", help="User checker module: FILE.py, MODULE or MODULE:FUNCTION (repeatable)."),
        entry_points: bool = typer.Option(False, "--entry-point-checkers", help="Also load checkers installed under the autonesy.verify_checkers entry points."),
        max_reflections: int = typer.Option(3, "--max-reflections", min=0, help="Self-reflection rounds on a failing checker before the LLM judges."),
        checker_timeout: float = typer.Option(10.0, "--checker-timeout", min=0.1, help="Seconds one checker run may take."),
        out: Optional[Path] = typer.Option(None, "--out", help="Run directory (the same one resumes)."),
        llm_timeout: float = typer.Option(120.0, "--llm-timeout", min=0.1, help="Seconds to wait for one LLM answer."),
        as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    ) -> None:
        """Verify that a response follows an instruction: exit 0 if sat, 1 if unsat, 2 on an error."""
        from autonesy.graph.verify_run import VerifyConfig, verify_output

        with one_line_errors(2):
            text, response = _read(instruction, "instruction"), _read(output, "output")
            specs = {"formulation": formulation_llm or llm, "checker": checker_llm or llm, "judge": judge_llm or llm,
                     "writer": llm}
            given = _role_backends(specs)
            config = VerifyConfig(verifier=verifier, llm=llm.partition(":")[0] if _is_special(llm) else llm,
                                  formulation_llm=formulation_llm, checker_llm=checker_llm, judge_llm=judge_llm,
                                  checkers=list(checkers), entry_point_checkers=entry_points,
                                  max_reflections=max_reflections, checker_wall_s=checker_timeout,
                                  llm_timeout_s=llm_timeout)
            notify = (lambda m: None) if as_json else (lambda m: errors.print(m, markup=False))
            summary = verify_output(text, response, config, out, backends=given, notify=notify)
        if as_json:
            _print_json(summary)
        else:
            _print_verification(summary)
        raise typer.Exit(_exit_code(summary))

    @app.command("follow")
    def follow(
        instruction: Path = typer.Option(..., "--instruction", help="A text file holding the instruction."),
        llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP),
        writer_llm: Optional[str] = typer.Option(None, "--writer-llm", help="LLM that writes the responses (default: --llm)."),
        judge_llm: Optional[str] = typer.Option(None, "--judge-llm", help="LLM of the judge (default: --llm)."),
        verifier: str = typer.Option("nsvif", "--verifier", help=f"One of: {', '.join(VERIFIERS)}."),
        feedback: str = typer.Option("explanation", "--feedback", help=f"What the writer is told after a failed check: {' or '.join(FEEDBACK_MODES)} (the verdict only)."),
        budget: int = typer.Option(5, "--budget", min=1, help="Responses written at most."),
        checkers: list[str] = typer.Option([], "--checkers", help="User checker module (repeatable)."),
        max_reflections: int = typer.Option(3, "--max-reflections", min=0),
        out: Optional[Path] = typer.Option(None, "--out", help="Run directory (the same one resumes)."),
        llm_timeout: float = typer.Option(120.0, "--llm-timeout", min=0.1),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """Write a response, verify it, rewrite it with the explanation until it is sat or the budget is spent."""
        from autonesy.graph.verify_run import VerifyConfig, verify_output

        with one_line_errors(2):
            text = _read(instruction, "instruction")
            specs = {"formulation": llm, "checker": llm, "judge": judge_llm or llm, "writer": writer_llm or llm}
            given = _role_backends(specs)
            config = VerifyConfig(verifier=verifier, llm=llm.partition(":")[0] if _is_special(llm) else llm,
                                  judge_llm=judge_llm, writer_llm=writer_llm, checkers=list(checkers),
                                  max_reflections=max_reflections, llm_timeout_s=llm_timeout, budget=budget,
                                  feedback=feedback)
            notify = (lambda m: None) if as_json else (lambda m: errors.print(m, markup=False))
            summary = verify_output(text, None, config, out, backends=given, notify=notify)
        if as_json:
            _print_json(summary)
        else:
            _print_verification(summary)
            console.print("final response:\n" + summary.get("output", ""), highlight=False, markup=False)
        raise typer.Exit(_exit_code(summary))

    @vifbench_app.command("generate")
    def generate(
        out: Path = typer.Option(..., "--out", help="Directory for vifbench.jsonl and stats.json."),
        count: int = typer.Option(50, "--count", min=1, help="Instructions (each gets a sat and an unsat response)."),
        seed: int = typer.Option(0, "--seed"),
        llm: Optional[str] = typer.Option(None, "--llm", help="Let this LLM write the responses (default: synthesised offline). " + LLM_HELP),
        llm_timeout: float = typer.Option(120.0, "--llm-timeout", min=0.1),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """Generate labelled <instruction, response, verdict> pairs over the VifBench constraint types."""
        from autonesy.graph.vifbench import generate_data

        with one_line_errors(1):
            backend = _special(llm) if _is_special(llm) else None
            summary = generate_data(out, count, seed, llm=None if backend else llm, backend=backend,
                                    llm_timeout_s=llm_timeout)
        if as_json:
            _print_json(summary)
            return
        table = Table(title=f"{summary['pairs']} labelled pairs in {summary['data']}", box=box.SIMPLE_HEAD)
        for column in ("group", "instructions", "sat", "unsat", "mean constraints", "labels true", "labels false", "clean"):
            table.add_column(column, justify="right")
        for group, row in summary["distribution"].items():
            table.add_row(group, str(row["instructions"]), str(row["sat"]), str(row["unsat"]), f"{row['mean_constraints']:.1f}",
                          str(row["labels_true"]), str(row["labels_false"]), f"{100 * row['clean_share']:.0f}%")
        console.print(table)
        console.print("sources: " + ", ".join(f"{k} {v}" for k, v in summary["sources"].items()), highlight=False, markup=False)

    import_app = typer.Typer(help="Labelled data from other benchmarks, as VifBench records.", no_args_is_help=True)
    vifbench_app.add_typer(import_app, name="import")

    @import_app.command("ifeval")
    def import_ifeval_command(
        out: Path = typer.Option(..., "--out", help="Directory for vifbench.jsonl and stats.json."),
        source: Optional[Path] = typer.Option(None, "--source", help="Labelled IFEval rows (default: the shipped GPT-4 file)."),
    ) -> None:
        """IFEval's 541 prompts with GPT-4's responses, labelled by IFEval's checkers (Apache-2.0)."""
        from autonesy.graph.vifbench import import_ifeval

        with one_line_errors(1):
            summary = import_ifeval(out, source)
        _print_json(summary)

    @vifbench_app.command("optimize-judge")
    def optimize_judge_command(
        data: Path = typer.Option(..., "--data", help="Labelled pairs; the first half of their instructions is used."),
        out: Path = typer.Option(..., "--out", help="Directory for guidance.txt."),
        llm: Optional[str] = typer.Option(None, "--llm", help="The judge's LLM. " + LLM_HELP),
        reflection_llm: Optional[str] = typer.Option(None, "--reflection-llm", help="GEPA's reflection LLM (default: --llm)."),
        max_metric_calls: int = typer.Option(60, "--max-metric-calls", min=1),
    ) -> None:
        """GEPA-CoT: optimise the CoT judge's guidance with DSPy's GEPA (optional extra 'gepa')."""
        from autonesy.agents.llm import backend_from_spec, default_llm_spec
        from autonesy.graph.vifbench import optimize_judge, read_data

        with one_line_errors(1):
            records = read_data(data) if _is_special(llm) or _is_special(reflection_llm) else None
            judge = _special(llm, records) or backend_from_spec(llm or default_llm_spec())
            reflection = _special(reflection_llm, records) or (backend_from_spec(reflection_llm) if reflection_llm else None)
            _print_json(optimize_judge(data, out, backend=judge, reflection_backend=reflection,
                                       max_metric_calls=max_metric_calls))

    @vifbench_app.command("eval")
    def evaluate(
        data: Path = typer.Option(..., "--data", help="vifbench.jsonl (or the directory holding it)."),
        verifier: list[str] = typer.Option(["nsvif"], "--verifier", help=f"{' | '.join(VERIFIERS)}; repeat or comma-separate to compare."),
        llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP + " 'oracle': the ground-truth self-test."),
        formulation_llm: Optional[str] = typer.Option(None, "--formulation-llm"),
        checker_llm: Optional[str] = typer.Option(None, "--checker-llm"),
        judge_llm: Optional[str] = typer.Option(None, "--judge-llm"),
        checkers: list[str] = typer.Option([], "--checkers", help="User checker module (repeatable)."),
        max_reflections: int = typer.Option(3, "--max-reflections", min=0),
        out: Path = typer.Option(..., "--out", help="Directory for results, metrics.json and report.md (the same one resumes)."),
        limit: Optional[int] = typer.Option(None, "--limit", min=1, help="Only the first N pairs."),
        workers: int = typer.Option(1, "--workers", min=1, help="Verifications run at the same time."),
        llm_timeout: float = typer.Option(120.0, "--llm-timeout", min=0.1),
        judge_guidance: Optional[Path] = typer.Option(None, "--judge-guidance", help="gepa-cot: the CoT judge's optimised guidance (a text file)."),
        as_json: bool = typer.Option(False, "--json"),
    ) -> None:
        """Score verifiers on labelled pairs: F1, precision, recall, pass@1, FP/FN, per constraint count, cost."""
        from autonesy.graph.verify_run import VerifyConfig
        from autonesy.graph.vifbench import evaluate as run_eval, read_data, report_markdown

        with one_line_errors(1):
            names = _verifiers(verifier)
            records = read_data(data, limit) if {"oracle", "flawed"} & {llm, formulation_llm, checker_llm, judge_llm} else None
            specs = {"formulation": formulation_llm or llm, "checker": checker_llm or llm, "judge": judge_llm or llm,
                     "writer": llm}
            given = _role_backends(specs, records)
            config = VerifyConfig(llm=llm.partition(":")[0] if _is_special(llm) else llm, formulation_llm=formulation_llm,
                                  checker_llm=checker_llm, judge_llm=judge_llm, checkers=list(checkers),
                                  max_reflections=max_reflections, llm_timeout_s=llm_timeout,
                                  judge_guidance=_read(judge_guidance, "judge guidance") if judge_guidance else None)
            notify = (lambda m: None) if as_json else (lambda m: errors.print(m, markup=False))
            report = run_eval(data, names, config, out, backends=given, limit=limit, workers=workers, notify=notify)
        if as_json:
            _print_json(report)
            return
        console.print(report_markdown(report), highlight=False, markup=False)
        console.print(f"files: {report['out']}", highlight=False, markup=False)


__all__ = ["register"]
