"""The instruction-following verifier's agents (Nsvif design, docs/architecture.md §11).

- ``formulation``: instruction → constraints tagged logic / semantic + their composition (a formula,
  read as data);
- ``checking``: checker code for every logic constraint in one request, each with examples it must
  accept and reject (its self-test), and self-reflection on failures (the code runs in the sandbox, on
  the response passed as data);
- ``judge``: the constraint judge (semantic constraints, fallbacks, Nsvif-Neu; all of a response's in
  one request) and the two-shot LLM-as-judge baseline;
- ``writer``: responses for the feedback loop and for LLM-written VifBench data;
- ``explanation``: the verdict and its evidence in words;
- ``prompts``: every prompt.
"""

from autonesy.agents.verify.checking import CheckingAgent, Draft, extract_code, parse_checkers
from autonesy.agents.verify.explanation import evidence, explain, explain_contradiction
from autonesy.agents.verify.formulation import Formulation, FormulationAgent, FormulationError, parse_formulation
from autonesy.agents.verify.judge import JudgeAgent, Judgement, parse_judgement, parse_judgements
from autonesy.agents.verify.prompts import SYSTEM, role_of
from autonesy.agents.verify.writer import WriterAgent, extract_response

__all__ = [
    "SYSTEM",
    "CheckingAgent",
    "Formulation",
    "FormulationAgent",
    "FormulationError",
    "Judgement",
    "JudgeAgent",
    "Draft",
    "WriterAgent",
    "evidence",
    "explain",
    "explain_contradiction",
    "extract_code",
    "extract_response",
    "parse_formulation",
    "parse_checkers",
    "parse_judgement",
    "parse_judgements",
    "role_of",
]
