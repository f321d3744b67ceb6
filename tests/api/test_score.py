"""``autonesy.score`` and ``autonesy.compile`` against brute force, and what they do with what they are given."""

from __future__ import annotations

import itertools
import json
import os
import threading
from pathlib import Path

import pytest
from bruteforce import projected_models
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import autonesy
from autonesy.graph.cli import app
from autonesy.tools.cnf import CNF, parse_dimacs, to_dimacs

N = 10  # fashion's classes; its rule: exactly one of them


def exactly_one_count(models: set[tuple[int, ...]]) -> int:
    return sum(1 for y in models if sum(y) == 1)


@st.composite
def fashion_cnfs(draw) -> CNF:
    """Random CNFs over fashion's 10 variables and up to 2 auxiliaries."""
    aux = draw(st.integers(0, 2))
    literal = st.integers(1, N + aux).flatmap(lambda v: st.sampled_from((v, -v)))
    clauses = draw(st.lists(st.lists(literal, min_size=1, max_size=4).map(tuple), max_size=6))
    return CNF(N, tuple(clauses), N + aux)


@settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(cnf=fashion_cnfs())
def test_the_confusion_counts_are_the_brute_force_ones(cnf):
    models = projected_models(cnf)
    tp = exactly_one_count(models)
    s = autonesy.score(to_dimacs(cnf), task="fashion", format="dimacs")
    assert (s.tp, s.fp, s.fn, s.tn) == (tp, len(models) - tp, N - tp, 2**N - len(models) - (N - tp))
    assert s.exact and s.formula.num_task_vars == N


def test_the_cli_prints_the_api_record(tmp_path):
    names = autonesy.load_task("fashion").names
    answer = tmp_path / "answer.txt"
    answer.write_text("<cnf>\n" + f"{names[0]} OR {names[1]}\n" + "</cnf>\n")
    done = CliRunner().invoke(app, ["score", str(answer), "--task", "fashion", "--format", "nat", "--json"])
    assert done.exit_code == 0, done.output
    printed = json.loads(done.output)
    record = json.loads(json.dumps(autonesy.score(answer, task="fashion", format="nat").to_dict()))

    def values(data: dict) -> dict:  # how long each count took, and whether it was cached, differ between runs
        return {**data, "counts": {side: count["value"] for side, count in data["counts"].items()}}

    assert values(printed) == values(record)
    # x1 OR x2: 3 · 2^8 models; 2 of them have exactly one class true
    assert (printed["tp"], printed["fp"], printed["fn"]) == (2, 3 * 2**8 - 2, 8)
    assert printed["task"] == "fashion" and printed["format"] == "nat" and "formula" not in printed


def test_a_named_file_may_be_a_link_or_a_pipe(tmp_path):
    target = tmp_path / "formula.cnf"
    target.write_text("p cnf 10 1\n1 0\n")
    (tmp_path / "link.cnf").symlink_to(target)
    assert autonesy.score(tmp_path / "link.cnf", task="fashion", format="dimacs").tp == 1
    fifo = tmp_path / "fifo.cnf"  # as `score <(generate)` names one
    os.mkfifo(fifo)
    writer = threading.Thread(target=fifo.write_text, args=("p cnf 10 1\n2 0\n",))
    writer.start()
    assert autonesy.score(fifo, task="fashion", format="dimacs").tp == 1
    writer.join(timeout=10)
    with pytest.raises(autonesy.FormulaError, match="cannot read it"):
        autonesy.score(tmp_path / "missing.cnf", task="fashion", format="dimacs")


@pytest.mark.parametrize(
    ("answer", "options", "message"),
    [
        ("tshirt_top OR", {"format": "nat"}, "the whole text is not a nat formula either"),
        ("<cnf>\nsneakers OR nothing\n</cnf>", {"format": "nat"}, "nothing"),
        ("tshirt_top", {"format": "latex"}, "unknown format 'latex'"),
        ("tshirt_top", {"format": "nat", "count": "guess"}, "unknown counting method 'guess'"),
    ],
)
def test_what_cannot_be_scored_is_a_formula_error_saying_why(answer, options, message):
    with pytest.raises(autonesy.FormulaError, match=message):  # an AutonesyError: the CLI prints one line
        autonesy.score(answer, task="fashion", **options)


def test_compile_writes_the_formula_and_its_circuit(tmp_path):
    names = autonesy.load_task("fashion").names
    answer = "\n".join(
        [" OR ".join(names[:3]), *(f"NOT ({a} AND {b})" for a, b in itertools.combinations(names[:3], 2))]
    )
    compiled = autonesy.compile(answer, task="fashion", format="nat", out=tmp_path, name="first3")
    assert [p.name for p in compiled.files] == ["first3.cnf", "first3.sdd", "first3.vtree"]
    assert all(p.is_file() for p in compiled.files)
    written = parse_dimacs(Path(compiled.files[0]).read_text())
    assert written.num_task_vars == N
    # exactly one of the first three classes, the other seven free: 3 · 2^7
    assert compiled.model_count == 3 * 2**7 == len(projected_models(written))
