"""Each equivalence method must catch each way a ground truth and an oracle can disagree."""

import dataclasses

import numpy as np
import pytest

from autonesy.tasks.equivalence import EquivalenceError, prove_equivalence
from autonesy.tasks.task import Descriptions, Task, TaskMetadata, Variable
from autonesy.tools.cnf import CNF

# "exactly one of a, b, c" with a sequential-counter-like auxiliary (4 ↔ a ∨ b)
TRUTH = CNF(3, ((1, 2, 3), (-1, -2), (-1, -3), (-2, -3), (-4, 1, 2), (4, -1), (4, -2)), 4)
VALID = [(1, 0, 0), (0, 1, 0), (0, 0, 1)]


def exactly_one(rows):
    return np.asarray(rows).sum(axis=1) == 1


def make_task(method, encode=lambda: TRUTH, oracle=exactly_one, valid=VALID, rules=None):
    return Task(
        name="toy",
        variables=tuple(Variable(n, n) for n in "abc"),
        descriptions=Descriptions("- exactly one of a, b, c", "one of three"),
        metadata=TaskMetadata("none", "none", "none", None, "none", method, "test"),
        encode=encode,
        oracle_batch=oracle,
        enumerate_valid=lambda: iter(valid),
        rule_list=rules,
    )


@pytest.mark.parametrize("method", ["exhaustive", "construction"])
def test_agreeing_task_is_proven(method):
    report = prove_equivalence(make_task(method))
    assert report.model_count == 3 and report.method == method


def test_exhaustive_finds_the_disagreeing_assignment():
    loose = make_task("exhaustive", oracle=lambda rows: np.asarray(rows).sum(axis=1) >= 1)
    with pytest.raises(EquivalenceError, match=r"oracle says True, ground truth says False for \{b, c\} true"):
        prove_equivalence(loose)


@pytest.mark.parametrize(
    "change, needle",
    [
        (dict(valid=VALID + [(1, 0, 0)]), "1 duplicates"),
        (dict(valid=VALID + [(1, 1, 0)]), "oracle rejects constructed"),
        (dict(encode=lambda: TRUTH.with_clauses(TRUTH.clauses + ((-3,),))), "ground truth rejects valid"),
        (dict(encode=lambda: TRUTH.with_clauses(TRUTH.clauses[:1] + TRUTH.clauses[2:])), "ground truth has 4 models"),
        (dict(oracle=lambda rows: np.asarray(rows).sum(axis=1) >= 1), "one bit from a valid assignment"),
    ],
)
def test_construction_catches_each_kind_of_disagreement(change, needle):
    with pytest.raises(EquivalenceError, match=needle):
        prove_equivalence(make_task("construction", **change))


def test_clausal_proof():
    rules = CNF(3, ((1, 2, 3), (-1, -2), (-1, -3), (-2, -3)))
    assert prove_equivalence(make_task("clausal", rules=lambda: rules)).model_count == 3
    weaker = CNF(3, ((1, 2, 3),))
    with pytest.raises(EquivalenceError, match="ground truth has 3 models, the rules 7"):
        prove_equivalence(make_task("clausal", rules=lambda: weaker))
    stronger = CNF(3, ((1,),))
    with pytest.raises(EquivalenceError, match="violating rule"):
        prove_equivalence(make_task("clausal", rules=lambda: stronger))


def test_missing_pieces_are_reported():
    with pytest.raises(Exception, match="needs both a ground truth and an oracle"):
        prove_equivalence(dataclasses.replace(make_task("exhaustive"), oracle_batch=None))
    with pytest.raises(Exception, match="rule_list"):
        prove_equivalence(make_task("clausal"))
