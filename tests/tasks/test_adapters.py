"""satbench and dcpbench adapters on fixture copies written here in the datasets' own layouts:
SATBench's JSONL records (LLM4Code/SATBench) and DCP-Bench-Open's dataset/<name>/<name>.cpmpy.py +
<name>.json folders (and its released JSONL)."""

import itertools
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autonesy.graph.sweep.grid import SweepSpec
from autonesy.graph.sweep.run import run_sweep
from autonesy.tasks.adapters import AdapterError, expand, parse_spec
from autonesy.tasks.adapters.satbench import parse_readable
from autonesy.tasks.registry import load_task
from autonesy.tools.counting import count_models

SAT_RECORDS = [
    {
        "dims": [3, 2],
        "num_vars": 6,
        "num_clauses": 3,
        "readable": "(¬x(2, 0) ∨ x(0, 0)) ∧ (¬x(0, 0) ∨ x(2, 1)) ∧ (x(2, 0))",
        "satisfiable": True,
        "scenario": "A factory has 3 machines (0, 1, 2); each may run task 0 or task 1, independently.",
        "variable_mapping": "Let x(i, j) mean machine i is assigned task j.",
        "conditions": [
            "Either machine 2 is not on task 0, or machine 0 is on task 0.",
            "Either machine 0 is not on task 0, or machine 2 is on task 1.",
            "Machine 2 is on task 0.",
        ],
        "question": "Can all these assignments be satisfied?",
    },
    {
        "dims": [2],
        "num_vars": 2,
        "num_clauses": 2,
        "readable": "(x(0,)) ∧ (¬x(0,))",
        "satisfiable": False,
        "scenario": "Two lamps.",
        "variable_mapping": "Let x(i,) mean lamp i is on.",
        "conditions": ["Lamp 0 is on.", "Lamp 0 is off."],
        "question": "Can both hold?",
    },
    {
        "dims": [3],
        "num_vars": 3,
        "num_clauses": 2,
        "readable": "(x(0,)) ∧ (x(1,) ∨ ¬x(0,) ∨ ¬x(2,))",
        "satisfiable": True,
        "scenario": "Three roommates — Alice (0), Bob (1) and Carol (2) — may take the chore.",
        "variable_mapping": "Let x(i,) mean roommate i takes the chore.",
        "conditions": ["1. Alice takes it.", "2. Either Bob does, or Alice doesn't, or Carol doesn't."],
        "question": "Can all these conditions be true at once?",
    },
]

AMONG = '''#!/usr/bin/python3
# Category: fixtures
# Source: written for the autonesy-agent tests

"""
Exactly m entries of the array x (each between 0 and 3) take a value from the list v.

Print the array x (x).
"""

# Data
n = 3  # Length of x
m = 2  # How many entries take a value of v
v = [1, 2]  # The values
# End of data

# Import libraries
from cpmpy import *
import json

x = intvar(0, 3, shape=n, name="x")
model = Model([m == sum([x[i] == j for i in range(len(x)) for j in v])])
model.solve()
print(json.dumps({"x": x.value().tolist()}))
'''

PICK = '''# Category: fixtures
"""
Pick at least k of four items; picking item 0 rules out item 1.

Print the picks (pick).
"""
# Data
k = 2
# End of data
from cpmpy import *
import json
pick = boolvar(shape=4, name="pick")
model = Model(sum(pick) >= k, pick[0].implies(~pick[1]))
if model.solve():
    print(json.dumps({"pick": pick.value().tolist()}))
'''

SMALLEST = '''# Category: fixtures
"""
Choose x as small as possible, at least 1.

Print x (x).
"""
# Data
# End of data
from cpmpy import *
x = intvar(0, 3, name="x")
model = Model(x >= 1)
model.minimize(x)
model.solve()
'''

SIGNS = '''"""
a must hold and x is at least 2.

Print the flags (flags) and the double of x (dbl), where flags[0] is true when a is false.
"""
from cpmpy import *
a, b = boolvar(name="a"), boolvar(name="b")
x = intvar(0, 3, name="x")
flags = [~a, b]
dbl = 2 * x
model = Model(a, x >= 2)
model.solve()
'''

AFTER_SOLVE = '''"""
Split 1..4 into two pairs with equal sums.

Print the pairs (A, B).
"""
from cpmpy import *
import json

def partition():
    x = intvar(1, 4, shape=2, name="x")
    y = intvar(1, 4, shape=2, name="y")
    return Model(AllDifferent(list(x) + list(y)), sum(x) == sum(y)), (x, y)

model, (x, y) = partition()
model.solve()
A = x
B = y
print(json.dumps({"A": x.value().tolist(), "B": y.value().tolist()}))
'''

BROKEN = '''"""
A model that does not run.

Print y (y).
"""
from cpmpy import *
y = boolvar(name="y")
model = Model(y == undefined_name)
model.solve()
'''


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture
def satbench(tmp_path):
    path = tmp_path / "SATBench-problems.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in SAT_RECORDS))
    return path


@pytest.fixture(scope="module")
def dcp_repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("DCP-Bench-Open")
    for name, source, instances in (
        ("among", AMONG, [{"n": 3, "m": 2, "v": [1, 2]}, {"n": 4, "m": 1, "v": [0]}]),
        ("pick", PICK, [{"k": 2}]),
        ("smallest", SMALLEST, []),
        ("broken", BROKEN, []),
        ("signs", SIGNS, []),
        ("after_solve", AFTER_SOLVE, []),
    ):
        folder = root / "dataset" / name
        folder.mkdir(parents=True)
        (folder / f"{name}.cpmpy.py").write_text(source)
        (folder / f"{name}.json").write_text(json.dumps(instances))
    return root


# ------------------------------------------------------------------------------------- satbench
def test_satbench_keeps_the_satisfiable_records(satbench):
    specs = expand(f"satbench:{satbench}")
    assert specs == [f"satbench:{satbench}#0", f"satbench:{satbench}#2"]
    with pytest.raises(AdapterError, match="unsatisfiable"):
        load_task(f"satbench:{satbench}#1")
    with pytest.raises(AdapterError, match="no such record"):
        load_task(f"satbench:{satbench}#7")
    with pytest.raises(AdapterError, match="names a whole benchmark copy"):
        load_task(f"satbench:{satbench}")


def test_satbench_task_variables_description_ground_truth_and_oracle(satbench):
    task = load_task(f"satbench:{satbench}#0")
    assert task.name == "satbench-0"
    assert task.names == ["x_0_0", "x_0_1", "x_1_0", "x_1_1", "x_2_0", "x_2_1"]
    assert task.variables[5].meaning == "x(2, 1) of the variable explanation"
    text = task.descriptions.detailed
    assert text.startswith("A factory has 3 machines") and "Let x(i, j) mean machine i" in text
    assert "3. Machine 2 is on task 0." in text and task.descriptions.not_detailed == text
    # (¬x20 ∨ x00) ∧ (¬x00 ∨ x21) ∧ x20 over [x00, x01, x10, x11, x20, x21] = [1..6]
    assert task.ground_truth.clauses == ((-5, 1), (-1, 6), (5,)) and task.ground_truth.num_aux_vars == 0
    rows = np.array(list(itertools.product([0, 1], repeat=6)), dtype=bool)
    by_hand = rows[:, 4] & rows[:, 0] & rows[:, 5]
    assert (task.oracle_batch(rows) == by_hand).all() and by_hand.sum() == 8
    assert count_models(task.ground_truth).value == 8
    one_d = load_task(f"satbench:{satbench}#2")
    assert one_d.names == ["x_0", "x_1", "x_2"] and one_d.variables[0].meaning == "x(0,) of the variable explanation"
    assert "2. Either Bob does" in one_d.descriptions.detailed and "1. 1." not in one_d.descriptions.detailed


