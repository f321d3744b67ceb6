"""VifBench runs: ``generate`` (labelled data, offline or written by an LLM) and ``eval`` (verifiers scored
on labelled data: the paper's tables 2–4 in shape).

``generate --out DIR`` writes
    vifbench.jsonl   one labelled pair per line: id, instruction, output, verdict, labels (per constraint),
                     constraints (type, params, summary, kind), formula, group, n_constraints, source; how it
                     was made: round (sat | unsat), omitted and mutated (constraint ids), writer_instruction
                     (the instruction the writer was given), regenerations
    stats.json       the label distribution per complexity group, the composition next to the paper's figures,
                     and (when an LLM wrote the outputs) a judge's audit of the tone and topic labels on a
                     10 % sample per group
    config.json, trace.jsonl

``eval --out DIR`` writes
    results-VERIFIER.jsonl  one row per pair: label, predicted verdict, per-constraint values, cost
                            (rows already there are kept: an interrupted evaluation resumes)
    metrics.json            per verifier: overall and per-group scores, cost, constraint agreement, its
                            LLMs and whether their answers were canned
    report.md               the paper's tables, one row per verifier: effectiveness (Tables 2–3: F1,
                            precision, recall, pass@1; Table 4: FP/FN), per complexity group (Figure 4),
                            per constraint type, cost (Table 7: calls, prompt and completion tokens as the
                            server's usage reports them, "canned" when a scripted model answered)
    table-NAME.csv          each of those tables as CSV (verifiers, groups, constraint-types, cost)
    config.json, trace.jsonl (every verification's events, tagged with the item id), llm_cache.sqlite
"""

from __future__ import annotations

import csv
import io
import json
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from autonesy.agents.llm import ChatBackend, LLMError, ResponseCache, backend_from_spec
from autonesy.agents.verify import JudgeAgent, WriterAgent
from autonesy.graph.options import VERIFIERS
from autonesy.graph.tracer import Tracer
from autonesy.graph.verify.graph import WHOLE_INSTRUCTION_JUDGES, VerifierMemory, VerifyState, initial_state
from autonesy.graph.verify.run import (
    Backends,
    VerifyConfig,
    VerifyError,
    _write_config,
    config_record,
    load_checkers,
    make_runtime,
    needed_roles,
    run_graph,
    sha,
)
from autonesy.tasks.vifbench import GROUPS, Instruction, generate_instruction, label_distribution
from autonesy.tasks.vifbench.generator import REGENERATION_BUDGET, composition, label, record, vifbench_plan
from autonesy.tools import safe_files
from autonesy.tools.config import LLM_TIMEOUT_S
from autonesy.tools.llm_spec import LLMSpec
from autonesy.tools.verify.metrics import COST_KEYS, scores
from autonesy.tools.verify.results import CheckerResult, SolverDecision

DATA_FILE = "vifbench.jsonl"
REQUIRED_KEYS = ("id", "instruction", "output", "verdict")
GROUP_ORDER = tuple(name for name, _, _ in GROUPS)


# --------------------------------------------------------------------------------------------------
# generate


