"""VifBench runs: ``generate`` (labelled data, offline or written by an LLM) and ``eval`` (verifiers scored
on labelled data: the paper's tables 2–4 in shape).

``generate --out DIR`` writes
    vifbench.jsonl   one labelled pair per line: id, instruction, output, verdict, labels (per constraint),
                     constraints (type, params, summary, kind), formula, group, n_constraints, source
    stats.json       the label distribution per complexity group
    config.json, trace.jsonl

``eval --out DIR`` writes
    results-VERIFIER.jsonl  one row per pair: label, predicted verdict, per-constraint values, cost
                            (rows already there are kept: an interrupted evaluation resumes)
    metrics.json            per verifier: overall and per-group scores, cost, constraint agreement
    report.md               table 2 (F1, precision, recall, pass@1, FP/FN), table 3 (per complexity
                            group), table 4 (LLM calls, tokens, time per verification)
    config.json, trace.jsonl (every verification's events, tagged with the item id), llm_cache.sqlite
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from autonesy.agents.llm import ChatBackend, LLMError, ResponseCache, backend_from_spec
from autonesy.agents.verify import WriterAgent
from autonesy.agents.verify.scripted_llm import CANNED_MODEL_NAMES
from autonesy.graph.tracer import Tracer
from autonesy.graph.verify.graph import VERIFIERS, WHOLE_INSTRUCTION_JUDGES, VerifierMemory, initial_state
from autonesy.graph.verify.run import (
    Backends,
    VerifyConfig,
    VerifyError,
    _write_config,
    config_record,
    load_checkers,
    make_runtime,
    run_graph,
    sha,
)
from autonesy.tasks.vifbench import GROUPS, Instruction, generate_instruction, label_distribution
from autonesy.tasks.vifbench.generator import REGENERATION_BUDGET, record, vifbench_plan
from autonesy.tools.config import LLM_TIMEOUT_S
from autonesy.tools.verify.metrics import COST_KEYS, scores

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
        labels = instruction.labels(text)
        chosen = record(
            item.instruction_id,
            item.instruction_id,
            instruction,
            text,
            labels,
            source="llm",
            round=item.round,
            omitted=item.omitted,
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


def generate_data(
    out: Path,
    count: int | None = None,
    seed: int = 0,
    *,
    llm: str | None = None,
    backend: ChatBackend | None = None,
    llm_timeout_s: float = LLM_TIMEOUT_S,
    notify: Callable[[str], None] = lambda m: None,
) -> dict[str, Any]:
    """VifBench's instructions (all 820, or the first ``count`` of the plan), one output each; offline unless
    an LLM is given."""
    plan = vifbench_plan()
    if count is not None and not 1 <= count <= len(plan):
        raise VerifyError(f"--count must be 1 to {len(plan)} (VifBench has {len(plan)} instructions)")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
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
        records = []
        start = time.perf_counter()
        for n, position in plan[:count]:
            item = generate_instruction(n, position, seed)
            records.extend(_llm_outputs(item, writer, tracer) if writer else item.records)
            if writer is None:
                tracer.event("generated", item=item.instruction_id, group=item.group, n_constraints=n)
        with (out / DATA_FILE).open("w", encoding="utf-8") as handle:
            for rec in records:
                handle.write(json.dumps(rec, ensure_ascii=False) + "\n")
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
        }
        (out / "stats.json").write_text(json.dumps(summary, indent=2))
        tracer.event("outcome", status="done", reason=f"{len(records)} labelled pairs")
        return summary
    finally:
        if owned is not None:
            owned.close()


def import_ifeval(out: Path, source: Path | None = None) -> dict[str, Any]:
    """IFEval's labelled GPT-4 responses (the shipped file, or ``source``) as VifBench records in ``out``."""
    from autonesy.tasks.vifbench.ifeval import IFEvalDataError, ifeval_distribution, ifeval_records, read_ifeval

    try:
        records = ifeval_records(read_ifeval(source))
    except IFEvalDataError as error:
        raise VerifyError(str(error)) from None
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    with (out / DATA_FILE).open("w", encoding="utf-8") as handle:
        for rec in records:
            handle.write(json.dumps(rec, ensure_ascii=False) + "\n")
    summary = {
        "out": str(out),
        "data": str(out / DATA_FILE),
        "source": str(source) if source else "shipped IFEval GPT-4 data",
        "pairs": len(records),
        "distribution": ifeval_distribution(records),
    }
    (out / "stats.json").write_text(json.dumps(summary, indent=2))
    return summary


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
    instructions = list(dict.fromkeys(r.get("instruction_id") or r["instruction"] for r in records))
    cut = max(1, int(len(instructions) * train_share))
    chosen = set(instructions[:cut])
    fit = [r for r in records if (r.get("instruction_id") or r["instruction"]) in chosen]
    train, val = fit[: max(1, len(fit) // 2)], fit[max(1, len(fit) // 2) :] or fit
    try:
        guidance = optimize_guidance(
            train, val, backend, reflection_backend or backend, max_metric_calls=max_metric_calls, seed=seed
        )
    except GepaUnavailable as error:
        raise VerifyError(str(error)) from None
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "guidance.txt").write_text(guidance.strip() + "\n")
    summary = {
        "out": str(out),
        "guidance": str(out / "guidance.txt"),
        "instructions_used": sorted(chosen),
        "train_pairs": len(train),
        "val_pairs": len(val),
        "max_metric_calls": max_metric_calls,
    }
    (out / "optimize.json").write_text(json.dumps(summary, indent=2))
    return summary


# --------------------------------------------------------------------------------------------------
# eval


class EvalTracer(Tracer):
    """The run trace without an fsync per event: an evaluation writes thousands of events, and what must
    survive a crash is each finished row of results-VERIFIER.jsonl (which is what resuming reads)."""

    def event(self, event: str, **fields: Any) -> None:
        """Append one event with secrets replaced, without the per-event sync of the run trace (what resuming needs is
        in the results files)."""
        line = json.dumps({"event": event, "time": time.time(), **fields}, default=str, ensure_ascii=False)
        for secret in self.secrets:
            line = line.replace(secret, "***")
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")


def read_data(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    """VifBench records from a JSONL file (or the data file in a directory), optionally the first ``limit``."""
    path = Path(path)
    if path.is_dir():
        path = path / DATA_FILE
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
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


def _row(rec: Mapping[str, Any], state: Mapping[str, Any], verifier: str, wall: float) -> dict[str, Any]:
    status = state.get("status")
    results = state.get("results") or {}
    decision = state.get("decision") or {}
    return {
        "id": rec["id"],
        "instruction_id": rec.get("instruction_id"),
        "group": rec.get("group"),
        "n_constraints": rec.get("n_constraints"),
        "verifier": verifier,
        "label": rec["verdict"],
        "predicted": status if status in ("sat", "unsat", "unknown") else None,
        "status": status,
        "reason": state.get("reason", ""),
        "labels": rec.get("labels"),
        "constraints": [
            {k: c.get(k) for k in ("id", "type", "params", "summary")} for c in rec.get("constraints") or []
        ],
        "decomposition": [{"id": c["id"], "summary": c["summary"]} for c in state.get("constraints") or []],
        "values": {cid: r.get("value") for cid, r in results.items()} if results else None,
        "methods": {cid: r.get("method") for cid, r in results.items()} if results else None,
        "violated": [v["id"] for v in decision.get("violated") or []],
        "reflections": sum(int(r.get("reflections") or 0) for r in results.values()),
        "fallbacks": sum(r.get("method") == "judge_fallback" for r in results.values()),
        **{k: state.get(k, 0) for k in COST_KEYS if k != "wall_seconds"},
        "wall_seconds": round(wall, 4),
    }


def _read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
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
    notify: Callable[[str], None] = lambda m: None,
) -> dict[str, Any]:
    """Score each verifier on the labelled pairs in ``data``; returns (and writes) the metrics."""
    verifiers = list(dict.fromkeys(verifiers))
    for verifier in verifiers:
        if verifier not in VERIFIERS:
            raise VerifyError(f"unknown verifier {verifier!r}; choose among {', '.join(VERIFIERS)}")
    if not verifiers:
        raise VerifyError("name at least one verifier")
    config = replace(config, budget=0).resolved()
    records = read_data(data, limit)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
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
        )
        record_["format"] = ",".join(verifiers)
        _write_config(out, record_, ("kind", "data_sha256"))
        tracer = EvalTracer(out)
        lock = threading.Lock()
        for verifier in verifiers:
            vconfig = replace(config, verifier=verifier)
            results_path = out / f"results-{verifier}.jsonl"
            rows = [r for r in _read_rows(results_path) if r.get("id") in {rec["id"] for rec in records}]
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
                    state = {"status": "error", "reason": f"LLM error ({error.kind}): {error}"}
                row = _row(rec, state, verifier, time.perf_counter() - start)
                with lock:
                    with results_path.open("a", encoding="utf-8") as handle:
                        handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                return row

            if workers > 1 and len(pending) > 1:
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    rows.extend(pool.map(one, pending))
            else:
                rows.extend(one(rec) for rec in pending)
            order = {rec["id"]: i for i, rec in enumerate(records)}
            rows.sort(key=lambda r: order[r["id"]])
            metrics[verifier] = scores(rows, GROUP_ORDER)
            overall = metrics[verifier]["overall"]
            notify(f"{verifier}: F1 {_pct(overall['f1'])} over {overall['n']} pairs")
        report = {"data": str(data), "pairs": len(records), "llms": record_["llms"], "verifiers": metrics}
        (out / "metrics.json").write_text(json.dumps(report, indent=2))
        (out / "report.md").write_text(report_markdown(report))
        reason = "; ".join(f"{v} F1 {_pct(m['overall']['f1'])}" for v, m in metrics.items())
        tracer.event("outcome", status="done", reason=reason)
    return {"out": str(out), **report}