def test_satbench_reads_a_json_list_and_a_folder(tmp_path):
    folder = tmp_path / "copy"
    folder.mkdir()
    (folder / "part.json").write_text(json.dumps(SAT_RECORDS))
    assert [s.rsplit("#", 1)[1] for s in expand(f"satbench:{folder}")] == ["part:0", "part:2"]
    assert load_task(expand(f"satbench:{folder / 'part.json'}")[1]).names == ["x_0", "x_1", "x_2"]


def test_readable_parser_and_its_errors():
    assert parse_readable("(x(0,1) ∨ ¬x(1, 2)) ∧ x(2,)") == [[(True, (0, 1)), (False, (1, 2))], [(True, (2,))]]
    assert parse_readable("(~x(0,) | x(1,)) & (!x(1,))") == [[(False, (0,)), (True, (1,))], [(False, (1,))]]
    assert parse_readable("") == []
    with pytest.raises(AdapterError, match="unexpected 'y"):
        parse_readable("(x(0,) ∨ y(1,))")
    with pytest.raises(AdapterError, match="expected rp"):
        parse_readable("(x(0,) ∨ x(1,)")


def test_adapter_specs_are_parsed():
    assert parse_spec("dcpbench:/data/dcp#among")[0::2] == ("dcpbench", "among")
    with pytest.raises(AdapterError, match="give the path"):
        parse_spec("satbench:")
    with pytest.raises(AdapterError, match="does not exist"):
        expand("satbench:/no/such/file.jsonl")


# ------------------------------------------------------------------------------------- dcpbench
def test_dcpbench_keeps_the_satisfaction_problems_that_convert(dcp_repo):
    from autonesy.tasks.adapters import dcpbench

    survey = dcpbench.survey(dcp_repo)
    assert survey["smallest"] == {"ok": False, "reason": "optimisation problem"}
    assert not survey["broken"]["ok"] and "undefined_name" in survey["broken"]["reason"]
    assert expand(f"dcpbench:{dcp_repo}") == [
        f"dcpbench:{dcp_repo}#{k}" for k in ("after_solve", "among", "pick", "signs")
    ]
    assert dcpbench.left_out(dcp_repo) == {"broken": survey["broken"]["reason"], "smallest": "optimisation problem"}
    with pytest.raises(AdapterError, match="optimisation problem"):
        load_task(f"dcpbench:{dcp_repo}#smallest")


def test_dcpbench_integer_variables_become_one_hot_task_variables(dcp_repo):
    task = load_task(f"dcpbench:{dcp_repo / 'dataset'}#among")
    assert task.name == "dcpbench-among"
    assert task.names == [f"x_{i}_eq_{v}" for i in range(3) for v in range(4)]
    assert task.variables[6].meaning == "x[1] = 2 (x: the array x)"
    # The "Print …" paragraph (where DCP-Bench-Open defines values and indices) reaches both descriptions.
    assert "Exactly m entries" in task.descriptions.detailed and "Print the array x (x)." in task.descriptions.detailed
    assert "Print the array x (x)." in task.descriptions.not_detailed
    assert "n = 3" in task.descriptions.not_detailed and "exactly one of them is true" in task.descriptions.detailed
    assert "exactly one" not in task.descriptions.not_detailed
    # Solutions: x ∈ {0..3}^3 with exactly two entries in {1, 2}: C(3,2)·2²·2 = 24, each one-hot.
    assert count_models(task.ground_truth).value == 24
    pick = load_task(f"dcpbench:{dcp_repo}#pick")
    assert (
        pick.names == ["pick_0", "pick_1", "pick_2", "pick_3"]
        and pick.variables[0].meaning == "pick[0] is true (pick: the picks)"
    )
    assert count_models(pick.ground_truth).value == 7  # 11 subsets of size ≥ 2, minus the 4 holding items 0 and 1


def _models(task):
    """The ground truth's models projected on the task variables, by brute force over them."""
    from pysat.solvers import Minisat22

    cnf = task.ground_truth
    with Minisat22(bootstrap_with=cnf.clauses) as solver:
        found = set()
        while solver.solve():
            model = solver.get_model()
            point = tuple(model[i - 1] > 0 for i in range(1, task.num_vars + 1))
            found.add(point)
            solver.add_clause([-lit for lit in model[: task.num_vars]])
        return {tuple(name for name, on in zip(task.names, point) if on) for point in found}


def test_dcpbench_negated_and_expression_decision_variables_keep_their_meaning(dcp_repo):
    task = load_task(f"dcpbench:{dcp_repo}#signs")
    assert task.names[:2] == ["flags_0", "flags_1"]
    assert task.names[2:] == [f"dbl_eq_{v}" for v in range(7)]  # 2·x with x ∈ 0..3: bounds 0..6
    # a holds, so flags[0] = ~a is false in every solution; x ∈ {2, 3} so dbl ∈ {4, 6}; b is free.
    assert _models(task) == {("dbl_eq_4",), ("dbl_eq_6",), ("flags_1", "dbl_eq_4"), ("flags_1", "dbl_eq_6")}


def test_dcpbench_reads_decision_variables_named_after_solve(dcp_repo):
    task = load_task(f"dcpbench:{dcp_repo}#after_solve")
    assert task.names[:4] == ["A_0_eq_1", "A_0_eq_2", "A_0_eq_3", "A_0_eq_4"]
    # {x0, x1} and {y0, y1} both sum to 5: x is an ordered pair from {1,4} or {2,3}, y the other: 4·2 = 8.
    assert len(_models(task)) == 8 == count_models(task.ground_truth).value


def test_dcpbench_reports_memory_exhaustion_as_such():
    from autonesy.tasks.adapters.dcpbench import _failure
    from autonesy.tools.sandbox import SandboxLimits

    reason = _failure(
        "runtime",
        "the program was terminated by SIGABRT\nLast error output:\nmemory allocation of 8 bytes failed",
        SandboxLimits(),
    )
    assert reason.startswith("out of memory:") and "2 GiB" in reason
    assert _failure("runtime", "the program was terminated by SIGABRT", SandboxLimits()).startswith("out of memory")
    assert _failure("runtime", "ZeroDivisionError: division by zero", SandboxLimits()).startswith(
        "runtime: ZeroDivision"
    )


def test_dcpbench_reads_the_released_jsonl(tmp_path):
    record = {
        "id": "pick",
        "metadata": ["# Category: fixtures"],
        "description": PICK.split('"""')[1].strip(),
        "example_instance": "k = 2",
        "model": PICK.split("# End of data", 1)[1],
        "decision_variables": ["pick"],
    }
    path = tmp_path / "dcp-bench-open.jsonl"
    path.write_text(json.dumps(record) + "\n")
    [spec] = expand(f"dcpbench:{path}")
    assert count_models(load_task(spec).ground_truth).value == 7


def test_dcpbench_a_ground_truth_past_the_clause_cap_is_left_out_not_a_sweep_crash(dcp_repo, tmp_path, monkeypatch):
    """A model that converts in the sandbox but whose CNF exceeds the clause cap is listed as left out
    with that reason when surveyed, so a sweep over the copy runs the others instead of stopping."""
    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools.formats import cpmpy_program

    among = dcpbench.problems(dcp_repo)["among"]
    clauses = dcpbench._encode(among, None)["data"]["dimacs"].count("\n")
    monkeypatch.setattr(cpmpy_program, "MAX_CLAUSES", clauses - 1)
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path / "fresh-cache"))
    reason = dcpbench.left_out(dcp_repo)["among"]
    assert reason == f"too_large: the CPMpy model's CNF has more than {clauses - 1:,} clauses"
    assert f"dcpbench:{dcp_repo}#among" not in expand(f"dcpbench:{dcp_repo}")
    with pytest.raises(AdapterError, match="left out \\(too_large"):
        load_task(f"dcpbench:{dcp_repo}#among")
    copy = f"dcpbench:{dcp_repo}"
    spec = SweepSpec(tasks=(copy,), formats=("dimacs",), prompts=("zs",), details=("detailed",), policy="expert")
    result = run_sweep(spec, tmp_path / "sweep", progress=False)
    assert "dcpbench-among" not in {r["task"] for r in result.rows} and result.left_out[copy]["among"] == reason
    assert {r["task"] for r in result.rows if r["f1"] == 1.0} >= {"dcpbench-pick"}


