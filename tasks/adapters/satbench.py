"""SATBench (Wei et al., EMNLP 2025; dataset ``LLM4Code/SATBench``) records as tasks.

Layout read (the dataset's ``SATBench-problems.jsonl``): one JSON object per line with

    dims              list of ints, the index ranges of the variables x(i), x(i, j), x(i, j, k)
    num_vars          number of variables (product of dims)
    num_clauses       number of clauses
    readable          the CNF, e.g. ``(x(0, 1) ∨ ¬x(1, 2)) ∧ (x(2,))`` (1-D variables are written x(i,))
    satisfiable       true / false
    scenario          the puzzle's story
    variable_mapping  a sentence saying what x(i, j, …) means (e.g. "Let x(i, j) mean machine i runs task j.")
    conditions        list of natural-language conditions, one per clause
    question          e.g. "Can all these conditions be satisfied?"

PATH may be such a .jsonl file, a .json file holding a list of records, or a folder of them. Only
satisfiable records are kept (as in auto-nesy-bench: 1,041 of 2,100). A copy holding all 2,100
records of the released dataset must hold exactly 1,041 satisfiable ones (:data:`RELEASED`,
checked by :func:`keys`): a different count means a different or damaged copy. A record's key is its
0-based position in its file (``satbench:FILE#17``; in a folder ``satbench:DIR#FILESTEM:17``), counting
every record, so keys do not move when the filter changes.

The task: one Boolean variable per index tuple of ``dims`` in row-major order, named ``x_i_j``
(x(i, j) in the record's notation); both description levels are the scenario, the variable
explanation, the numbered conditions and the record's question (SATBench has one level; the
question is shown as SATBench's own, with what the formula must say); the ground truth is the
``readable`` CNF itself (no auxiliary variables); the oracle evaluates its clauses directly.
"""

from __future__ import annotations

import itertools
import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from autonesy.tasks.adapters.base import AdapterError
from autonesy.tasks.task import Descriptions, Task, TaskMetadata, Variable
from autonesy.tools.cnf import CNF

RELEASED = {"records": 2100, "satisfiable": 1041}  # LLM4Code/SATBench as released (auto-nesy-bench's count)
REQUIRED = ("readable", "satisfiable", "scenario", "variable_mapping", "conditions")
CITATION = (
    "A. Wei, Y. Wu, Y. Wan, T. Suresh, H. Tan, Z. Zhou, S. Koyejo, K. Wang, A. Aiken. SATBench: "
    "Benchmarking LLMs' Logical Reasoning via Automated Puzzle Generation from SAT Formulas. EMNLP 2025 "
    "(arXiv:2505.14615)"
)

_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<var>x\s*\(\s*(?P<index>\d+(?:\s*,\s*\d+)*)\s*,?\s*\))
  | (?P<not>¬|~|!|\bNOT\b|\bnot\b)
  | (?P<or>∨|\||\\/|\bOR\b|\bor\b)
  | (?P<and>∧|&|/\\|\bAND\b|\band\b)
  | (?P<lp>\()
  | (?P<rp>\))