def _llm_outputs(item, writer: WriterAgent, tracer: Tracer, budget: int = REGENERATION_BUDGET) -> list[dict[str, Any]]:
    """The item's response written by the LLM as the paper's §A.2 describes, labelled by the reference
    checkers: a sat round writes for the instruction and revises with the checkers' messages (the
    requirements left unmet); an unsat round writes for the instruction without its omitted logic
    constraint and writes again while the full instruction is still met — up to ``budget``
    regenerations, the last kept as it is. An LLM that gives no text falls back to the offline
    writer's response (``source`` says so)."""
    instruction: Instruction = item.instruction
    given: Instruction = item.given
    offline = item.records[0]
    chosen, previous, feedback = None, None, None
    for attempt in range(budget + 1):
        salt = f"{item.instruction_id}:{item.round}:{attempt}"
        if previous is None:
            turn, text = writer.write(given.text, salt=salt)
        else:
            turn, text = writer.rewrite(given.text, previous, feedback, salt=salt)
        tracer.agent_turn(turn, item=item.instruction_id, wanted=item.round, attempt=attempt)
        if turn.error is not None and not turn.error.transient and turn.error.kind in ("auth", "config", "bad_request"):
            raise turn.error
        previous, feedback = None, None
        if text is None:
            continue
        labels = label(instruction, given, text)
        chosen = record(
            item.instruction_id,
            item.instruction_id,
            instruction,
            text,
            labels,
            source="llm",
            round=item.round,
            omitted=item.omitted,
            mutated=offline.get("mutated"),
            writer_instruction=given.text,
            regenerations=attempt,
        )
        if chosen["verdict"] == item.round:
            break
        unmet = given.unmet({cid: labels[cid] for cid in given.ids})
        if unmet:  # revise: the checkers say which requirements are not met
            previous = text
            feedback = "These requirements are not met:\n" + "\n".join(f"- {line}" for line in unmet)
    if chosen is None:
        chosen = {**offline, "source": "offline-writer-fallback"}
    tracer.event("generated", item=chosen["id"], verdict=chosen["verdict"], source=chosen["source"])
    return [chosen]


AUDIT_SHARE = 0.1  # §A.2: "We sample 10% of the outputs for each complexity group" to check semantic constraints


def audit_semantic_labels(
    records: list[dict[str, Any]], judge: JudgeAgent, tracer: Tracer, seed: int = 0
) -> dict[str, Any]:
    """A judge's audit of the tone and topic labels (which come from how each output was made) on a seeded
    ``AUDIT_SHARE`` of each complexity group's outputs (at least one): how often it agrees, and where not."""
    rng = random.Random(f"vifbench-audit:{seed}")
    by_group: dict[str, list[dict[str, Any]]] = {}
    for rec in records:
        by_group.setdefault(rec["group"], []).append(rec)
    judged = agree = undecided = 0
    disagreements = []
    sampled = [rec for group in by_group.values() for rec in rng.sample(group, max(1, round(AUDIT_SHARE * len(group))))]
    for rec in sampled:
        items = [(c["id"], c["summary"]) for c in rec["constraints"] if c["kind"] == "semantic"]
        turns, verdicts = judge.judge(rec["instruction"], items, rec["output"], salt=f"audit:{rec['id']}")
        for turn in turns:
            tracer.agent_turn(turn, item=rec["id"], audit=True)
        for cid, verdict in verdicts.items():
            if verdict.value is None:
                undecided += 1
                continue
            judged += 1
            if verdict.value == rec["labels"][cid]:
                agree += 1
            else:
                disagreements.append({"id": rec["id"], "constraint": cid, "label": rec["labels"][cid]})
    return {
        "sampled_outputs": len(sampled),
        "share_per_group": AUDIT_SHARE,
        "judged": judged,
        "agree": agree,
        "undecided": undecided,
        "disagreements": disagreements,
    }