# ------------------------------------------------------------------------------------- in sweeps
def test_expert_sweeps_over_adapter_tasks_score_f1_one(satbench, dcp_repo, tmp_path):
    spec = SweepSpec(
        tasks=(f"satbench:{satbench}", f"dcpbench:{dcp_repo}"),
        formats=("dimacs", "nat"),
        prompts=("zs",),
        details=("detailed",),
        policy="expert",
    )
    result = run_sweep(spec, tmp_path / "sweep", progress=False)
    by_task = {(r["task"], r["format"]): r for r in result.rows}
    assert {r["benchmark"] for r in result.rows} == {"satbench", "dcpbench"}
    for task in ("satbench-0", "satbench-2"):
        for fmt in ("dimacs", "nat"):
            assert by_task[(task, fmt)]["f1"] == 1.0 and by_task[(task, fmt)]["relation"] == "equal"
    for task in ("dcpbench-among", "dcpbench-pick"):
        assert by_task[(task, "dimacs")]["f1"] == 1.0
    # NAT has no auxiliary variables: a DCP ground truth that needs them (signs: ~a and 2·x are linked
    # through helper variables) has no expert reference there, a final outcome (not an error to retry);
    # among's one-hot ground truth needs none (its sum became clauses over the task variables).
    assert load_task(f"dcpbench:{dcp_repo}#among").ground_truth.num_aux_vars == 0
    assert by_task[("dcpbench-among", "nat")]["f1"] == 1.0
    assert by_task[("dcpbench-signs", "nat")]["status"] == "not_applicable"
    assert "auxiliary" in by_task[("dcpbench-signs", "nat")]["reason"]
    assert run_sweep(spec, tmp_path / "sweep", progress=False).progress.done == 0
    # Every record/problem that is not a task is listed with its reason.
    [grid] = json.loads((tmp_path / "sweep" / "sweep.json").read_text())["grids"]
    assert grid["left_out"][f"satbench:{satbench}"] == {
        "1": "unsatisfiable (only satisfiable SATBench records are tasks)"
    }
    assert set(grid["left_out"][f"dcpbench:{dcp_repo}"]) == {"broken", "smallest"}
    assert result.left_out == grid["left_out"]


def test_task_show_gives_satbench_questions_and_dcpbench_value_meanings(satbench, dcp_repo, monkeypatch):
    from typer.testing import CliRunner

    from autonesy.graph.cli import app, common

    monkeypatch.setattr(common.console, "width", 200)  # rich reads COLUMNS once, when the console is made

    shown = CliRunner().invoke(app, ["task", "show", f"satbench:{satbench}#0"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "A factory has 3 machines" in shown.output and "Can all these assignments be satisfied?" in shown.output
    shown = CliRunner().invoke(app, ["task", "show", f"dcpbench:{dcp_repo}#signs"], env={"COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert "flags[0] is true when a is false" in shown.output and "dbl[] = 4" not in shown.output
    assert "dbl = 4 (dbl: the double of x)" in shown.output


def test_satbench_checks_a_full_copy_against_the_released_count(tmp_path):
    from autonesy.tasks.adapters import satbench as adapter

    path = tmp_path / "SATBench-problems.jsonl"
    unsat = {**SAT_RECORDS[1]}
    lines = [SAT_RECORDS[0]] * adapter.RELEASED["satisfiable"] + [unsat] * (
        adapter.RELEASED["records"] - adapter.RELEASED["satisfiable"]
    )
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert len(expand(f"satbench:{path}")) == 1041
    path.write_text("".join(json.dumps(r) + "\n" for r in lines[1:] + [unsat]))
    with pytest.raises(
        AdapterError, match="1040 of its 2100 records are satisfiable, but the released dataset has 1041"
    ):
        expand(f"satbench:{path}")


def test_dcpbench_ground_truth_counts_equal_the_original_models_projected_solution_counts(dcp_repo):
    from autonesy.tasks.adapters import dcpbench

    found = dcpbench.problems(dcp_repo)
    for key in ("among", "pick", "signs", "after_solve"):
        reference = dcpbench.solution_count(found[key])
        assert reference.get("complete"), (key, reference)
        assert count_models(load_task(f"dcpbench:{dcp_repo}#{key}").ground_truth).value == reference["count"], key


def test_a_real_dcpbench_problem_keeps_what_its_values_mean():
    from pathlib import Path

    from autonesy.tasks.adapters import dcpbench

    repo = Path(__file__).parent / "data" / "dcpbench"
    task = load_task(f"dcpbench:{repo}#allergy")
    assert "where Debra = 0, Janet = 1, Hugh = 2, Rick = 3" in task.descriptions.detailed
    assert "where Debra = 0, Janet = 1, Hugh = 2, Rick = 3" in task.descriptions.not_detailed
    meanings = {v.name: v.meaning for v in task.variables}
    assert meanings["eggs_eq_2"] == "eggs = 2 (eggs: the values of each food)"
    assert meanings["fleet_eq_0"] == "fleet = 0 (fleet: surname)"
    reference = dcpbench.solution_count(dcpbench.problems(repo)["allergy"])
    assert reference == {"count": 1, "complete": True} and count_models(task.ground_truth).value == 1


def _projected(outcome, names):
    from autonesy.tools.formats.cpmpy_program import reindex

    cnf = reindex(outcome["data"], names)
    from bruteforce import sat_models

    return sat_models(cnf, len(names))


def test_dcpbench_every_encoding_admits_the_same_solutions(dcp_repo):
    """Each encoding the conversion tries (one-hot integers, CPMpy's own choice, binary adders for the
    linear constraints: the fallbacks when one blows up) gives the same projected models."""
    from autonesy.tasks.adapters import dcpbench

    found = dcpbench.problems(dcp_repo)
    for key in ("among", "signs", "after_solve"):
        outcomes = [dcpbench._encode(found[key], encoder, one_hot) for one_hot, encoder in dcpbench.ENCODINGS]
        assert all(o["ok"] for o in outcomes) and outcomes[-1]["encoder"] == "ADDER"
        assert len({tuple(o["names"]) for o in outcomes}) == 1
        models = [_projected(o, o["names"]) for o in outcomes]
        assert models[0] and all(m == models[0] for m in models), key


def _random_model(draw):
    """A small random CPMpy model (source text) and the same constraints as a Python predicate."""
    n = draw(st.integers(2, 4))
    domains = [(lb, lb + draw(st.integers(0, 3))) for lb in draw(st.lists(st.integers(-1, 1), min_size=n, max_size=n))]
    texts, checks = [], []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(
            st.sampled_from(["alldifferent", "linear", "table", "product", "element", "modulo", "hidden", "spread"])
        )
        if kind == "alldifferent":
            scope = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=n, unique=True))
            texts.append(f"AllDifferent([{', '.join(f'x[{i}]' for i in scope)}])")
            checks.append(lambda v, scope=scope: len({v[i] for i in scope}) == len(scope))
        elif kind == "linear":
            weights = draw(st.lists(st.integers(-2, 2), min_size=n, max_size=n))
            op, k = draw(st.sampled_from(["<=", "==", ">=", "!="])), draw(st.integers(-3, 4))
            texts.append(f"sum([{', '.join(f'{w} * x[{i}]' for i, w in enumerate(weights))}]) {op} {k}")
            ops = {"<=": int.__le__, "==": int.__eq__, ">=": int.__ge__, "!=": int.__ne__}
            checks.append(lambda v, w=weights, f=ops[op], k=k: f(sum(a * b for a, b in zip(w, v)), k))
        elif kind == "product":  # few allowed combinations
            i, j = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
            k = draw(st.integers(-2, 4))
            texts.append(f"x[{i}] * x[{j}] == {k}")
            checks.append(lambda v, i=i, j=j, k=k: v[i] * v[j] == k)
        elif kind == "element":  # an array of integers and constants indexed by an integer expression
            i, j = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
            size = domains[i][1] - domains[i][0] + 1
            items = draw(
                st.lists(st.one_of(st.integers(-1, 2), st.sampled_from([f"x[{j}]"])), min_size=size, max_size=size)
            )
            k = draw(st.integers(-1, 3))
            texts.append(f"cpm_array([{', '.join(map(str, items))}])[x[{i}] - {domains[i][0]}] >= {k}")
            checks.append(
                lambda v, i=i, j=j, lb=domains[i][0], items=items, k=k: (
                    (v[j] if isinstance(items[v[i] - lb], str) else items[v[i] - lb]) >= k
                )
            )
        elif kind == "modulo":  # CPMpy's modulo and division round the quotient towards zero
            i, j = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
            m, k, w = draw(st.sampled_from([2, 3, -2])), draw(st.integers(-1, 2)), draw(st.sampled_from([1, -3]))
            texts.append(f"({w} * x[{i}] + x[{j}]) % {m} + x[{j}] // 2 == {k}")
            checks.append(
                lambda v, i=i, j=j, m=m, k=k, w=w: (
                    (w * v[i] + v[j]) - m * int((w * v[i] + v[j]) / m) + int(v[j] / 2) == k
                )
            )
        elif kind == "hidden":  # an integer of the model that is not a decision variable
            i, j = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
            texts.append(f"intvar(0, 2) == x[{i}] - x[{j}]")
            checks.append(lambda v, i=i, j=j: 0 <= v[i] - v[j] <= 2)
        elif kind == "spread":  # min and max over every integer, and a disjunction
            k = draw(st.integers(0, 3))
            texts.append(f"(max(x) - min(x) <= {k}) | (x[0] == x[1])")
            checks.append(lambda v, k=k: max(v) - min(v) <= k or v[0] == v[1])
        else:
            i, j = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
            pairs = sorted(
                itertools.product(range(domains[i][0], domains[i][1] + 1), range(domains[j][0], domains[j][1] + 1))
            )
            rows = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=len(pairs), unique=True))
            texts.append(f"Table([x[{i}], x[{j}]], {[list(r) for r in rows]})")
            checks.append(lambda v, i=i, j=j, rows=set(rows): (v[i], v[j]) in rows)
    variables = ", ".join(f"intvar({lb}, {ub}, name='x{i}')" for i, (lb, ub) in enumerate(domains))
    source = (
        '"""\nA random model.\n\nPrint the values (x).\n"""\nfrom cpmpy import *\n'
        f"x = cpm_array([{variables}])\nmodel = Model([{', '.join(texts)}])\nmodel.solve()\n"
    )
    return domains, source, lambda v: all(check(v) for check in checks)


