"""GEPA-CoT's optimiser: GEPA (the reflective prompt evolution that DSPy's ``dspy.GEPA`` runs on; here
its engine, the ``gepa`` package, without DSPy) evolves the guidance of the chain-of-thought judge on a
train split of labelled pairs, reflecting on the judge's mistakes with a second LLM. The result is
the ``guidance`` the ``gepa-cot`` verifier puts in its prompt
(:func:`autonesy.agents.verify.prompts.cot_judge_prompt`) — the very prompt GEPA scored it in.

GEPA is an optional extra (``pip install 'autonesy-agent[gepa]'``, in ``dev`` too); without it
:class:`GepaUnavailable` says so in one line. Both LLMs are this project's ``ChatBackend`` objects,
so GEPA runs on any endpoint the verifier runs on — or on scripted models, offline.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from autonesy.agents.llm import ChatBackend, LLMError
from autonesy.agents.verify.judge import JudgeAgent
from autonesy.agents.verify.prompts import COT_GUIDANCE

COMPONENT = "guidance"  # the one text GEPA evolves


class GepaUnavailable(RuntimeError):
    """GEPA is not installed or cannot run; one line."""


def _gepa():
    try:
        import gepa
        from gepa.core.adapter import EvaluationBatch
    except ImportError as error:
        raise GepaUnavailable(
            f"GEPA-CoT's optimiser needs GEPA (pip install 'autonesy-agent[gepa]'): {error}"
        ) from None
    return gepa, EvaluationBatch


class _CotJudgeAdapter:
    """GEPA's view of the CoT judge: run it with a candidate guidance on labelled pairs, score each
    verdict (1 right, 0 wrong or none), and tell the reflection LLM what went wrong where."""

    propose_new_texts = None  # GEPA's own reflective proposal, with the reflection LLM

    def __init__(self, judge: JudgeAgent, batch_type: Any) -> None:
        self.judge = judge
        self.batch_type = batch_type

    def evaluate(self, batch: Sequence[Mapping[str, Any]], candidate: Mapping[str, str], capture_traces: bool = False):
        outputs, scores, trajectories = [], [], []
        for record in batch:
            _, judgement = self.judge.cot(record["instruction"], record["output"], candidate[COMPONENT], salt="gepa")
            said = None if judgement.value is None else ("sat" if judgement.value else "unsat")
            right = said == record["verdict"]
            outputs.append(said)
            scores.append(float(right))
            trajectories.append(
                {
                    "Inputs": {"instruction": record["instruction"], "response": record["output"]},
                    "Generated Outputs": f"{judgement.reasoning}\nverdict: {said or 'none'}",
                    "Feedback": "right"
                    if right
                    else f"wrong: the response {'follows' if record['verdict'] == 'sat' else 'breaks'} the "
                    f"instruction, the judge said {said or 'nothing'}",
                }
            )
        return self.batch_type(outputs=outputs, scores=scores, trajectories=trajectories if capture_traces else None)

    def make_reflective_dataset(self, candidate, eval_batch, components_to_update):
        return {name: list(eval_batch.trajectories or []) for name in components_to_update}


class _Quiet:
    """GEPA's logger, silenced: the CLI's output is its result (and JSON with --json)."""

    def log(self, message: str) -> None:
        pass


def optimize_guidance(
    train: Iterable[Mapping[str, Any]],
    val: Iterable[Mapping[str, Any]],
    judge: ChatBackend,
    reflection: ChatBackend,
    *,
    max_metric_calls: int = 60,
    seed: int = 0,
    start: str = COT_GUIDANCE,
) -> str:
    """The judge guidance GEPA finds best on ``val`` after learning from ``train`` (records with
    ``instruction``, ``output`` and ``verdict``)."""
    gepa, batch_type = _gepa()

    def reflect(prompt: str | list[dict[str, Any]]) -> str:
        messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else prompt
        try:
            return reflection.complete(messages, cache_salt="gepa:reflection").text
        except LLMError as error:
            raise GepaUnavailable(f"the reflection LLM failed during GEPA: {error}") from None

    result = gepa.optimize(
        seed_candidate={COMPONENT: start},
        trainset=list(train),
        valset=list(val),
        adapter=_CotJudgeAdapter(JudgeAgent(judge), batch_type),
        reflection_lm=reflect,
        max_metric_calls=max_metric_calls,
        seed=seed,
        logger=_Quiet(),
        display_progress_bar=False,
    )
    return result.best_candidate[COMPONENT]


__all__ = ["GepaUnavailable", "optimize_guidance"]
