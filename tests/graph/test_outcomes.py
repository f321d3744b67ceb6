"""The outcome taxonomy: which failed LLM call is the model's and which the endpoint's, and how
summaries written before it read back."""

from __future__ import annotations

import json

import pytest

from autonesy.agents.llm import LLMError
from autonesy.graph.attempt import failure_of
from autonesy.graph.summary import FailureKind, Outcome, RunSummary


@pytest.mark.parametrize(
    "kind, status, outcome, failure",
    [
        ("empty", None, "rejected", "empty_answer"),
        ("refused", None, "infra_failed", "connection"),
        ("dns", None, "infra_failed", "dns"),
        ("timeout", None, "infra_failed", "deadline"),
        ("auth", 401, "infra_failed", "auth"),
        ("http_error", 503, "infra_failed", "server_error"),
        ("http_error", 429, "infra_failed", "rate_limit"),
        ("http_error", None, "infra_failed", "server_error"),  # a body that is not an answer
        ("bad_request", 400, "error", "bad_request"),
        ("config", None, "error", "config"),
        ("other", None, "error", "crash"),
    ],
)
def test_each_llm_error_kind_has_one_outcome(kind, status, outcome, failure):
    assert failure_of(LLMError(kind, "x", status=status)) == (outcome, failure)


def test_an_empty_answer_the_token_budget_stopped_is_a_token_budget_rejection():
    assert failure_of(LLMError("empty", "x", finish_reason="length")) == ("rejected", "token_budget")
    assert failure_of(LLMError("empty", "x", finish_reason="stop")) == ("rejected", "empty_answer")


def test_every_llm_error_kind_is_classified():
    from autonesy.agents.llm import KINDS

    assert {failure_of(LLMError(kind, "x"))[0] for kind in KINDS} <= set(Outcome) - {Outcome.UNFINISHED}


def test_an_old_rejected_summary_reads_as_it_was_written(tmp_path):
    """Written before ``failure`` existed, with its LLM failure in prose: it stays ``rejected`` (whether
    the call failed for the endpoint is not recorded), and nothing is derived from its reason."""
    old = {"task": "sushi", "status": "rejected", "accepted": False, "reason": "LLM error (refused): cannot connect"}
    (tmp_path / "summary.json").write_text(json.dumps(old))
    summary = RunSummary.read(tmp_path)
    assert summary.status == Outcome.REJECTED and summary.failure is None
    assert summary.model_dump()["status"] == "rejected" and summary.model_dump()["failure"] is None


@pytest.mark.parametrize("status", ["infra_failed", "accepted", "error"])
def test_statuses_and_failures_read_as_enums(tmp_path, status):
    (tmp_path / "summary.json").write_text(json.dumps({"status": status, "failure": "connection"}))
    summary = RunSummary.read(tmp_path)
    assert summary.status is Outcome(status) and summary.failure is FailureKind.CONNECTION


def test_an_unknown_status_or_failure_reads_as_the_default(tmp_path):
    (tmp_path / "summary.json").write_text(json.dumps({"status": "exploded", "failure": "gremlins"}))
    summary = RunSummary.read(tmp_path)
    assert summary.status is Outcome.UNFINISHED and summary.failure is None