def _one_hot(domains, values) -> tuple[int, ...]:
    """The task variables' row of an integer assignment: one per value, one only for a 0/1 integer."""
    row: list[int] = []
    for (lb, ub), value in zip(domains, values):
        row += [int(value == 1)] if (lb, ub) == (0, 1) else [int(value == d) for d in range(lb, ub + 1)]
    return tuple(row)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_dcpbench_encodings_admit_exactly_the_one_hot_images_of_the_solutions(data):
    """On random small models (all-different, linear, product, table, element, modulo and division,
    min/max, a disjunction, a hidden integer), the ground truth of each encoding the conversion
    tries (binary adders aside), projected on the task variables, is the set of one-hot images of the model's solutions, found
    here by trying every assignment."""
    from autonesy.tasks.adapters import dcpbench

    domains, source, holds = _random_model(data.draw)
    problem = dcpbench.Problem("random", "A random model.\n\nPrint the values (x).", source, "", ("x",), (), "test")
    expected = {_one_hot(domains, v) for v in itertools.product(*(range(lb, ub + 1) for lb, ub in domains)) if holds(v)}
    with pytest.MonkeyPatch.context() as patch:
        # Few tuples: all-different pairwise, the rest to the encoder or, flattened, into small tables.
        patch.setattr(dcpbench, "MAX_TUPLES", data.draw(st.sampled_from([4, 20, dcpbench.MAX_TUPLES]), label="tuples"))
        # Every integer one-hot: each constraint flattened first, or only past the usual table size.
        patch.setattr(dcpbench, "TABLE_UP_TO", data.draw(st.sampled_from([1, dcpbench.TABLE_UP_TO]), label="flatten"))
        if data.draw(st.booleans(), label="few forbidden"):  # a helper per allowed combination where few
            patch.setattr(dcpbench, "MAX_FORBIDDEN", 6)
        if data.draw(st.booleans(), label="no pairwise exactly-one"):  # the encoder's exactly-one
            patch.setattr(dcpbench, "PAIRWISE_UP_TO", 1)
        for one_hot, encoder in dcpbench.ENCODINGS[:3]:
            outcome = dcpbench._encode(problem, encoder, one_hot)
            assert outcome["ok"], outcome
            assert _projected(outcome, outcome["names"]) == expected, (one_hot, source)


def test_dcpbench_flattening_counts_bales_weighed_in_pairs():
    """Bales of hay as DCP-Bench-Open states it (each pair's weight is bales[i] + bales[j] for unknown
    indices i < j: elements with variable indices), four bales of 0..25: every integer one-hot and
    each constraint flattened into small tables. The count is every assignment whose six pairwise
    sums, sorted, are the weights, found here by trying all 26^4; the CNF stays small (the
    element/sum tables, no adder)."""
    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools.formats.cpmpy_program import reindex

    weights = [22, 25, 27, 30, 32, 35]  # the pairs of 10, 12, 15, 20
    source = (
        '"""\nBales weighed in pairs.\n\nPrint the bales (bales).\n"""\nfrom cpmpy import *\n'
        'bales = intvar(0, 25, shape=4, name="bales")\nmodel = Model()\n'
        f"for w in {weights}:\n    i = intvar(0, 3)\n    j = intvar(0, 3)\n"
        "    model += [i < j, w == bales[i] + bales[j]]\nmodel.solve()\n"
    )
    problem = dcpbench.Problem(
        "bales", "Bales weighed in pairs.\n\nPrint the bales (bales).", source, "", ("bales",), (), "t"
    )
    grid = np.array(list(itertools.product(range(26), repeat=4)))
    sums = np.sort(np.stack([grid[:, a] + grid[:, b] for a, b in itertools.combinations(range(4), 2)], axis=1), axis=1)
    expected = int(np.all(sums == weights, axis=1).sum())
    outcome = dcpbench._encode(problem, None, "all")
    assert outcome["ok"] and outcome["encoding"].startswith("all integers one-hot"), outcome
    truth = reindex(outcome["data"], outcome["names"])
    assert truth.num_task_vars == 4 * 26 and truth.num_vars < 5000, truth.num_vars
    assert count_models(truth, time_limit_s=600).value == expected >= 24  # a loaded CI machine is slow