def generate_data(
    out: Path,
    count: int | None = None,
    seed: int = 0,
    *,
    llm: LLMSpec | None = None,
    backend: ChatBackend | None = None,
    llm_timeout_s: float = LLM_TIMEOUT_S,
    notify: Callable[[str], None] = lambda m: None,
) -> dict[str, Any]:
    """VifBench's instructions (all 820, or the first ``count`` of the plan), one output each; offline unless
    an LLM is given."""
    plan = vifbench_plan()
    if count is not None and not 1 <= count <= len(plan):
        raise VerifyError(f"--count must be 1 to {len(plan)} (VifBench has {len(plan)} instructions)")
    out = safe_files.output_dir(out)
    owned = None
    if backend is None and llm:
        owned = backend = backend_from_spec(llm, timeout_s=llm_timeout_s, cache=ResponseCache(out / "llm_cache.sqlite"))
    try:
        label = backend.label if backend is not None else None
        config = {
            "kind": "vifbench-generate",
            "task": "vifbench-generate",
            "format": "llm" if backend else "offline-writer",
            "policy": "generator",
            "llm": label,
            "count": count,
            "seed": seed,
        }
        _write_config(out, config, ("kind", "count", "seed", "format"))
        tracer = Tracer(out)
        writer = WriterAgent(backend) if backend is not None else None
        records: list[dict[str, Any]] = []
        start = time.perf_counter()
        for n, position in plan[:count]:
            item = generate_instruction(n, position, seed)
            records.extend(_llm_outputs(item, writer, tracer) if writer else item.records)
            if writer is None:
                tracer.event("generated", item=item.instruction_id, group=item.group, n_constraints=n)
        safe_files.write_text(out / DATA_FILE, _jsonl(records))
        stats = label_distribution(records)
        sources: dict[str, int] = {}
        for rec in records:
            sources[rec["source"]] = sources.get(rec["source"], 0) + 1
        summary = {
            "out": str(out),
            "data": str(out / DATA_FILE),
            "instructions": len(records),
            "pairs": len(records),
            "seed": seed,
            "llm": label,
            "sources": sources,
            "seconds": round(time.perf_counter() - start, 3),
            "distribution": stats,
            "composition": composition(records),
        }
        if backend is not None:  # the semantic labels say how the LLM was asked; a judge audits a sample
            summary["semantic_audit"] = audit_semantic_labels(records, JudgeAgent(backend), tracer, seed)
        safe_files.write_text(out / "stats.json", json.dumps(summary, indent=2))
        tracer.event("outcome", status="done", reason=f"{len(records)} labelled pairs")
        return summary
    finally:
        if owned is not None:
            owned.close()


def import_ifeval(out: Path, source: Path | None = None) -> dict[str, Any]:
    """IFEval's labelled GPT-4 responses (the shipped file, or ``source``) as VifBench records in ``out``."""
    from autonesy.tasks.vifbench.ifeval import ifeval_distribution, ifeval_records, read_ifeval

    records = ifeval_records(read_ifeval(source))
    out = safe_files.output_dir(out)
    safe_files.write_text(out / DATA_FILE, _jsonl(records))
    summary = {
        "out": str(out),
        "data": str(out / DATA_FILE),
        "source": str(source) if source else "shipped IFEval GPT-4 data",
        "pairs": len(records),
        "distribution": ifeval_distribution(records),
    }
    safe_files.write_text(out / "stats.json", json.dumps(summary, indent=2))
    return summary


def _jsonl(records: Iterable[Any]) -> str:
    return "".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in records)


def instruction_key(rec: Mapping[str, Any]) -> str:
    """The instruction a pair belongs to (its id, else its text): the unit GEPA-CoT's split is made of."""
    return str(rec.get("instruction_id") or rec["instruction"])


def read_optimised_on(guidance: Path) -> list[str]:
    """The instructions GEPA-CoT's guidance was optimised on, from the ``optimize.json`` written beside it."""
    record_path = Path(guidance).parent / "optimize.json"
    try:
        used = json.loads(safe_files.read_text(record_path.resolve())).get("instructions_used")
    except (OSError, ValueError, AttributeError):
        used = None
    if not isinstance(used, list) or not all(isinstance(u, str) for u in used):
        raise VerifyError(
            f"{guidance}: no optimize.json beside it naming the instructions it was optimised on (write the guidance "
            "with 'vifbench optimize-judge', whose instructions eval leaves out)"
        )
    return used


