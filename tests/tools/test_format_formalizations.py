"""Correct formalizations, written by hand in each of the five formats as an LLM would write them,
convert to CNF and score `equal` against the ground truth of at least three tasks each."""

import pytest

from autonesy.tasks.registry import get_task
from autonesy.tools.formats import convert
from autonesy.tools.metrics import score_formula

FASHION = ["tshirt_top", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "ankle_boot"]
FINDINGS = ["cardiomegaly", "effusion", "consolidation", "pneumothorax"]
CODES = ["code_healthy", "code_green", "code_yellow", "code_orange", "code_red"]
ITEMS = ["tuna", "fatty_tuna", "salmon_roe", "sea_urchin"]


def _sushi(item, rank):
    return f"{item}_rank_{rank}"


def _dimacs_exactly_one(lits):
    return [list(lits)] + [[-a, -b] for i, a in enumerate(lits) for b in lits[i + 1 :]]


def _dimacs(clauses, num_vars):
    body = "\n".join(" ".join(map(str, c)) + " 0" for c in clauses)
    return f"p cnf {num_vars} {len(clauses)}\n{body}"


def _chx_dimacs():
    from itertools import product

    clauses = _dimacs_exactly_one(list(range(5, 10)))
    for pattern in product((0, 1), repeat=4):
        code = 5 + sum(pattern)
        clauses.append([-(i + 1) if v else i + 1 for i, v in enumerate(pattern)] + [code])
    return _dimacs(clauses, 9)


def _sushi_index(item, rank):
    return ITEMS.index(item) * 4 + rank


def _sushi_dimacs():
    clauses = []
    for item in ITEMS:
        clauses += _dimacs_exactly_one([_sushi_index(item, r) for r in range(1, 5)])
    for rank in range(1, 5):
        clauses += _dimacs_exactly_one([_sushi_index(item, rank) for item in ITEMS])
    return _dimacs(clauses, 16)


def _nat_exactly_one(names):
    lines = [" OR ".join(names)]
    lines += [f"NOT ({a} AND {b})" for i, a in enumerate(names) for b in names[i + 1 :]]
    return "\n".join(lines)


def _nat_chx():
    from itertools import product

    lines = [_nat_exactly_one(CODES)]
    for pattern in product((0, 1), repeat=4):
        present = " AND ".join(f if v else f"NOT {f}" for f, v in zip(FINDINGS, pattern))
        lines.append(f"({present}) IMPLIES {CODES[sum(pattern)]}")
    return "\n".join(lines)


def _nat_sushi():
    lines = [_nat_exactly_one([_sushi(i, r) for r in range(1, 5)]) for i in ITEMS]
    lines += [_nat_exactly_one([_sushi(i, r) for i in ITEMS]) for r in range(1, 5)]
    return "\n".join(lines)


PYSAT = {
    "fashion": "formula = CNF(from_clauses=CardEnc.equals(lits=list(VARS.values()), bound=1, vpool=vpool).clauses)",
    "chx": """
findings = [cardiomegaly, effusion, consolidation, pneumothorax]
codes = [code_healthy, code_green, code_yellow, code_orange, code_red]
clauses = CardEnc.equals(lits=codes, bound=1, vpool=vpool).clauses
for pattern in itertools.product([0, 1], repeat=4):
    clauses.append([-f if v else f for f, v in zip(findings, pattern)] + [codes[sum(pattern)]])
""",
    "sushi": """
items = ["tuna", "fatty_tuna", "salmon_roe", "sea_urchin"]
grid = [[VARS[f"{item}_rank_{r}"] for r in range(1, 5)] for item in items]
clauses = []
for row in grid:
    clauses += CardEnc.equals(lits=row, bound=1, vpool=vpool, encoding=EncType.seqcounter).clauses
for column in zip(*grid):
    clauses += CardEnc.equals(lits=list(column), bound=1, vpool=vpool, encoding=EncType.seqcounter).clauses
""",
}