def test_dcpbench_sums_of_booleans_as_literal_counts_keep_the_models():
    """Sums too wide for a table, under the "counts" encoding: a residue of a sum plus a constant, a weighted
    sum with negative weights of one size (its offset), a sum of products with the constant on the left —
    declared as literal counts (a product gets a Boolean defined equal to it) —, and a sum with weights
    that differ, left to pindakaas. The CNF has the models of the "decision" encoding's (pindakaas's sums
    throughout): both counts, and the count of both at once, are the number of assignments of the 18
    Booleans that satisfy the four constraints, found here by trying all 2^18."""
    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools.formats.cpmpy_program import reindex
    from autonesy.tools.literal_count import recognised

    source = (
        '"""\nEighteen switches.\n\nPrint the switches (x).\n"""\nfrom cpmpy import *\n'
        'x = boolvar(shape=18, name="x")\nmodel = Model()\n'
        "model += (sum(x) + 1) % 3 == 1\n"
        "model += sum([2 * x[i] for i in range(9)]) - 2 * sum(x[9:]) >= 2\n"
        "model += 2 <= sum([x[i] * x[i + 9] for i in range(9)])\n"
        "model += sum([(i + 1) * x[i] for i in range(18)]) >= 20\n"
        "model.solve()\n"
    )
    problem = dcpbench.Problem("switches", "Eighteen switches.\n\nPrint the switches (x).", source, "", ("x",), (), "t")
    grid = np.array(list(itertools.product((0, 1), repeat=18)))
    low, high = grid[:, :9], grid[:, 9:]
    holds = (grid.sum(axis=1) % 3 == 0) & (2 * low.sum(axis=1) - 2 * high.sum(axis=1) >= 2)
    holds &= (grid * np.arange(1, 19)).sum(axis=1) >= 20
    expected = int((holds & ((low * high).sum(axis=1) >= 2)).sum())
    truths = {}
    for one_hot in ("decision", "counts"):
        outcome = dcpbench._encode(problem, None, one_hot)
        assert outcome["ok"], outcome
        truths[one_hot] = reindex(outcome["data"], outcome["names"])
    assert len(outcome["data"]["counts"]) == 3 and len(recognised(truths["counts"])) == 3
    assert count_models(truths["counts"], time_limit_s=600).value == expected > 0
    assert count_models(truths["decision"], time_limit_s=600).value == expected
    both = truths["counts"].conjoin(truths["decision"])
    assert count_models(both, time_limit_s=600).value == expected  # the same models, not just as many


def test_dcpbench_an_integer_equal_to_a_sum_of_booleans_is_a_guarded_count(monkeypatch):
    """Under the "counts" encoding, an integer compared with a sum of Booleans (the handshakes of a person,
    the integer not a decision variable) is one-hot, each of its values a guard of one literal count:
    three rows of five switches whose row sums are three distinct numbers, the second row's sum plus
    one at most the first's, the third's at least 2 (tables of at most 4 rows here, so that rows of five
    are wide). Both encodings' counts, and their conjunction's, are the number of the 2^15 assignments
    with such row sums, found here by trying them all."""
    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools.formats.cpmpy_program import reindex
    from autonesy.tools.literal_count import recognised

    source = (
        '"""\nRows of switches.\n\nPrint the switches (b).\n"""\nfrom cpmpy import *\n'
        'b = boolvar(shape=(3, 5), name="b")\nd = intvar(0, 5, shape=3, name="d")\n'
        "model = Model(AllDifferent(d))\n"
        "for i in range(3):\n    model += d[i] == sum(b[i])\n"
        "model += sum(b[1]) + 1 <= d[0]\nmodel += d[2] >= 2\nmodel.solve()\n"
    )
    monkeypatch.setattr(dcpbench, "MAX_TUPLES", 4)
    problem = dcpbench.Problem("rows", "Rows of switches.\n\nPrint the switches (b).", source, "", ("b",), (), "t")
    grid = np.array(list(itertools.product((0, 1), repeat=15))).reshape(-1, 3, 5).sum(axis=2)
    s0, s1, s2 = grid[:, 0], grid[:, 1], grid[:, 2]
    expected = int(((s0 != s1) & (s0 != s2) & (s1 != s2) & (s1 + 1 <= s0) & (s2 >= 2)).sum())
    truths = {}
    for one_hot in ("decision", "counts"):
        outcome = dcpbench._encode(problem, None, one_hot)
        assert outcome["ok"], outcome
        truths[one_hot] = reindex(outcome["data"], outcome["names"])
    guarded = [c for c, _ in recognised(truths["counts"]) if c.guards]
    assert len(guarded) == 4 and all(len(c.guards) == 6 for c in guarded)  # three equalities, one inequality
    assert count_models(truths["counts"], time_limit_s=600).value == expected > 0
    assert count_models(truths["decision"], time_limit_s=600).value == expected
    both = truths["counts"].conjoin(truths["decision"])
    assert count_models(both, time_limit_s=600).value == expected


def test_dcpbench_a_sum_past_the_counters_limits_is_left_to_the_encoder(monkeypatch):
    """A residue modulo more than a counter may have states is not declared (the host would refuse it
    and the problem be left out): the conversion goes on with pindakaas's encoding of it. The limit is
    lowered to 4 states here so that a small modulus passes it."""
    import math

    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools.formats.cpmpy_program import reindex

    monkeypatch.setattr(dcpbench, "MAX_STATES", 4)
    source = (
        '"""\nTwenty switches.\n\nPrint the switches (x).\n"""\nfrom cpmpy import *\n'
        'x = boolvar(shape=20, name="x")\nmodel = Model(sum(x) % 5 == 3)\nmodel.solve()\n'
    )
    problem = dcpbench.Problem("twenty", "Twenty switches.\n\nPrint the switches (x).", source, "", ("x",), (), "t")
    outcome = dcpbench._encode(problem, None, "counts")
    assert outcome["ok"] and outcome["data"]["counts"] == []
    expected = sum(math.comb(20, k) for k in range(3, 21, 5))
    assert count_models(reindex(outcome["data"], outcome["names"]), time_limit_s=600).value == expected


def test_dcpbench_the_last_try_takes_the_declared_literal_counts_and_keeps_the_fewest_variables(tmp_path, monkeypatch):
    """A sum of 40 Booleans: the "counts" conversion declares it as a literal count, which the lifted and orbit
    routes read, so the last try takes that conversion (the second of ENCODINGS); the one kept for an unscorable
    problem is still the one with the fewest variables, its literal counts' states included (the sandbox's DIMACS
    header does not hold them: a counter of 40 Booleans up to 21 adds hundreds of variables)."""
    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools.literal_count import recognised

    source = (
        '"""\nForty switches.\n\nPrint the switches (x).\n"""\nfrom cpmpy import *\n'
        'x = boolvar(shape=40, name="x")\nmodel = Model(sum(x) == 20, x[0] | x[1])\nmodel.solve()\n'
    )
    problem = dcpbench.Problem("forty", "Forty switches.\n\nPrint the switches (x).", source, "", ("x",), (), "t")
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path))
    tries: list[tuple[bool, int, bool]] = []

    def out_of_time(truth, listed, last_try=False):
        tries.append((last_try, truth.num_vars, bool(recognised(truth))))
        return {"unscorable": "out of time"}

    monkeypatch.setattr(dcpbench, "_truth_verdict", out_of_time)
    outcome = dcpbench.convert(problem)
    first = [(n, counts) for last, n, counts in tries if not last]
    assert len(first) == len(dcpbench.ENCODINGS) and [counts for _, counts in first] == [
        False,
        True,
        False,
        False,
        False,
    ]
    assert tries[-1] == (True, first[1][0], True)  # the declared counts' conversion
    assert "unscorable" in outcome and not outcome["data"].get("counts")  # kept: the fewest variables
    assert outcome["variables"] == min(n for n, counts in first if not counts)


def test_dcpbench_without_declared_counts_the_last_try_takes_the_fewest_variables(tmp_path, monkeypatch):
    """No sum of Booleans to declare (an all-different): the "counts" conversion is skipped, and the last try
    takes the converted ground truth with the fewest variables."""
    from autonesy.tasks.adapters import dcpbench

    source = (
        '"""\nFour numbers.\n\nPrint the numbers (x).\n"""\nfrom cpmpy import *\n'
        'x = intvar(0, 4, shape=4, name="x")\nmodel = Model(AllDifferent(x))\nmodel.solve()\n'
    )
    problem = dcpbench.Problem("four", "Four numbers.\n\nPrint the numbers (x).", source, "", ("x",), (), "t")
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path))
    tries: list[tuple[bool, int]] = []

    def out_of_time(truth, listed, last_try=False):
        tries.append((last_try, truth.num_vars))
        return {"unscorable": "out of time"}

    monkeypatch.setattr(dcpbench, "_truth_verdict", out_of_time)
    outcome = dcpbench.convert(problem)
    first = [n for last, n in tries if not last]
    assert len(first) == len(dcpbench.ENCODINGS) - 1  # no counts to declare: that conversion is not counted
    assert tries[-1] == (True, min(first)) and outcome["variables"] == min(first)