# --------------------------------------------------------------------------------------------------
# the report


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _num(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _canned(label: str) -> bool:
    """Whether an LLM label names a scripted label-reading model (its answers are canned)."""
    return label.rpartition("@")[2] in CANNED_MODEL_NAMES


def report_markdown(report: Mapping[str, Any]) -> str:
    """The evaluation report as Markdown: per verifier, the paper's tables."""
    verifiers = report["verifiers"]
    lines = [f"# VifBench evaluation ({report['pairs']} pairs from {report['data']})", ""]
    lines += [
        "## Table 2 — verification quality (positive class: sat; pass@1, FP and FN over the decided pairs; "
        "unknown: no verdict, a share of all pairs)",
        "",
        "| verifier | pairs | F1 | precision | recall | pass@1 | FP | FN | unknown | constraints aligned | "
        "constraint acc. | constraint unknown |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in verifiers.items():
        o, c = m["overall"], m["constraints"]
        lines.append(
            f"| {name} | {o['n']} | {_pct(o['f1'])} | {_pct(o['precision'])} | {_pct(o['recall'])} | "
            f"{_pct(o['pass_at_1'])} | {_pct(o['fp_rate'])} | {_pct(o['fn_rate'])} | {_pct(o['unknown_share'])} | "
            f"{_pct(c.get('aligned_share'))} | {_pct(c.get('accuracy'))} | {_pct(c.get('unknown_share'))} |"
        )
    types = sorted({t for m in verifiers.values() for t in m["constraints"].get("by_type", {})})
    if types:
        lines += [
            "",
            "## Constraint level by type — FP / FN (shares of the decided, aligned constraints)",
            "",
            "| type | " + " | ".join(verifiers) + " |",
            "|---|" + "---:|" * len(verifiers),
        ]
        for constraint_type in types:
            cells = []
            for m in verifiers.values():
                e = m["constraints"]["by_type"].get(constraint_type)
                cells.append(f"{_pct(e['fp_rate'])} / {_pct(e['fn_rate'])}" if e else "—")
            lines.append(f"| {constraint_type} | " + " | ".join(cells) + " |")
    groups = [g for g in GROUP_ORDER if any(g in m["groups"] for m in verifiers.values())]
    groups += sorted({g for m in verifiers.values() for g in m["groups"]} - set(groups))
    lines += [
        "",
        "## Table 3 — by complexity group (number of constraints): F1 / pass@1",
        "",
        "| group | pairs | " + " | ".join(verifiers) + " |",
        "|---|---:|" + "---:|" * len(verifiers),
    ]
    for group in groups:
        cells, pairs = [], 0
        for m in verifiers.values():
            g = m["groups"].get(group)
            pairs = max(pairs, g["n"] if g else 0)
            cells.append(f"{_pct(g['f1'])} / {_pct(g['pass_at_1'])}" if g else "—")
        lines.append(f"| {group} | {pairs} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Table 4 — cost per verification (means over pairs; tokens as the endpoint reports them)",
        "",
        *(
            [
                "Canned answers: " + ", ".join(canned) + " answered from the data's labels (a plumbing check); "
                "prompt tokens are real, answer tokens those of the script's answers.",
                "",
            ]
            if (canned := sorted({label for label in report.get("llms", {}).values() if _canned(label)}))
            else []
        ),
        "| verifier | LLM calls | cached calls | prompt tokens | completion tokens | total tokens | checker runs | "
        "LLM s | wall s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, m in verifiers.items():
        p = m["cost"]["per_pair"]
        total = (p["prompt_tokens"] or 0) + (p["completion_tokens"] or 0)
        lines.append(
            f"| {name} | {_num(p['llm_calls'])} | {_num(p['cached_calls'])} | {_num(p['prompt_tokens'], 0)} | "
            f"{_num(p['completion_tokens'], 0)} | {_num(total, 0)} | {_num(p['checker_runs'])} | "
            f"{_num(p['llm_seconds'], 2)} | {_num(p['wall_seconds'], 2)} |"
        )
    return "\n".join(lines) + "\n"


__all__ = ["DATA_FILE", "evaluate", "generate_data", "import_ifeval", "optimize_judge", "read_data", "report_markdown"]