""",
    re.VERBOSE,
)


def parse_readable(text: str) -> list[list[tuple[bool, tuple[int, ...]]]]:
    """``(x(0,1) ∨ ¬x(1,2)) ∧ …`` → clauses of (positive, index) literals; AdapterError with the position."""
    tokens: list[tuple[str, tuple[int, ...], int]] = []  # kind, index of a variable (else empty), position
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise AdapterError(
                f"readable formula: unexpected {text[position : position + 12]!r} at character {position}"
            )
        kind = "var" if match.group("var") else match.lastgroup
        assert kind is not None  # every alternative of _TOKEN is a named group
        if kind != "space":
            value = tuple(int(i) for i in re.split(r"\s*,\s*", match.group("index").strip())) if kind == "var" else ()
            tokens.append((kind, value, position))
        position = match.end()
    tokens.append(("end", (), len(text)))
    index = 0

    def peek() -> str:
        return tokens[index][0]

    def take(kind: str) -> tuple[int, ...]:
        nonlocal index
        found, value, where = tokens[index]
        if found != kind:
            raise AdapterError(f"readable formula: expected {kind} at character {where}, found {found}")
        index += 1
        return value

    def literal() -> tuple[bool, tuple[int, ...]]:
        positive = True
        while peek() == "not":
            take("not")
            positive = not positive
        if peek() == "lp":  # ¬(x(0,1)) or (x(0,1)) as a literal
            take("lp")
            sign, var = literal()
            take("rp")
            return (positive == sign), var
        return positive, take("var")

    def disjunction() -> list[tuple[bool, tuple[int, ...]]]:
        clause = [literal()]
        while peek() == "or":
            take("or")
            clause.append(literal())
        return clause

    def term() -> list[tuple[bool, tuple[int, ...]]]:
        if peek() == "lp":
            take("lp")
            clause = disjunction()
            take("rp")
            return clause
        return [literal()]

    clauses: list[list[tuple[bool, tuple[int, ...]]]] = []
    if peek() == "end":
        return clauses
    clauses.append(term())
    while peek() == "and":
        take("and")
        clauses.append(term())
    take("end")
    return clauses


def _json_problem(error: ValueError | RecursionError) -> str:
    """What is wrong with a received JSON text, in a few words (a crafted one may nest past the recursion limit)."""
    if isinstance(error, json.JSONDecodeError):
        return f"{error.msg} at line {error.lineno}"
    return "arrays or objects nested too deep"


def _load_file(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        records = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except (json.JSONDecodeError, RecursionError) as error:
                    raise AdapterError(f"{path}:{number}: not JSON ({_json_problem(error)})") from None
        return records
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as error:
        raise AdapterError(f"{path}: not JSON ({_json_problem(error)})") from None
    if isinstance(data, dict):
        data = next((data[k] for k in ("data", "records", "train", "rows") if isinstance(data.get(k), list)), None)
    if not isinstance(data, list):
        raise AdapterError(f"{path}: expected a list of SATBench records")
    return data


@lru_cache(maxsize=16)
def _records(path: Path, stamp: tuple) -> dict[str, dict[str, Any]]:
    if path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".jsonl", ".json") and p.is_file())
        if not files:
            raise AdapterError(f"{path}: no .jsonl or .json files")
        return {f"{file.stem}:{i}": record for file in files for i, record in enumerate(_load_file(file))}
    return {str(i): record for i, record in enumerate(_load_file(path))}


def records(path: Path) -> dict[str, dict[str, Any]]:
    """Every record of the copy by key (satisfiable or not)."""
    path = Path(path)
    if not path.exists():
        raise AdapterError(f"satbench: {path} does not exist")
    if not (path.is_dir() or path.is_file()):  # a FIFO or a device would be waited on
        raise AdapterError(f"satbench: {path} is neither a file nor a directory")
    files = sorted(path.iterdir()) if path.is_dir() else [path]
    stamp = tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files if f.is_file())
    return _records(path, stamp)


def _satisfiable(record: Any) -> bool:
    value = record.get("satisfiable") if isinstance(record, dict) else None
    if isinstance(value, str):
        return value.strip().lower() in ("true", "sat", "yes", "1")
    return bool(value)


def keys(path: Path) -> list[str]:
    """Keys of the satisfiable records, in file order; a full copy's count is checked against the release."""
    found = records(path)
    kept = [key for key, record in found.items() if isinstance(record, dict) and _satisfiable(record)]
    if len(found) == RELEASED["records"] and len(kept) != RELEASED["satisfiable"]:
        raise AdapterError(
            f"satbench:{path}: {len(kept)} of its {len(found)} records are satisfiable, but the released "
            f"dataset has {RELEASED['satisfiable']}; is this copy complete and unmodified?"
        )
    return kept


def left_out(path: Path) -> dict[str, str]:
    """Records that are not tasks, with the reason."""
    return {
        key: "unsatisfiable (only satisfiable SATBench records are tasks)"
        if isinstance(record, dict)
        else "not a JSON object"
        for key, record in records(path).items()
        if not (isinstance(record, dict) and _satisfiable(record))
    }