def test_dcpbench_n_queens_ground_truth_is_the_one_hot_placements_without_helper_variables():
    """8 queens as DCP-Bench-Open states it (three all-different constraints over the columns):
    92 solutions (the known count); one-hot, the ground truth needs no auxiliary variable."""
    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools.formats.cpmpy_program import reindex

    source = (
        '"""\nPlace 8 queens.\n\nPrint the queens (q).\n"""\nfrom cpmpy import *\nq = intvar(0, 7, shape=8, name="q")\n'
        "model = Model(AllDifferent(q), AllDifferent([q[i] + i for i in range(8)]), "
        "AllDifferent([q[i] - i for i in range(8)]))\nmodel.solve()\n"
    )
    problem = dcpbench.Problem("queens", "Place 8 queens.\n\nPrint the queens (q).", source, "", ("q",), (), "test")
    outcome = dcpbench._encode(problem, None, "decision")
    truth = reindex(outcome["data"], outcome["names"])
    assert truth.num_task_vars == 64 and truth.num_aux_vars == 0
    assert count_models(truth).value == 92


def test_dcpbench_tries_the_next_encoding_after_a_blow_up(dcp_repo, monkeypatch):
    from autonesy.tasks.adapters import dcpbench

    real, calls = dcpbench._encode, []

    def encode(problem, linear_encoder, one_hot):
        calls.append((one_hot, linear_encoder))
        if one_hot:
            return {"ok": False, "reason": "out of memory: converting the model needs more than 2 GiB", "retry": True}
        return real(problem, linear_encoder, one_hot)

    monkeypatch.setattr(dcpbench, "_encode", encode)
    outcome = dcpbench.convert(dcpbench.problems(dcp_repo)["pick"])
    assert calls == [("decision", None), ("counts", None), ("all", None), (None, None)]
    assert outcome["ok"] and "retry" not in outcome
    assert outcome["encoding"] == "CPMpy-chosen integers, default linear encoders"
    # A failure that is not a blow-up is not retried, and when every encoding fails each says why.
    calls.clear()
    monkeypatch.setattr(
        dcpbench, "_encode", lambda p, e, o: calls.append((o, e)) or {"ok": False, "reason": "oom", "retry": True}
    )
    outcome = dcpbench.convert(dcpbench.problems(dcp_repo)["among"])
    assert calls == list(dcpbench.ENCODINGS)
    assert outcome["reason"] == "; ".join(f"{dcpbench._encoding_name(o, e)}: oom" for o, e in dcpbench.ENCODINGS)
    calls.clear()
    monkeypatch.setattr(dcpbench, "_encode", lambda p, e, o: calls.append((o, e)) or {"ok": False, "reason": "x"})
    assert dcpbench.convert(dcpbench.problems(dcp_repo)["signs"])["reason"] == "x" and len(calls) == 1
    # A ground truth not counted under one encoding is converted again under the next.
    monkeypatch.setattr(dcpbench, "_encode", real)
    verdicts = iter([{"unscorable": "out of time"}, {"truth": {"count": 5, "method": "m", "seconds": 1.0}}])
    monkeypatch.setattr(dcpbench, "_truth_verdict", lambda truth, listed, last_try: next(verdicts))
    outcome = dcpbench.convert(dcpbench.problems(dcp_repo)["after_solve"])
    # (no sum of Booleans to declare: the "counts" encoding, the first CNF again, is skipped)
    assert outcome["truth"]["count"] == 5 and outcome["encoding"].startswith("all integers one-hot")


@pytest.mark.parametrize(
    "entry",
    [
        '{"ok": true}',
        "[1, 2]",
        '{"ok": "yes", "reason": "x"}',
        '{"ok": true, "names": "a", "meanings": [], "data": {}}',
    ],
)
def test_dcpbench_a_cache_entry_of_the_wrong_shape_is_converted_again(dcp_repo, entry):
    """The conversion cache is a folder others can write: a crafted entry is not trusted as a conversion."""
    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools.cache_entries import entry_path

    problem = dcpbench.problems(dcp_repo)["pick"]
    path = entry_path(dcpbench._cache_dir(), dcpbench._conversion_material(problem))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(entry)
    assert dcpbench.cached(problem) is None
    assert load_task(f"dcpbench:{dcp_repo}#pick").names  # converted again, then built


def test_dcpbench_a_well_shaped_entry_with_a_forged_count_is_not_believed(dcp_repo):
    """The attack of issue 50 on the conversion cache: a genuine entry with its ground-truth count edited (the shape
    still right) no longer carries this user's signature; the problem is converted and counted again."""
    import json

    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools.cache_entries import entry_path
    from autonesy.tools.enumeration import enumerate_models

    problem = dcpbench.problems(dcp_repo)["pick"]
    count = len(enumerate_models(load_task(f"dcpbench:{dcp_repo}#pick").ground_truth))
    assert dcpbench.convert(problem)["truth"]["count"] == count  # converted and cached in this test's cache folder
    path = entry_path(dcpbench._cache_dir(), dcpbench._conversion_material(problem))
    entry = json.loads(path.read_text())
    entry["data"]["truth"]["count"] = count + 1
    path.write_text(json.dumps(entry))
    assert dcpbench.cached(problem) is None
    assert dcpbench.convert(problem)["truth"]["count"] == count


def test_dcpbench_a_ground_truth_that_cannot_be_counted_is_unscorable_at_load_time(dcp_repo, tmp_path, monkeypatch):
    """The verdict (exact count, or unscorable with the reason) is decided when a problem is converted,
    cached with the conversion, listed by a sweep and written into sweep.json."""
    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools import counting
    from autonesy.tools.enumeration import enumerate_models

    task = load_task(f"dcpbench:{dcp_repo}#pick")
    count = len(enumerate_models(task.ground_truth))
    assert dcpbench.truth_count(dcp_repo, "pick")["count"] == count
    assert f"ground truth: {count} models (exact, " in task.metadata.design_notes
    assert dcpbench.unscorable(dcp_repo) == {}

    def out_of_time(cnf, method="auto", **options):
        raise counting.CountTimedOut("auto", options.get("time_limit_s", 0.0))

    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path / "fresh-cache"))
    monkeypatch.setattr(counting, "count_models", out_of_time)
    listings = []  # OR-Tools cannot list the solutions either (else it would count them: the next test)
    monkeypatch.setattr(dcpbench, "solutions", lambda problem: listings.append(problem.id) or {"error": "runtime: x"})
    reasons = dcpbench.unscorable(dcp_repo)
    assert sorted(listings) == ["after_solve", "among", "pick", "signs"]  # once per problem, not per encoding
    assert set(reasons) == set(dcpbench.keys(dcp_repo)) == {"after_solve", "among", "pick", "signs"}
    for reason in reasons.values():  # every encoding was tried, then the kept one once more, longer
        *parts, last = reason.split("; ")
        assert [p.split(":")[0] for p in parts] == [dcpbench._encoding_name(o, e) for o, e in dcpbench.ENCODINGS]
        skipped = [p for p in parts if "no sum of Booleans to declare" in p]  # "counts": the first CNF again
        assert [p.split(":")[0] for p in skipped] in ([], [dcpbench._encoding_name("counts", None)])
        tried = [p for p in parts if p not in skipped]
        assert all("the ground truth's exact model count ran out of time" in p for p in tried)
        assert all("OR-Tools could not list the model's solutions (runtime: x)" in p for p in tried)
        assert last == (
            f"again, within {dcpbench.TRUTH_LAST_TRY_S:g} s: the ground truth's exact model count ran out "
            f"of time: auto count timed out after {dcpbench.TRUTH_LAST_TRY_S:g} s"
        )
    assert dcpbench.truth_count(dcp_repo, "among") == {"unscorable": reasons["among"]}

    def never(cnf, method="auto", **options):
        raise AssertionError("counted again")

    monkeypatch.setattr(counting, "count_models", never)  # the verdicts are read back with the conversions
    assert dcpbench.unscorable(dcp_repo) == reasons
    copy = f"dcpbench:{dcp_repo}"
    spec = SweepSpec(tasks=(copy,), formats=("dimacs",), prompts=("zs",), details=("detailed",), policy="expert")
    result = run_sweep(spec, tmp_path / "sweep", progress=False)
    [grid] = json.loads((tmp_path / "sweep" / "sweep.json").read_text())["grids"]
    assert grid["unscorable"] == result.unscorable == result.to_dict()["unscorable"] == {copy: reasons}


