"""GEPA-CoT's optimiser: DSPy's GEPA evolves the guidance of a chain-of-thought judge on a train split of
labelled pairs, reflecting on the judge's mistakes with a second LLM; the result is the ``guidance``
the ``gepa-cot`` verifier puts in its prompt (:func:`autonesy.agents.verify.prompts.cot_judge_prompt`).

DSPy is an optional extra (``pip install 'autonesy-agent[gepa]'``); without it :class:`GepaUnavailable`
says so in one line. Both LLMs are this project's ``ChatBackend`` objects, wrapped as DSPy language
models, so GEPA runs on any endpoint the verifier runs on — or on a scripted model, offline.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from autonesy.agents.llm import ChatBackend, LLMError
from autonesy.agents.verify.prompts import COT_GUIDANCE


class GepaUnavailable(RuntimeError):
    """DSPy (GEPA) is not installed or cannot run; one line."""


def _dspy():
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download at import
    try:
        import dspy
    except ImportError as error:
        raise GepaUnavailable(
            f"GEPA-CoT's optimiser needs DSPy (pip install 'autonesy-agent[gepa]'): {error}"
        ) from None
    return dspy


def _language_model(dspy, backend: ChatBackend, name: str):
    """A DSPy language model answering with ``backend`` (OpenAI-shaped responses, as DSPy expects)."""
    from types import SimpleNamespace

    class BackendLM(dspy.BaseLM):
        def forward(self, prompt=None, messages=None, **kwargs):
            messages = messages or [{"role": "user", "content": prompt}]
            try:
                reply = backend.complete(messages, cache_salt=f"gepa:{name}")
            except LLMError as error:
                raise GepaUnavailable(f"the {name} LLM failed during GEPA: {error}") from None
            message = SimpleNamespace(content=reply.text, role="assistant", tool_calls=None)
            usage = {
                "prompt_tokens": reply.prompt_tokens or 0,
                "completion_tokens": reply.completion_tokens or 0,
                "total_tokens": (reply.prompt_tokens or 0) + (reply.completion_tokens or 0),
            }
            return SimpleNamespace(
                choices=[SimpleNamespace(message=message, finish_reason="stop", index=0)], usage=usage, model=name
            )

    return BackendLM(model=name)


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
    dspy = _dspy()

    class Judge(dspy.Signature):
        instruction: str = dspy.InputField(desc="the instruction the response was written for")
        response: str = dspy.InputField(desc="the response, verbatim")
        verdict: str = dspy.OutputField(desc="sat if the response follows every requirement, else unsat")

    def examples(records):
        return [
            dspy.Example(instruction=r["instruction"], response=r["output"], verdict=r["verdict"]).with_inputs(
                "instruction", "response"
            )
            for r in records
        ]

    def metric(gold, prediction, trace=None, pred_name=None, pred_trace=None):
        said = str(getattr(prediction, "verdict", "")).strip().lower()
        right = said == gold.verdict
        feedback = (
            "right"
            if right
            else (
                f"wrong: the response {'follows' if gold.verdict == 'sat' else 'breaks'} "
                f"the instruction, the judge said {said or 'nothing'}"
            )
        )
        return dspy.Prediction(score=float(right), feedback=feedback)

    program = dspy.ChainOfThought(Judge.with_instructions(start))
    optimiser = dspy.GEPA(
        metric=metric,
        max_metric_calls=max_metric_calls,
        track_stats=False,
        num_threads=1,
        seed=seed,
        reflection_lm=_language_model(dspy, reflection, "reflection"),
    )
    with dspy.context(lm=_language_model(dspy, judge, "judge")):
        best = optimiser.compile(program, trainset=examples(train), valset=examples(val))
    return best.predict.signature.instructions


__all__ = ["GepaUnavailable", "optimize_guidance"]
