"""The grid of a sweep and the identity of its attempts: which attempts a ``SweepSpec`` means, as
JSON jobs, each with an id that is a hash of everything that can change its outcome (task, format,
prompt, detail, policy, LLM spec, repair budget, token limit, compile budget, repeat), so the same
grid point always lands in the same directory."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from autonesy.agents.options import DECODING_MODES, PROMPT_STYLES
from autonesy.graph.results import EXPERT
from autonesy.graph.run import RunConfig, default_decoding
from autonesy.tasks.options import DETAIL_LEVELS
from autonesy.tasks.registry import TASK_NAMES, TaskSpec
from autonesy.tasks.task import TaskError
from autonesy.tools import registry
from autonesy.tools.config import COMPILE_TIME_LIMIT_S, LLM_TIMEOUT_S, MAX_REPAIRS
from autonesy.tools.errors import AutonesyError
from autonesy.tools.llm_spec import LLMSpec, LLMSpecError, default_llm, redact_spec
from autonesy.tools.options import FORMATS


class SweepError(AutonesyError, ValueError):
    """A sweep that cannot start (bad grid, unusable option, a directory held by another sweep)."""


@dataclass(frozen=True)
class SweepSpec:
    """The grid. Empty ``llms`` means the default LLM ($AUTONESY_LLM, else local); the expert
    policy has no LLM. ``policy=None`` runs each prompt style's own benchmark policy."""

    tasks: tuple[str, ...] = ("all",)
    formats: tuple[str, ...] = FORMATS
    prompts: tuple[str, ...] = PROMPT_STYLES
    details: tuple[str, ...] = DETAIL_LEVELS
    llms: tuple[str, ...] = ()
    policy: str | None = None
    repeats: int = 1
    max_repairs: int = MAX_REPAIRS
    max_tokens: int | None = None
    compile_time_limit_s: float = COMPILE_TIME_LIMIT_S
    llm_timeout_s: float = LLM_TIMEOUT_S
    decoding: str | None = None  # free | grammar; default: grammar for the embedded model, else free
    attempt_time_limit_s: float | None = None  # wall seconds per attempt (run in a child process); None: unbounded
    data: bool = False  # oracle tests also check the tasks' annotated training labels (catalogue tasks)
    limit: int | None = None  # run a sample of this many attempts of the grid (see ``sample``); None: all
    sample_seed: int = 0  # which sample ``limit`` draws
    cache: bool = True  # answers from the shared response cache; False: every request goes to the LLM

    def to_dict(self) -> dict[str, Any]:
        """The grid as JSON (tuples as lists), as ``sweep.json`` records it."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def split_list(values: Iterable[str] | str | None) -> list[str]:
    """'a,b' and ['a,b', 'c'] → ['a', 'b', 'c'] (order kept, duplicates dropped)."""
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    out: list[str] = []
    for value in values:
        for item in str(value).split(","):
            item = item.strip()
            if item and item not in out:
                out.append(item)
    return out


def parse_choice(
    values: Iterable[str] | str | None, allowed: Sequence[str], what: str, aliases: Mapping[str, str] = {}
) -> tuple[str, ...]:
    """Parse a comma list of options against ``allowed``: 'all'/'both' (or nothing) means every one, an alias maps to
    its name, anything else is a ``SweepError`` naming the choices."""
    items = split_list(values)
    if not items or items in (["all"], ["both"]):
        return tuple(allowed)
    out = []
    for item in items:
        item = aliases.get(item, item)
        if item not in allowed:
            raise SweepError(f"unknown {what} {item!r}; choose from {', '.join(allowed)} (or all)")
        if item not in out:
            out.append(item)
    return tuple(out)


def expand_tasks(items: Iterable[str]) -> list[str]:
    """Task specs of the grid: 'all' → the 18 catalogue tasks; 'satbench:PATH' / 'dcpbench:PATH' →
    one spec per kept record/problem; task files by absolute path; registered names (a plugin's
    ``mypkg/name``) as they are; ``mypkg/*`` → every task the plugin registers (its task pack)."""
    from autonesy.tasks import adapters

    specs: list[str] = []
    for item in items:
        kind = TaskSpec.parse(item).kind
        if item == "all":
            found = list(TASK_NAMES)
        elif kind in ("satbench", "dcpbench"):
            try:
                found = adapters.expand(item)
            except TaskError as error:
                raise SweepError(str(error)) from None
            if not found:
                raise SweepError(f"{item}: no usable task found")
        elif kind == "taskfile":
            path = Path(item).expanduser()
            if not path.is_file():
                raise SweepError(f"{item}: no such task file")
            found = [str(path.resolve())]
        elif item in TASK_NAMES:
            found = [item]
        else:
            try:  # a plugin's task (mypkg/name), or all of them (mypkg/*)
                pack = item.endswith(f"{registry.SEPARATOR}*")
                found = registry.pack("task", item[:-2]) if pack else [registry.lookup("task", item).name]
            except registry.PluginError as error:
                raise SweepError(str(error)) from None
            except registry.RegistryError as error:
                raise SweepError(
                    f"{error}; or give 'all', task files (*.toml), satbench:PATH or dcpbench:PATH"
                ) from None
        specs.extend(spec for spec in found if spec not in specs)
    return specs


def attempt_identity(config: RunConfig, repeat: int) -> dict[str, Any]:
    """What makes two attempts the same: everything that can change the outcome (not the timeout)."""
    return {
        "task": config.task,
        "format": config.format,
        "prompt": config.prompt,
        "detail": config.detail,
        "policy": config.policy,
        "llm": config.llm.redacted if config.llm else EXPERT,
        "max_repairs": config.max_repairs,
        "max_tokens": config.max_tokens,
        "compile_time_limit_s": config.compile_time_limit_s,
        "repeat": repeat,
        **({"decoding": "grammar"} if config.decoding == "grammar" else {}),
    }


def attempt_id(config: RunConfig, repeat: int) -> str:
    """The attempt's directory name: a short hash of its identity, so the same grid point always lands in the same
    directory and resumes there."""
    text = json.dumps(attempt_identity(config, repeat), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def expand(spec: SweepSpec) -> list[dict[str, Any]]:
    """The grid's attempts as jobs (JSON data), in grid order; raises SweepError on a bad grid."""
    formats = parse_choice(spec.formats, FORMATS, "format")
    prompts = parse_choice(spec.prompts, PROMPT_STYLES, "prompt style")
    details = parse_choice(spec.details, DETAIL_LEVELS, "detail level", {"not_detailed": "not-detailed"})
    policy = spec.policy
    if policy is not None:
        try:
            registry.lookup("policy", policy)  # a plugin's (mypkg/name) is loaded now
        except registry.RegistryError as error:
            raise SweepError(str(error)) from None
    if policy in PROMPT_STYLES and set(prompts) != {policy}:
        raise SweepError(
            f"--policy {policy} fixes the prompt style; leave --policy out to run each prompt "
            f"style's own policy, or give --prompts {policy}"
        )
    if spec.repeats < 1:
        raise SweepError("--repeats must be at least 1")
    if spec.decoding is not None and spec.decoding not in DECODING_MODES:
        raise SweepError(f"unknown decoding {spec.decoding!r}; choose {' or '.join(DECODING_MODES)}")
    llms: list[LLMSpec | None] = [None] if policy == EXPERT else _llm_specs(spec.llms)
    tasks = expand_tasks(split_list(spec.tasks) or ["all"])
    jobs = []
    for llm in llms:
        for task in tasks:
            for fmt in formats:
                for prompt in prompts:
                    for detail in details:
                        for repeat in range(spec.repeats):
                            config = RunConfig(
                                task=task,
                                format=fmt,
                                prompt=prompt,
                                detail=detail,
                                policy=policy or prompt,
                                llm=llm,
                                max_repairs=spec.max_repairs,
                                compile_time_limit_s=spec.compile_time_limit_s,
                                llm_timeout_s=spec.llm_timeout_s,
                                max_tokens=spec.max_tokens,
                                decoding=None if llm is None else spec.decoding or default_decoding(llm),
                                data=spec.data,
                                cache=spec.cache,
                            )
                            jobs.append(
                                {
                                    "attempt_id": attempt_id(config, repeat),
                                    "config": config.to_dict(),
                                    "repeat": repeat,
                                    "llm": llm.text if llm else EXPERT,
                                }
                            )
    return jobs if spec.limit is None else sample(jobs, spec.limit, spec.sample_seed)


def sample(jobs: Sequence[Mapping[str, Any]], limit: int, seed: int = 0) -> list[dict[str, Any]]:
    """``limit`` attempts of the grid, in grid order: those whose hash of (seed, attempt id) is
    smallest. The same on every run and machine (no random state), and a larger limit keeps the
    attempts of a smaller one, so a sample grows by resuming."""
    if limit < 1:
        raise SweepError("--limit must be at least 1")

    def rank(job: Mapping[str, Any]) -> str:
        return hashlib.sha256(f"{seed}:{job['attempt_id']}".encode()).hexdigest()

    chosen = {job["attempt_id"] for job in sorted(jobs, key=rank)[:limit]}
    return [dict(job) for job in jobs if job["attempt_id"] in chosen]


def _llm_specs(texts: Iterable[str]) -> list[LLMSpec | None]:
    """The grid's LLMs, parsed (a bad spec is a ``SweepError``); none given: the default LLM."""
    try:
        return [LLMSpec.parse(text) for text in split_list(texts)] or [default_llm()]
    except LLMSpecError as error:
        raise SweepError(str(error)) from None


def job_group(job: Mapping[str, Any]) -> str:
    """The concurrency group of a job: its LLM endpoint (the spec before '@'), or 'expert'."""
    return EXPERT if job["llm"] == EXPERT else LLMSpec.parse(job["llm"]).endpoint_group


def left_out_of(spec: SweepSpec, kind: str = "left_out") -> dict[str, dict[str, str]]:
    """For each benchmark copy in the grid's tasks, its records/problems that are not tasks (``kind``
    "left_out") or are tasks whose ground truth has no exact count ("unscorable"), with why."""
    from autonesy.tasks import adapters

    listing = adapters.left_out if kind == "left_out" else adapters.unscorable
    found = {}
    for item in split_list(spec.tasks):
        if TaskSpec.parse(item).kind in ("satbench", "dcpbench"):
            try:
                found[item] = listing(item)
            except TaskError as error:
                raise SweepError(str(error)) from None
    return {item: reasons for item, reasons in found.items() if reasons}


def public_job(job: Mapping[str, Any]) -> dict[str, Any]:
    """The job as written to disk: a password in its LLM spec redacted (the worker gets the job itself)."""
    return {
        **job,
        "llm": redact_spec(job["llm"]),
        "config": {**job["config"], "llm": redact_spec(job["config"]["llm"])},
    }