def test_dcpbench_an_unscorable_verdict_is_decided_again_when_the_counting_routes_change(
    dcp_repo, tmp_path, monkeypatch
):
    """A cached unscorable verdict holds until the routes change (a stronger counter may count it now);
    an exact count is kept whatever the routes. signs: 4 solutions (the listing test below)."""
    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools import counting

    real_count = counting.count_models

    def out_of_time(cnf, method="auto", **options):
        raise counting.CountTimedOut("auto", options.get("time_limit_s", 0.0))

    def never(cnf, method="auto", **options):
        raise AssertionError("counted again")

    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path / "cache"))
    exact = dcpbench.truth_count(dcp_repo, "pick")
    assert isinstance(exact["count"], int)
    monkeypatch.setattr(counting, "count_models", out_of_time)
    monkeypatch.setattr(dcpbench, "solutions", lambda problem: {"error": "runtime: x"})
    assert "unscorable" in dcpbench.truth_count(dcp_repo, "signs")
    monkeypatch.setattr(counting, "count_models", never)
    assert "unscorable" in dcpbench.truth_count(dcp_repo, "signs")  # read back: same routes
    monkeypatch.setattr(counting, "ROUTES_VERSION", counting.ROUTES_VERSION + 1)
    assert dcpbench.truth_count(dcp_repo, "pick") == exact  # an exact count is not counted again
    monkeypatch.setattr(counting, "count_models", real_count)
    assert dcpbench.truth_count(dcp_repo, "signs")["count"] == 4


def test_dcpbench_or_tools_lists_the_solutions_as_the_one_hot_task_variables(dcp_repo):
    """The listing's bits are the conversion's task variables: the projected models of the one-hot CNF.
    signs: a holds, so flags[0] (not a) is false, b is free and dbl = 2x with x in {2, 3}: 4 solutions."""
    from autonesy.tasks.adapters import dcpbench

    for key, expected in (("signs", 4), ("after_solve", 8), ("pick", None)):
        problem = dcpbench.problems(dcp_repo)[key]
        outcome = dcpbench._encode(problem, None, "decision")
        n = len(outcome["names"])
        listed = dcpbench.solutions(problem)
        assert listed["complete"]
        candidates = {tuple((bits >> i) & 1 for i in range(n)) for bits in listed["solutions"]}
        projected = _projected(outcome, outcome["names"])
        assert candidates == projected and len(listed["solutions"]) == len(projected)
        assert expected is None or len(projected) == expected


def test_dcpbench_a_ground_truth_auto_cannot_count_is_counted_from_or_tools_solutions(dcp_repo, tmp_path, monkeypatch):
    """auto out of time: OR-Tools lists the model's solutions, SAT certifies them against the CNF.
    signs: 4 solutions (above); after_solve: 1..4 split into two pairs of equal sum, {1, 4} and {2, 3},
    either pair first and each in either order: 8."""
    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools import counting

    def out_of_time(cnf, method="auto", **options):
        raise counting.CountTimedOut("auto", options.get("time_limit_s", 0.0))

    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path / "fresh-cache"))
    monkeypatch.setattr(counting, "count_models", out_of_time)
    for key, expected in (("signs", 4), ("after_solve", 8)):
        verdict = dcpbench.truth_count(dcp_repo, key)
        assert verdict["count"] == expected and verdict["method"] == "seeded-enumeration", verdict
    # A listing that is not complete (more solutions than OR-Tools may list, or out of time) counts nothing.
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path / "another-cache"))
    monkeypatch.setattr(dcpbench, "solutions", lambda problem: {"solutions": [1], "complete": False})
    reason = dcpbench.truth_count(dcp_repo, "signs")["unscorable"]
    assert "OR-Tools listed 1 solution but not all within" in reason
    # A certification whose provers all fail is a reason too, not a crash.
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path / "a-third-cache"))
    monkeypatch.setattr(dcpbench, "solutions", lambda problem: {"solutions": [1], "complete": True})
    monkeypatch.setattr(dcpbench, "CERTIFY_MAX_BITS", 0)  # and so is a listing too large to certify
    reason = dcpbench.truth_count(dcp_repo, "signs")["unscorable"]
    assert "OR-Tools' 1 solutions over" in reason and "more than the certification takes (0 bits)" in reason
    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path / "a-fourth-cache"))
    monkeypatch.setattr(dcpbench, "CERTIFY_MAX_BITS", 10**9)

    def provers_fail(cnf, candidates, limit, seeded_by):
        raise counting.CounterFailed("cadical: died; cp-sat: died")

    monkeypatch.setattr(counting, "count_from_candidates", provers_fail)
    reason = dcpbench.truth_count(dcp_repo, "signs")["unscorable"]
    assert "certifying OR-Tools' 1 solutions failed: cadical: died; cp-sat: died" in reason


def test_dcpbench_a_ground_truth_slower_than_the_first_limit_is_counted_by_the_last_try(
    dcp_repo, tmp_path, monkeypatch
):
    """No encoding's ground truth counted within TRUTH_COUNT_LIMIT_S: the kept encoding's is tried once
    more within TRUTH_LAST_TRY_S, by one route. A listing that is not complete: ``auto`` (pick's count,
    from enumerating its ground truth). A complete one: its certification, before ``auto``
    (signs: 4 solutions, above)."""
    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools import counting
    from autonesy.tools.enumeration import enumerate_models

    expected = len(enumerate_models(load_task(f"dcpbench:{dcp_repo}#pick").ground_truth))
    real_count, real_certify, real_solutions = counting.count_models, counting.count_from_candidates, dcpbench.solutions
    limits: list[tuple[str, float]] = []
    sizes: list[int] = []  # the variables of each CNF counted

    def allowed(route: str, limit: float) -> None:  # an answer only within the last try's time
        limits.append((route, limit))
        if limit < dcpbench.TRUTH_LAST_TRY_S:
            raise counting.CountTimedOut(route, limit)

    def slow_count(cnf, method="auto", **options):
        sizes.append(cnf.num_vars)
        allowed("auto", options["time_limit_s"])
        return real_count(cnf, method, **options)

    def slow_certify(cnf, candidates, time_limit_s, seeded_by):
        allowed("certify", time_limit_s)
        return real_certify(cnf, candidates, time_limit_s, seeded_by)

    monkeypatch.setenv("AUTONESY_CACHE_DIR", str(tmp_path / "fresh-cache"))
    monkeypatch.setattr(counting, "count_models", slow_count)
    monkeypatch.setattr(counting, "count_from_candidates", slow_certify)
    monkeypatch.setattr(dcpbench, "solutions", lambda problem: {"solutions": [1], "complete": False})
    verdict = dcpbench.truth_count(dcp_repo, "pick")
    assert verdict["count"] == expected and verdict["method"] != "seeded-enumeration", verdict
    first, last = dcpbench.TRUTH_COUNT_LIMIT_S, dcpbench.TRUTH_LAST_TRY_S

    def distinct(key: str) -> int:  # the count store remembers a timeout per CNF: one try per distinct CNF
        found = dcpbench.problems(dcp_repo)[key]
        return len({dcpbench._encode(found, e, o)["data"]["dimacs"] for o, e in dcpbench.ENCODINGS})

    assert limits == [("auto", first)] * distinct("pick") + [("auto", last)]
    # The last try takes the smallest of the CNFs: the encodings' differ in size.
    assert sizes[-1] == min(sizes[:-1]) < max(sizes[:-1]), sizes

    limits.clear()
    monkeypatch.setattr(dcpbench, "solutions", real_solutions)
    verdict = dcpbench.truth_count(dcp_repo, "signs")
    assert verdict["count"] == 4 and verdict["method"] == "seeded-enumeration", verdict
    assert limits == [("auto", first), ("certify", first)] * distinct("signs") + [("certify", last)]


