"""``autonesy.verify`` runs the verifier's graph against an endpoint and returns its summary: here the
whole-instruction judge, whose verdict is the marker its answer ends with."""

from __future__ import annotations

import pytest
from loopback_llm import LoopbackLLM

import autonesy


@pytest.mark.parametrize(("marker", "verdict"), [("[[SATISFIED]]", "sat"), ("[[VIOLATED]]", "unsat")])
def test_the_judges_marker_is_the_verdict(marker, verdict, tmp_path):
    instruction = "Answer in exactly two sentences."
    with LoopbackLLM(f"Counting the sentences of the response. {marker}") as server:
        summary = autonesy.verify(instruction, "One. Two.", verifier="judge", llm=server.spec(), out=tmp_path / "v")
        asked = server.count
        again = autonesy.verify(instruction, "One. Two.", verifier="judge", llm=server.spec(), out=tmp_path / "v")
        sent = server.requests[0]["json"]["messages"]
    assert summary.status == verdict and again.status == verdict
    assert asked >= 1 and server.count == asked  # the same run directory: finished, nothing asked again
    assert any(instruction in message["content"] for message in sent)
    assert (tmp_path / "v" / "summary.json").is_file()


def test_an_unknown_verifier_is_a_verify_error():
    with pytest.raises(autonesy.AutonesyError, match="unknown verifier 'oracle'"):
        autonesy.verify("Say hi.", "hi", verifier="oracle", llm="http://127.0.0.1:9/v1@m")