def _index_space(record: dict[str, Any], clauses, where: str) -> list[tuple[int, ...]]:
    dims = record.get("dims")
    used = sorted({var for clause in clauses for _, var in clause})
    if isinstance(dims, list) and dims and all(isinstance(d, int) and d > 0 for d in dims):
        space = list(itertools.product(*(range(d) for d in dims)))
        allowed = set(space)
        for var in used:
            if var not in allowed:
                raise AdapterError(f"{where}: x{var} lies outside dims {dims}")
        return space
    if not used:
        raise AdapterError(f"{where}: no dims and no variables in the formula")
    if len({len(v) for v in used}) != 1:
        raise AdapterError(f"{where}: variables of different dimensions and no dims")
    return used


def _written(var: tuple[int, ...]) -> str:
    return f"x({var[0]},)" if len(var) == 1 else f"x({', '.join(map(str, var))})"


def _conditions(value: Any) -> str:
    if isinstance(value, str):
        return value.strip()
    lines = []
    for number, item in enumerate(value or [], start=1):
        item = str(item).strip()
        lines.append(item if re.match(r"^\d+[.)]\s", item) else f"{number}. {item}")
    return "\n".join(lines)


def load(path: Path, key: str) -> Task:
    """One SATBench record as a task; an unknown key is an ``AdapterError``."""
    all_records = records(path)
    where = f"satbench:{path}#{key}"
    if key not in all_records:
        raise AdapterError(f"{where}: no such record (keys run 0..{len(all_records) - 1})")
    record = all_records[key]
    if not isinstance(record, dict):
        raise AdapterError(f"{where}: a record must be a JSON object")
    missing = [field for field in REQUIRED if field not in record]
    if missing:
        raise AdapterError(f"{where}: missing field(s) {', '.join(missing)}")
    if not _satisfiable(record):
        raise AdapterError(f"{where}: the record is unsatisfiable (only satisfiable SATBench records are tasks)")
    clauses = parse_readable(str(record["readable"]))
    space = _index_space(record, clauses, where)
    position = {var: i for i, var in enumerate(space, start=1)}
    names = ["x_" + "_".join(map(str, var)) for var in space]
    variables = tuple(Variable(name, f"{_written(var)} of the variable explanation") for name, var in zip(names, space))
    cnf = CNF(
        len(space),
        tuple(tuple(position[var] if positive else -position[var] for positive, var in clause) for clause in clauses),
        len(space),
    )
    example = space[0]
    text = (
        f"{str(record['scenario']).strip()}\n\n{str(record['variable_mapping']).strip()}\n"
        f"The variable named x_{'_'.join(map(str, example))} stands for {_written(example)}, and so on for every index.\n\n"
        f"Conditions (all must hold):\n{_conditions(record['conditions'])}"
        + (
            f"\n\nSATBench's question about this puzzle: {str(record['question']).strip()}\nThe formula must hold "
            "exactly when all the conditions above hold (whether they can is for a solver to decide)."
            if str(record.get("question") or "").strip()
            else ""
        )
    )
    columns = [np.array([position[var] - 1 for _, var in clause], dtype=np.int64) for clause in clauses]
    signs = [np.array([positive for positive, _ in clause], dtype=bool) for clause in clauses]

    def oracle_batch(rows: np.ndarray) -> np.ndarray:
        rows = np.asarray(rows, dtype=bool)
        ok = np.ones(len(rows), dtype=bool)
        for cols, sign in zip(columns, signs):
            ok &= (rows[:, cols] == sign).any(axis=1)
        return ok

    safe_key = re.sub(r"[^A-Za-z0-9_-]+", "-", key)
    n = len(space)
    metadata = TaskMetadata(
        source_dataset=f"SATBench (LLM4Code/SATBench), record {key} of {path.name}",
        citation=CITATION,
        licence="Apache-2.0",
        published_clauses=record.get("num_clauses") if isinstance(record.get("num_clauses"), int) else None,
        data_provenance="none",
        equivalence_method="clausal",
        design_notes=(
            f"{n} variables x_<indices> over dims {record.get('dims')}; ground truth = the record's readable "
            f"CNF ({len(clauses)} clauses); both description levels are the puzzle text"
            + (f"; question: {record['question']}" if record.get("question") else "")
        ),
    )
    return Task(
        f"satbench-{safe_key}",
        variables,
        Descriptions(text, text),
        metadata,
        lambda: cnf,
        oracle_batch,
        rule_list=lambda: cnf,
    )