FORGED_LISTING = '''"""
x is at least 2.

Print x (x).
"""
from cpmpy import *
from cpmpy.solvers.ortools import CPM_ortools
from cpmpy.solvers.solver_interface import ExitStatus
x = intvar(0, 3, name="x")
model = Model(x >= 2)


def forged(self, display=None, time_limit=None, solution_limit=None, **options):
    for value in (0, 1, 2):  # two non-solutions, one solution, and x = 3 left out
        x._value = value
        display()
    self.cpm_status.exitstatus = ExitStatus.OPTIMAL
    return 3


_ORIGINAL_SOLVE[CPM_ortools] = (CPM_ortools.solve, forged)  # what the listing restores after the script
model.solve()
'''


def test_dcpbench_a_script_that_forges_its_solution_listing_does_not_change_the_count(monkeypatch):
    """The script runs before the listing, in the same process: it can hand the listing any solutions
    and call them complete. x in 0..3 with x >= 2 has 2 solutions; the forged listing says x = 0, 1, 2.
    The certification rejects the two non-models and finds x = 3: the count is still 2."""
    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools import counting

    problem = dcpbench.Problem("forged", "x is at least 2.\n\nPrint x (x).", FORGED_LISTING, "", ("x",), (), "test")
    listed = dcpbench.solutions(problem)
    assert listed["complete"] and sorted(listed["solutions"]) == [0b0001, 0b0010, 0b0100]  # the forgery arrives

    def out_of_time(cnf, method="auto", **options):
        raise counting.CountTimedOut("auto", options.get("time_limit_s", 0.0))

    monkeypatch.setattr(counting, "count_models", out_of_time)
    outcome = dcpbench._checked(dcpbench._encode(problem, None, "decision"), lambda: listed)
    assert outcome["truth"]["count"] == 2 and outcome["truth"]["method"] == "seeded-enumeration"
    # More solutions than the listing's cap is refused as a whole, whatever the script did to the cap.
    monkeypatch.setattr(dcpbench, "SOLUTIONS", dcpbench.SOLUTIONS.replace("[: {limit}]", ""))
    assert "at most 2 hexadecimal strings" in dcpbench.solutions(problem, limit=2)["error"]


def test_dcpbench_a_constraint_with_few_allowed_combinations_gets_one_helper_per_combination(monkeypatch):
    """x0 * x1 * x2 = 6 over 0..6 (as DCP-Bench-Open's ages_of_the_sons states 36 = A1 * A2 * A3): 334
    forbidden combinations, 9 allowed ones (the orderings of 1·1·6 and 1·2·3). A clause per forbidden
    combination (no helper variable); past MAX_FORBIDDEN, one helper per allowed combination instead;
    either way the projected models are the one-hot images of those 9."""
    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools.formats.cpmpy_program import reindex

    source = (
        '"""\nThree factors.\n\nPrint the factors (x).\n"""\nfrom cpmpy import *\n'
        'x = intvar(0, 6, shape=3, name="x")\nmodel = Model([x[0] * x[1] * x[2] == 6])\nmodel.solve()\n'
    )
    problem = dcpbench.Problem("factors", "Three factors.\n\nPrint the factors (x).", source, "", ("x",), (), "test")
    expected = {_one_hot([(0, 6)] * 3, v) for v in itertools.product(range(7), repeat=3) if v[0] * v[1] * v[2] == 6}
    assert len(expected) == 9
    for max_forbidden, helpers in ((dcpbench.MAX_FORBIDDEN, 0), (100, 9)):
        monkeypatch.setattr(dcpbench, "MAX_FORBIDDEN", max_forbidden)
        outcome = dcpbench._encode(problem, None, "decision")
        assert reindex(outcome["data"], outcome["names"]).num_aux_vars == helpers
        assert _projected(outcome, outcome["names"]) == expected


def test_dcpbench_a_listing_that_repeats_few_projected_solutions_goes_on_by_blocking(monkeypatch):
    """x in 0..2 is the decision; 24 other Booleans only need x + sum(y) >= 1, so CP-SAT's enumeration
    lists millions of solutions (y differing) for three projected ones: x = 0, 1, 2, the one-hot bits
    0b001, 0b010, 0b100. Out of its second, the listing goes on by blocking and ends complete; without
    the blocking it is incomplete."""
    from autonesy.tasks.adapters import dcpbench

    source = (
        '"""\nThree values.\n\nPrint x (x).\n"""\nfrom cpmpy import *\n'
        'x = intvar(0, 2, name="x")\ny = boolvar(shape=24, name="y")\n'
        "model = Model([x + sum(y) >= 1])\nmodel.solve()\n"
    )
    problem = dcpbench.Problem("repeats", "Three values.\n\nPrint x (x).", source, "", ("x",), (), "test")
    listed = dcpbench.solutions(problem, seconds=1.0)
    assert listed["complete"] and sorted(listed["solutions"]) == [0b001, 0b010, 0b100]
    monkeypatch.setattr(dcpbench, "SOLUTIONS_BLOCKING_UP_TO", 0)
    assert not dcpbench.solutions(problem, seconds=1.0)["complete"]


@pytest.mark.slow  # the reference below is a plain dynamic programme: over a minute
def test_the_real_dcpbench_crew_is_counted_by_lifting_as_its_schedules_are_counted_from_its_data():
    """DCP-Bench's crew, converted as published, counted by lifting; the reference reads the problem's
    data from the script and counts schedules flight by flight: per group of attendants with the same
    attributes, how many worked the last two flights (they rest), and C(free, k) ways to pick this
    flight's k from the others."""
    import ast
    import math
    from collections import Counter, defaultdict
    from pathlib import Path

    from autonesy.tasks.adapters import dcpbench
    from autonesy.tools.formats.cpmpy_program import reindex
    from autonesy.tools.lifted_count import count_by_lifting

    repo = Path(__file__).parent / "data" / "dcpbench"
    problem = dcpbench.problems(repo)["crew"]
    data = {}
    for node in ast.parse(problem.source).body:  # the data section: two literal assignments
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) in ("attributes", "required_crew"):
            data[node.targets[0].id] = ast.literal_eval(node.value)
    groups = list(Counter(tuple(row) for row in data["attributes"]).items())
    sizes = [size for _, size in groups]
    states = {((0,) * len(groups), (0,) * len(groups)): 1}  # (worked two flights ago, worked last flight)
    for staff, *needed in data["required_crew"]:
        picks = [
            k
            for k in itertools.product(*(range(size + 1) for size in sizes))
            if sum(k) == staff
            and all(sum(n * row[j] for n, (row, _) in zip(k, groups)) >= needed[j] for j in range(len(needed)))
        ]
        following = defaultdict(int)
        for (before, last), ways in states.items():
            free = [size - a - b for size, a, b in zip(sizes, before, last)]
            for k in picks:
                if all(n <= f for n, f in zip(k, free)):
                    following[(last, k)] += ways * math.prod(math.comb(f, n) for f, n in zip(free, k))
        states = following
    expected = sum(states.values())
    outcome = dcpbench._encode(problem, None, "counts")
    assert count_by_lifting(reindex(outcome["data"], outcome["names"])) == expected