def optimize_judge(
    data: Path,
    out: Path,
    *,
    backend: ChatBackend,
    reflection_backend: ChatBackend | None = None,
    train_share: float = 0.5,
    max_metric_calls: int = 60,
    seed: int = 0,
) -> dict[str, Any]:
    """GEPA-CoT's guidance, optimised with GEPA on the first ``train_share`` of the instructions in
    ``data`` (their second half selects among candidates); written to ``out/guidance.txt`` for
    ``vifbench eval --verifier gepa-cot --judge-guidance``. Evaluate on other instructions than these."""
    from autonesy.agents.verify.gepa import GepaUnavailable, optimize_guidance

    records = read_data(data)
    instructions = list(dict.fromkeys(instruction_key(r) for r in records))
    cut = max(1, int(len(instructions) * train_share))
    chosen = set(instructions[:cut])
    fit = [r for r in records if instruction_key(r) in chosen]
    train, val = fit[: max(1, len(fit) // 2)], fit[max(1, len(fit) // 2) :] or fit
    try:
        guidance = optimize_guidance(
            train, val, backend, reflection_backend or backend, max_metric_calls=max_metric_calls, seed=seed
        )
    except GepaUnavailable as error:
        raise VerifyError(str(error)) from None
    out = safe_files.output_dir(out)
    safe_files.write_text(out / "guidance.txt", guidance.strip() + "\n")
    summary = {
        "out": str(out),
        "guidance": str(out / "guidance.txt"),
        "instructions_used": sorted(chosen),
        "train_pairs": len(train),
        "val_pairs": len(val),
        "max_metric_calls": max_metric_calls,
    }
    safe_files.write_text(out / "optimize.json", json.dumps(summary, indent=2))
    return summary


# --------------------------------------------------------------------------------------------------
# eval


def read_data(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """VifBench records from a JSONL file (or the data file in a directory), optionally the first ``limit``."""
    path = Path(path)
    try:  # a data folder may come from elsewhere (no link below it); a file the user names is read where it leads
        lines = (
            safe_files.read_text(path / DATA_FILE, root=path) if path.is_dir() else safe_files.read_text(path.resolve())
        ).splitlines()
    except OSError as error:
        raise VerifyError(f"cannot read the data {path}: {error.strerror or error}") from None
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            raise VerifyError(f"{path}, line {number}: not JSON") from None
        missing = [k for k in REQUIRED_KEYS if k not in rec]
        if missing or rec.get("verdict") not in ("sat", "unsat"):
            raise VerifyError(
                f"{path}, line {number}: a pair needs {', '.join(REQUIRED_KEYS)} with verdict sat or unsat"
                + (f" (missing {', '.join(missing)})" if missing else "")
            )
        rec.setdefault("group", "all")
        records.append(rec)
    if not records:
        raise VerifyError(f"{path} holds no labelled pairs")
    return records[:limit] if limit else records


def _row(rec: Mapping[str, Any], state: VerifyState, verifier: str, wall: float) -> dict[str, Any]:
    status, results, decision = state.status, state.results, state.decision
    return {
        "id": rec["id"],
        "instruction_id": rec.get("instruction_id"),
        "group": rec.get("group"),
        "n_constraints": rec.get("n_constraints"),
        "verifier": verifier,
        "label": rec["verdict"],
        "predicted": status if status in ("sat", "unsat", "unknown") else None,
        "status": status,
        "reason": state.reason,
        "labels": rec.get("labels"),
        "constraints": [
            {k: c.get(k) for k in ("id", "type", "params", "summary")} for c in rec.get("constraints") or []
        ],
        "decomposition": [{"id": c["id"], "summary": c["summary"]} for c in state.constraints],
        "values": {cid: r.value for cid, r in results.items()} if results else None,
        "methods": {cid: r.method for cid, r in results.items()} if results else None,
        "violated": [v.id for v in decision.violated] if isinstance(decision, SolverDecision) else [],
        "reflections": sum(r.reflections for r in results.values() if isinstance(r, CheckerResult)),
        "fallbacks": sum(r.method == "judge_fallback" for r in results.values()),
        **{k: getattr(state, k) for k in COST_KEYS if k != "wall_seconds"},
        "wall_seconds": round(wall, 4),
    }


def _read_rows(path: Path) -> list[dict[str, Any]]:
    if not safe_files.is_file(path):
        return []
    rows = []
    for line in safe_files.read_text(path).splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:
            continue  # a line cut short by a crash
    return rows


def evaluate(
    data: Path,
    verifiers: Iterable[str],
    config: VerifyConfig,
    out: Path,
    *,
    backend: ChatBackend | None = None,
    backends: Mapping[str, ChatBackend] | None = None,
    limit: int | None = None,
    workers: int = 1,
    optimised_on: Iterable[str] | None = None,
    notify: Callable[[str], None] = lambda m: None,
) -> dict[str, Any]:
    """Score each verifier on the labelled pairs in ``data``; returns (and writes) the metrics.

    GEPA-CoT with optimised guidance needs ``optimised_on``, the instructions the guidance was optimised on
    (``read_optimised_on``): their pairs are left out for every verifier, so all are scored on the same
    instructions, none of them seen by the optimiser; the split is recorded in config.json and the report."""
    verifiers = list(dict.fromkeys(verifiers))
    for verifier in verifiers:
        if verifier not in VERIFIERS:
            raise VerifyError(f"unknown verifier {verifier!r}; choose among {', '.join(VERIFIERS)}")
    if not verifiers:
        raise VerifyError("name at least one verifier")
    config = replace(config, budget=0).resolved()
    if "gepa-cot" in verifiers and config.judge_guidance and optimised_on is None:
        raise VerifyError(
            "gepa-cot with optimised guidance is scored only on instructions it was not optimised on: name the "
            "guidance that 'vifbench optimize-judge' wrote (its optimize.json lists them)"
        )
    records = read_data(data, limit)
    seen = set(optimised_on or ())
    split = {
        "optimised_on_instructions": len(seen),
        "left_out_pairs": sum(instruction_key(r) in seen for r in records),
    }
    records = [r for r in records if instruction_key(r) not in seen]
    if not records:
        raise VerifyError("every pair's instruction was used to optimise GEPA-CoT's guidance: nothing left to score")
    out = safe_files.output_dir(out)
    user_checkers = load_checkers(config)
    metrics: dict[str, Any] = {}
    needs = replace(config, verifier="nsvif" if any(v not in WHOLE_INSTRUCTION_JUDGES for v in verifiers) else "judge")
    with Backends(needs, out, backend=backend, backends=backends, notify=notify) as handles:
        record_ = config_record(
            "vifbench-eval",
            needs,
            handles,
            verifiers=verifiers,
            data=str(data),
            data_sha256=sha(json.dumps(records, sort_keys=True)),
            pairs=len(records),
            gepa_split=split,
        )
        record_["format"] = ",".join(verifiers)
        _write_config(out, record_, ("kind", "data_sha256"))
        tracer = Tracer(out)
        lock = threading.Lock()
        labels = handles.labels()
        for verifier in verifiers:
            vconfig = replace(config, verifier=verifier)
            results_path = out / f"results-{verifier}.jsonl"
            rows: list[Mapping[str, Any]] = [
                r for r in _read_rows(results_path) if r.get("id") in {rec["id"] for rec in records}
            ]
            done = {r["id"] for r in rows}
            pending = [rec for rec in records if rec["id"] not in done]

            memory = VerifierMemory()  # the formulation and checkers of an instruction serve all its responses

            def one(
                rec: Mapping[str, Any],
                vconfig: VerifyConfig = vconfig,
                verifier: str = verifier,
                results_path: Path = results_path,
                memory: VerifierMemory = memory,
            ) -> dict[str, Any]:
                runtime = make_runtime(
                    vconfig,
                    handles,
                    tracer,
                    tag={"item": rec["id"], "verifier": verifier},
                    user_checkers=user_checkers,
                    memory=memory,
                )
                start = time.perf_counter()
                try:
                    state = run_graph(runtime, initial_state(rec["instruction"], rec["output"]))
                except LLMError as error:  # a failure outside the agents' own handling
                    state = VerifyState(status="error", reason=f"LLM error ({error.kind}): {error}")
                row = _row(rec, state, verifier, time.perf_counter() - start)
                with lock:
                    safe_files.append_text(results_path, json.dumps(row, ensure_ascii=False) + "\n")
                return row

            if workers > 1 and len(pending) > 1:
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    rows.extend(pool.map(one, pending))
            else:
                rows.extend(one(rec) for rec in pending)
            order = {rec["id"]: i for i, rec in enumerate(records)}
            rows.sort(key=lambda r: order[r["id"]])
            metrics[verifier] = scores(rows, GROUP_ORDER)
            llms = {role: labels[role] for role in needed_roles(vconfig)}
            metrics[verifier].update(llms=llms, canned=canned_labels(llms.values()))
            overall = metrics[verifier]["overall"]
            notify(f"{verifier}: F1 {_pct(overall['f1'])} over {overall['n']} pairs")
        report = {
            "data": str(data),
            "pairs": len(records),
            "gepa_split": split,
            "llms": record_["llms"],
            "verifiers": metrics,
        }
        write_report(out, report)
        reason = "; ".join(f"{v} F1 {_pct(m['overall']['f1'])}" for v, m in metrics.items())
        tracer.event("outcome", status="done", reason=reason)
    return {"out": str(out), **report}


# --------------------------------------------------------------------------------------------------
# the report


@dataclass(frozen=True)
class Table:
    """One table of the report, written as a Markdown section and as ``table-NAME.csv``.

    ``columns`` are (group, name, kind): kind ``pct`` is a share shown in percent, ``int`` a count,
    ``num`` a mean, ``text`` as it is; columns with the same non-empty group share one Markdown cell
    (``a / b / c``, the names in ``note``) and are separate columns in the CSV (``group name``)."""

    name: str
    title: str
    note: str
    columns: tuple[tuple[str, str, str], ...]
    rows: tuple[tuple[Any, ...], ...]

    @staticmethod
    def _cell(value: Any, kind: str) -> str:
        if value is None:
            return "—"
        if kind == "pct":
            return f"{100 * value:.1f}"
        if kind == "int":
            return f"{int(value):,}"
        if kind == "num":
            return f"{value:,.2f}"
        return str(value).replace("|", "\\|")

    @staticmethod
    def _raw(value: Any, kind: str) -> Any:
        if value is None:
            return ""
        if kind == "pct":
            return round(100 * value, 2)
        if kind == "int":
            return int(value)
        return round(value, 4) if kind == "num" else value

    def markdown(self) -> str:
        """The table as a Markdown section (title, note, table)."""
        spans: list[tuple[str, list[int]]] = []  # (header, column indices) per Markdown column
        for index, (group, name, _) in enumerate(self.columns):
            if group and spans and spans[-1][0] == group:
                spans[-1][1].append(index)
            else:
                spans.append((group or name, [index]))
        kinds = [kind for _, _, kind in self.columns]
        lines = [f"## {self.title}", "", *([self.note, ""] if self.note else [])]
        lines.append("| " + " | ".join(header for header, _ in spans) + " |")
        lines.append(
            "|" + "|".join("---" if kinds[idx[0]] == "text" and len(idx) == 1 else "---:" for _, idx in spans) + "|"
        )
        for row in self.rows:
            cells = [" / ".join(self._cell(row[i], kinds[i]) for i in idx) for _, idx in spans]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    def csv(self) -> str:
        """The table as CSV: one column per value, percentages in percent (two decimals), empty for none."""
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow([f"{group} {name}".strip() for group, name, _ in self.columns])
        for row in self.rows:
            writer.writerow([self._raw(value, kind) for value, (_, _, kind) in zip(row, self.columns, strict=True)])
        return buffer.getvalue()


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


SCRIPTED_ENDPOINT = "scripted"  # the endpoint of a backend whose answers a script wrote (no server's usage)


def canned_labels(labels: Iterable[str]) -> list[str]:
    """The LLM labels among ``labels`` of scripted backends (endpoint ``scripted``): their answers are canned."""
    return sorted({label for label in labels if label.partition("@")[0] == SCRIPTED_ENDPOINT})


def _groups(verifiers: Mapping[str, Any]) -> list[str]:
    present = {g for m in verifiers.values() for g in m["groups"]}
    return [g for g in GROUP_ORDER if g in present] + sorted(present - set(GROUP_ORDER))


def report_tables(report: Mapping[str, Any]) -> list[Table]:
    """The paper's tables from an evaluation's metrics: effectiveness (Tables 2–3) with FP/FN (Table 4),
    per complexity group (Figure 4), per constraint type, and token usage (Table 7)."""
    verifiers = report["verifiers"]
    overall = Table(
        "verifiers",
        "Tables 2–4 — verification effectiveness",
        "Positive class: sat. F1, precision, recall, pass@1 and FP / FN % are over the decided pairs (the paper's "
        "Tables 2–3 and 4); unknown: pairs without a verdict. Constraints: the labelled constraints the verifier's "
        "own decomposition aligned with by meaning, and its accuracy on them.",
        (
            ("", "verifier", "text"),
            ("", "pairs", "int"),
            ("", "F1 %", "pct"),
            ("", "precision %", "pct"),
            ("", "recall %", "pct"),
            ("", "pass@1 %", "pct"),
            ("", "FP %", "pct"),
            ("", "FP #", "int"),
            ("", "FN %", "pct"),
            ("", "FN #", "int"),
            ("", "unknown #", "int"),
            ("", "constraints aligned %", "pct"),
            ("", "constraint acc. %", "pct"),
        ),
        tuple(
            (
                name,
                o["n"],
                o["f1"],
                o["precision"],
                o["recall"],
                o["pass_at_1"],
                o["fp_rate"],
                o["fp"],
                o["fn_rate"],
                o["fn"],
                o["unknown"],
                m["constraints"].get("aligned_share"),
                m["constraints"].get("accuracy"),
            )
            for name, m in verifiers.items()
            for o in [m["overall"]]
        ),
    )
    groups = _groups(verifiers)
    metrics = (
        ("F1 %", "f1", "pct"),
        ("P %", "precision", "pct"),
        ("R %", "recall", "pct"),
        ("pass@1 %", "pass_at_1", "pct"),
    )
    counts = (("FP #", "fp", "int"), ("FN #", "fn", "int"), ("n", "n", "int"))
    by_group = Table(
        "groups",
        "By complexity group (the paper's Figure 4: number of constraints)",
        "One row per verifier, one column per group; each cell: F1 % / precision % / recall % / pass@1 % (accuracy "
        "on the decided pairs) / FP # / FN # / pairs.",
        (("", "verifier", "text"),)
        + tuple((f"{group} constraints", label, kind) for group in groups for label, _, kind in metrics + counts),
        tuple(
            (name,)
            + tuple((m["groups"].get(group) or {}).get(key) for group in groups for _, key, _ in metrics + counts)
            for name, m in verifiers.items()
        ),
    )
    types = sorted({t for m in verifiers.values() for t in m["constraints"].get("by_type", {})})
    by_type = Table(
        "constraint-types",
        "Constraint level by type — FP % / FN % (shares of the decided, aligned constraints)",
        "",
        (("", "type", "text"),) + tuple((name, label, "pct") for name in verifiers for label in ("FP %", "FN %")),
        tuple(
            (t,)
            + tuple(
                (m["constraints"]["by_type"].get(t) or {}).get(key)
                for m in verifiers.values()
                for key in ("fp_rate", "fn_rate")
            )
            for t in types
        ),
    )
    canned_note = [
        f"{name}: canned answers from {', '.join(m['canned'])} (a scripted model; its token counts "
        "are tiktoken counts of its prompts and scripted answers, not a server's)"
        for name, m in verifiers.items()
        if m.get("canned")
    ]
    cost = Table(
        "cost",
        "Cost (the paper's Table 7: token usage over the data)",
        "Totals over the pairs. LLM calls: requests answered by the endpoint; prompt and completion tokens: the "
        "endpoint's own counts (the `usage` of each answer); calls without usage: answers whose server reported "
        "none (their tokens count 0). Cached calls were answered from the run's response cache (the same prompt "
        "asked before, by this verifier or an earlier one in the same run) and sent nothing; cached tokens are "
        "what they cost when first answered. A verifier run alone costs calls + cached calls and tokens + "
        "cached tokens. Failed requests got no answer (retried attempts, calls that failed): the endpoint saw LLM "
        "calls + failed requests." + ("\n\n" + "\n".join(f"- {line}" for line in canned_note) if canned_note else ""),
        (
            ("", "verifier", "text"),
            ("", "answers", "text"),
            ("", "pairs", "int"),
            ("", "LLM calls", "int"),
            ("", "cached calls", "int"),
            ("", "calls without usage", "int"),
            ("", "prompt tokens", "int"),
            ("", "completion tokens", "int"),
            ("", "cached tokens", "int"),
            ("", "failed requests", "int"),
            ("", "calls / pair", "num"),
            ("", "tokens / pair", "num"),
            ("", "checker runs", "int"),
            ("", "LLM s", "num"),
            ("", "wall s", "num"),
        ),
        tuple(
            (
                name,
                "canned" if m.get("canned") else "model",
                m["cost"]["pairs"],
                t["llm_calls"],
                t["cached_calls"],
                t.get("calls_without_usage"),
                t["prompt_tokens"],
                t["completion_tokens"],
                t.get("cached_tokens"),
                t.get("failed_requests"),
                m["cost"]["per_pair"]["llm_calls"],
                (t["prompt_tokens"] + t["completion_tokens"]) / m["cost"]["pairs"] if m["cost"]["pairs"] else None,
                t["checker_runs"],
                t["llm_seconds"],
                t["wall_seconds"],
            )
            for name, m in verifiers.items()
            for t in [m["cost"]["total"]]
        ),
    )
    return [overall, by_group, *([by_type] if types else []), cost]


def report_markdown(report: Mapping[str, Any]) -> str:
    """The evaluation report as Markdown: the paper's tables, one row per verifier."""
    lines = [f"# VifBench evaluation ({report['pairs']} pairs from {report['data']})", ""]
    llms = sorted(set(report.get("llms", {}).values()))
    if llms:
        lines += ["LLMs: " + ", ".join(f"`{label}`" for label in llms), ""]
    split = report.get("gepa_split") or {}
    if split.get("optimised_on_instructions"):
        lines += [
            f"GEPA-CoT's guidance was optimised on {split['optimised_on_instructions']} instructions; their "
            f"{split['left_out_pairs']} pairs are left out for every verifier.",
            "",
        ]
    return "\n".join([*lines, *(table.markdown() for table in report_tables(report))])


def write_report(out: Path, report: Mapping[str, Any]) -> None:
    """``metrics.json``, ``report.md`` and one ``table-NAME.csv`` per table in ``out``."""
    safe_files.write_text(out / "metrics.json", json.dumps(report, indent=2))
    safe_files.write_text(out / "report.md", report_markdown(report))
    for table in report_tables(report):
        safe_files.write_text(out / f"table-{table.name}.csv", table.csv())


__all__ = [
    "DATA_FILE",
    "Table",
    "canned_labels",
    "evaluate",
    "generate_data",
    "import_ifeval",
    "audit_semantic_labels",
    "instruction_key",
    "optimize_judge",
    "read_optimised_on",
    "read_data",
    "report_markdown",
    "report_tables",
]
