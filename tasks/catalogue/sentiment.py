"""Sentiment aggregation tasks: a final label obtained by majority vote over annotators."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
from pysat.card import CardEnc, EncType

from autonesy.tasks.encoding import ClauseBuilder
from autonesy.tasks.task import Descriptions, Task, TaskMetadata, Variable
from autonesy.tools.formats.expr import Expr, Var, at_least, conj, exactly_one, iff

CEBAB_WORKERS = 5
CEBAB_SENTIMENTS = ("positive", "negative", "neutral", "unknown")
CEBAB_NO_MAJORITY = "no_majority"
CEBAB_MAJORITY = 3  # a strict majority of 5 votes


def _cebab_oracle(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=bool)
    n_sent = len(CEBAB_SENTIMENTS)
    n_votes = CEBAB_WORKERS * n_sent
    # One contiguous 0/1 row per variable: adding whole rows is far faster than reducing short axes,
    # which matters because the exhaustive proof evaluates all 2^25 assignments.
    column = np.ascontiguousarray(x.T).view(np.uint8)

    def vote(worker: int, sentiment: int) -> np.ndarray:
        return column[worker * n_sent + sentiment]

    valid = np.ones(x.shape[0], dtype=bool)
    for w in range(CEBAB_WORKERS):  # each worker votes exactly one label
        valid &= sum(vote(w, s) for s in range(n_sent)) == 1
    some_majority = np.zeros(x.shape[0], dtype=bool)
    for s in range(n_sent):  # final_s holds iff s has at least 3 of the 5 votes
        majority = sum(vote(w, s) for w in range(CEBAB_WORKERS)) >= CEBAB_MAJORITY
        valid &= x[:, n_votes + s] == majority
        some_majority |= majority
    valid &= x[:, n_votes + n_sent] == ~some_majority  # no_majority iff no sentiment has a majority
    return valid


def _cebab_valid():
    n_sent = len(CEBAB_SENTIMENTS)
    for ballot in itertools.product(range(n_sent), repeat=CEBAB_WORKERS):
        row = []
        for choice in ballot:
            row += [int(s == choice) for s in range(n_sent)]
        winners = [s for s in range(n_sent) if ballot.count(s) >= CEBAB_MAJORITY]
        row += [int(s in winners) for s in range(n_sent)] + [int(not winners)]
        yield row


def _cebab_reference() -> Expr:
    """The constraint without auxiliaries, written from its meaning (the reference in NAT and SymPy):
    one label per worker, exactly one final label, and for each sentiment ``final_s`` iff some three
    of the five workers voted s (the OR, over the 10 three-worker subsets, of their three votes).
    With at most one sentiment able to reach three votes, exactly-one makes ``final_no_majority``
    hold exactly when no sentiment does."""
    n_sent = len(CEBAB_SENTIMENTS)
    votes = [[Var(w * n_sent + s + 1) for s in range(n_sent)] for w in range(CEBAB_WORKERS)]
    finals = [Var(CEBAB_WORKERS * n_sent + s + 1) for s in range(n_sent + 1)]
    majorities = [
        iff(finals[s], at_least(CEBAB_MAJORITY, [votes[w][s] for w in range(CEBAB_WORKERS)])) for s in range(n_sent)
    ]
    return conj(*(exactly_one(worker) for worker in votes), exactly_one(finals), *majorities)


def _guarded(builder: ClauseBuilder, guard: int, clauses: Sequence[Sequence[int]]) -> None:
    """Add ``guard → (clauses)``: weaken every clause with ¬guard (their auxiliaries are fresh)."""
    builder.add(*([-guard, *clause] for clause in clauses))


def cebab() -> Task:
    """CEBaB: five annotators' sentiment votes and the majority label they determine."""
    n_sent = len(CEBAB_SENTIMENTS)
    variables = (
        tuple(
            Variable(f"worker{w}_{s}", f"crowdworker {w} labels the review's sentiment about the food as {s}")
            for w in range(1, CEBAB_WORKERS + 1)
            for s in CEBAB_SENTIMENTS
        )
        + tuple(Variable(f"final_{s}", f"the aggregated (final) food sentiment label is {s}") for s in CEBAB_SENTIMENTS)
        + (Variable(f"final_{CEBAB_NO_MAJORITY}", "the aggregated food sentiment label is 'no majority'"),)
    )
    n = len(variables)
    n_votes = CEBAB_WORKERS * n_sent

    def vote(worker: int, sentiment: int) -> int:
        return worker * n_sent + sentiment + 1

    def encode():
        builder = ClauseBuilder(n)
        for w in range(CEBAB_WORKERS):  # one label per worker (pairwise, 7 clauses each)
            builder.exactly_one([vote(w, s) for s in range(n_sent)])
        finals = list(range(n_votes + 1, n + 1))
        builder.exactly_one(finals)  # one final label (pairwise, 11 clauses)
        for s in range(n_sent):
            ballots = [vote(w, s) for w in range(CEBAB_WORKERS)]
            # final_s → at least 3 votes for s; ¬final_s → at most 2 votes for s (sequential counters,
            # auxiliaries from the builder's pool). With exactly one final label, no_majority then holds
            # exactly when no sentiment reaches 3 votes.
            at_least = CardEnc.atleast(
                lits=ballots, bound=CEBAB_MAJORITY, vpool=builder.pool, encoding=EncType.seqcounter
            )
            _guarded(builder, finals[s], at_least.clauses)
            at_most = CardEnc.atmost(
                lits=ballots, bound=CEBAB_MAJORITY - 1, vpool=builder.pool, encoding=EncType.seqcounter
            )
            _guarded(builder, -finals[s], at_most.clauses)
        return builder.cnf()

    return Task(
        name="cebab",
        variables=variables,
        descriptions=Descriptions(
            detailed=(
                "Five crowdworkers read the same restaurant review and each labels the sentiment it expresses "
                "about the food as positive, negative, neutral or unknown (unknown: the review does not say). "
                "The final food label is aggregated from their five votes by majority vote.\n"
                "- Each worker gives exactly one of the four labels: at least one, and no two at once.\n"
                "- Exactly one final label is true, out of five: positive, negative, neutral, unknown and "
                "no majority.\n"
                "- For each of the four sentiments, the final label is that sentiment if and only if at least "
                "three of the five workers voted for it (a strict majority of the five votes).\n"
                "- The final label is 'no majority' if and only if no sentiment received three or more votes "
                "(e.g. two positive, two negative and one neutral).\n"
                "- The votes themselves are unconstrained: any combination of the workers' labels is allowed.\n"
                "Background facts that must NOT be encoded: the review's star rating and its other aspects "
                "(service, noise, ambiance); which workers are more reliable — every vote weighs the same and "
                "there is no tie-breaking; a plurality without a majority (such as 2-1-1-1) is not a majority."
            ),
            not_detailed=(
                "Five annotators each label how a restaurant review feels about the food; the final label is "
                "their majority vote, or 'no majority' when no label gets a majority."
            ),
        ),
        metadata=TaskMetadata(
            source_dataset="CEBaB (restaurant reviews with crowdsourced aspect-level sentiment labels)",
            citation=(
                "Abraham, D'Oosterlinck, Feder, Gat, Geiger, Potts, Reichart, Wu. CEBaB: Estimating the Causal "
                "Effects of Real-World Concepts on NLP Model Behavior. NeurIPS 2022 (arXiv:2205.14140)."
            ),
            licence="CC BY 4.0",
            published_clauses=1070,
            data_provenance="synthetic-features",
            equivalence_method="exhaustive",
            design_notes=(
                "CEBaB aggregates each aspect label from 5 crowdworkers by majority vote, with a 'no majority' "
                "placeholder when none is reached; we model one aspect (food). 25 variables = 5 workers x 4 "
                "votes (positive, negative, neutral, unknown; neutral is added to CEBaB's aspect values to "
                "match the published final-label set) + 5 final labels (the 4 sentiments + no_majority, the "
                "published 'conflict'). Majority = at least 3 of 5, so at most one sentiment can win and the "
                "votes determine the final label: 4^5 = 1024 models. Encoding: exactly-one per worker and over "
                "the final labels (pairwise), and per sentiment final_s -> atleast(3) and not final_s -> "
                "atmost(2) over its 5 votes, each a sequential counter whose clauses are weakened by the guard "
                "literal (sound because its auxiliaries are fresh)."
            ),
        ),
        encode=encode,
        oracle_batch=_cebab_oracle,
        enumerate_valid=_cebab_valid,
        reference_expression=_cebab_reference,
    )