CPMPY = {
    "fashion": "constraints = [cp.sum(list(VARS.values())) == 1]",
    "chx": """
findings = cp.cpm_array([cardiomegaly, effusion, consolidation, pneumothorax])
codes = [code_healthy, code_green, code_yellow, code_orange, code_red]
constraints = [cp.sum(codes) == 1]
constraints += [codes[k] == (cp.sum(findings) == k) for k in range(5)]
""",
    "sushi": """
items = ["tuna", "fatty_tuna", "salmon_roe", "sea_urchin"]
grid = cp.cpm_array([[VARS[f"{i}_rank_{r}"] for r in range(1, 5)] for i in items])
constraints = [cp.sum(row) == 1 for row in grid] + [cp.sum(col) == 1 for col in grid.T]
""",
}

SYMPY = {
    "fashion": """
vs = [tshirt_top, trouser, pullover, dress, coat, sandal, shirt, sneaker, bag, ankle_boot]
constraints = [Or(*vs)] + [Not(And(a, b)) for i, a in enumerate(vs) for b in vs[i + 1:]]
""",
    "chx": """
import itertools
findings = [cardiomegaly, effusion, consolidation, pneumothorax]
codes = [code_healthy, code_green, code_yellow, code_orange, code_red]
constraints = [Or(*codes)] + [Not(And(a, b)) for i, a in enumerate(codes) for b in codes[i + 1:]]
for pattern in itertools.product([0, 1], repeat=4):
    present = And(*[f if v else Not(f) for f, v in zip(findings, pattern)])
    constraints.append(Implies(present, codes[sum(pattern)]))
""",
    "sushi": """
items = ["tuna", "fatty_tuna", "salmon_roe", "sea_urchin"]
grid = [[sp.Symbol(f"{i}_rank_{r}") for r in range(1, 5)] for i in items]
def exactly_one(xs):
    return And(Or(*xs), *[Not(And(a, b)) for k, a in enumerate(xs) for b in xs[k + 1:]])
formula = And(*[exactly_one(row) for row in grid], *[exactly_one(list(col)) for col in zip(*grid)])
""",
}

FORMALIZATIONS = {
    ("dimacs", "fashion"): _dimacs(_dimacs_exactly_one(list(range(1, 11))), 10),
    ("dimacs", "chx"): _chx_dimacs(),
    ("dimacs", "sushi"): _sushi_dimacs(),
    ("nat", "fashion"): _nat_exactly_one(FASHION),
    ("nat", "chx"): _nat_chx(),
    ("nat", "sushi"): _nat_sushi(),
    **{("pysat", task): code for task, code in PYSAT.items()},
    **{("cpmpy", task): code for task, code in CPMPY.items()},
    **{("sympy", task): code for task, code in SYMPY.items()},
}


@pytest.mark.parametrize("fmt, task_name", sorted(FORMALIZATIONS))
def test_correct_formalization_scores_equal(fmt, task_name):
    task = get_task(task_name)
    answer = f"Here is the formula.\n<cnf>\n{FORMALIZATIONS[fmt, task_name]}\n</cnf>"
    conversion = convert(answer, fmt, task.names)
    assert conversion.error is None, conversion.error
    score = score_formula(conversion.cnf, task.ground_truth)
    assert (score.relation, score.f1, score.mc_ratio) == ("equal", 1.0, 1.0)


@pytest.mark.parametrize("fmt", ["dimacs", "nat", "pysat", "cpmpy", "sympy"])
def test_a_missing_rule_scores_permissive(fmt):
    # sushi without the "each rank holds one item" half: every item-to-rank function is allowed.
    task = get_task("sushi")
    text = FORMALIZATIONS[fmt, "sushi"]
    weaker = {
        "dimacs": _dimacs(
            [c for item in ITEMS for c in _dimacs_exactly_one([_sushi_index(item, r) for r in range(1, 5)])], 16
        ),
        "nat": "\n".join(_nat_exactly_one([_sushi(i, r) for r in range(1, 5)]) for i in ITEMS),
        "pysat": text.split("for column")[0],
        "cpmpy": text.replace(" + [cp.sum(col) == 1 for col in grid.T]", ""),
        "sympy": text.replace(", *[exactly_one(list(col)) for col in zip(*grid)]", ""),
    }[fmt]
    conversion = convert(f"<cnf>{weaker}</cnf>", fmt, task.names)
    assert conversion.error is None, conversion.error
    score = score_formula(conversion.cnf, task.ground_truth)
    assert score.relation == "permissive" and score.candidate_count == 4**4 and score.recall == 1.0
