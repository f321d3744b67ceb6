"""llama-cpp-python's OpenAI-compatible server, with grammar sampling that checks the free choice first.

Why: llama-cpp-python (0.3.x, ``Llama._init_sampler``) puts llama.cpp's grammar sampler in the
chain *before* top-k/greedy, so at every step the grammar is applied to the whole vocabulary:
each of Gemma 3's 262,144 tokens is matched against every open grammar stack (dozens inside an
expression, one per alternative name). The server's request fields (``top_k``, ``min_p``, ...)
only configure samplers after it, and it reads no ``samplers`` order; llama.cpp's own remedy —
sample without the grammar, check only the chosen token, and apply the grammar to the vocabulary
only when that token is rejected (``common_sampler_sample`` in ggml-org/llama.cpp
``common/sampling.cpp``; its ``common/sampling.h`` explains "the grammar constraints applied on
the full vocabulary can be very taxing") — lives in llama.cpp's ``common`` library, which
llama-cpp-python does not ship.

:class:`CheckFirstGrammarSampler` is that remedy over llama-cpp-python's public ctypes API:

1. the request's own chain without the grammar (penalties, then greedy or top-k … dist) picks a
   token from the full logits (``llama_sampler_apply``, no accept yet);
2. the grammar sampler is applied to that one token; if it survives, it is the answer;
3. otherwise, for greedy requests (``temperature`` 0, what autonesy sends), the grammar is applied
   to the best 64, then 2,048, then 65,536 tokens by (penalised) logit and only then to all:
   the first survivor set's best token is the grammar-constrained argmax, exactly what the
   unpatched chain returns (ties go to the lowest token id, as llama.cpp's greedy sampler does);
   for sampling requests the grammar is applied to the full vocabulary and the chain resamples
   (as llama.cpp does; the resulting distribution is the grammar-renormalised one);
4. the token is accepted by the chain (penalty history) and the grammar.

``install()`` makes ``llama_cpp.Llama`` build this sampler for requests that carry a grammar
(requests without one keep llama-cpp-python's chain untouched); ``python -m
autonesy.agents.llm.llama_server ARGS`` is ``python -m llama_cpp.server ARGS`` after
``install()``. ``benchmarks/grammar_sampling.py`` measures both servers side by side.
"""

from __future__ import annotations

import ctypes
import inspect
import math
from typing import Any

import llama_cpp
import numpy as np
from llama_cpp import llama_cpp as C

TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])  # llama_token_data
GREEDY_WINDOWS = (64, 2048, 65536)  # candidate sets tried, best logits first, before the whole vocabulary

assert TOKEN_DATA.itemsize == ctypes.sizeof(C.llama_token_data)


class CheckFirstGrammarSampler:
    """Stands in for llama-cpp-python's ``LlamaSampler`` (``Llama`` only calls ``sample``) when a
    request has a grammar: ``chain`` is llama-cpp-python's sampler for the request without it."""

    def __init__(self, llama: llama_cpp.Llama, chain: Any, grammar: llama_cpp.LlamaGrammar, *, greedy: bool) -> None:
        self.chain = chain
        self.greedy = greedy
        self.n_vocab = llama.n_vocab()
        self.grammar = C.llama_sampler_init_grammar(
            llama._model.vocab, grammar._grammar.encode("utf-8"), grammar._root.encode("utf-8")
        )
        if not self.grammar:
            raise ValueError("llama.cpp could not parse the grammar")
        self.ids = np.arange(self.n_vocab, dtype=np.int32)
        self.cur = np.zeros(self.n_vocab, dtype=TOKEN_DATA)
        self.calls = {"checked": 0, "rejected": 0, "full": 0}

    def __del__(self) -> None:
        grammar, self.grammar = getattr(self, "grammar", None), None
        if grammar:
            C.llama_sampler_free(grammar)

    def _apply(self, sampler: Any, cur: np.ndarray) -> C.llama_token_data_array:
        """Run ``sampler`` over ``cur`` in place (llama.cpp may reorder and shorten it)."""
        array = C.llama_token_data_array(
            data=cur.ctypes.data_as(C.llama_token_data_p), size=len(cur), selected=-1, sorted=False
        )
        C.llama_sampler_apply(sampler, ctypes.byref(array))
        return array

    def _survivors(self, cur: np.ndarray) -> np.ndarray:
        """``cur`` after the grammar, keeping the tokens it allows."""
        self._apply(self.grammar, cur)
        return cur[cur["logit"] != -math.inf]

    def _fill(self, logits: np.ndarray) -> np.ndarray:
        self.cur["id"], self.cur["logit"], self.cur["p"] = self.ids, logits, 0.0
        return self.cur

    def _greedy_under_grammar(self, scores: np.ndarray) -> int:
        """The allowed token with the best score (lowest id among equals), looking at the best
        ``GREEDY_WINDOWS`` tokens before the whole vocabulary."""
        for window in (*(w for w in GREEDY_WINDOWS if w < len(scores)), len(scores)):
            if window < len(scores):
                threshold = np.partition(scores, -window)[-window]
                ids = np.flatnonzero(scores >= threshold).astype(np.int32)  # ascending ids, ties included
            else:
                self.calls["full"] += 1
                ids = self.ids
            cur = np.zeros(len(ids), dtype=TOKEN_DATA)
            cur["id"], cur["logit"] = ids, scores[ids]
            allowed = self._survivors(cur)
            if len(allowed):
                return int(allowed["id"][np.argmax(allowed["logit"])])
        raise RuntimeError("the grammar allows no token")

    def sample(self, ctx: Any, idx: int = -1) -> int:
        logits = np.ctypeslib.as_array(C.llama_get_logits_ith(ctx.ctx, idx), shape=(self.n_vocab,))
        cur = self._fill(logits)
        array = self._apply(self.chain.sampler, cur)
        token = int(array.data[array.selected].id)
        self.calls["checked"] += 1
        if not len(self._survivors(np.array([(token, 0.0, 0.0)], dtype=TOKEN_DATA))):
            self.calls["rejected"] += 1
            if self.greedy:  # the chain only penalised `cur` in place (no reordering): its logits are the scores
                token = self._greedy_under_grammar(cur["logit"].copy())
            else:
                self.calls["full"] += 1
                cur = self._fill(logits)
                self._apply(self.grammar, cur)
                array = self._apply(self.chain.sampler, cur)
                token = int(array.data[array.selected].id)
        C.llama_sampler_accept(self.chain.sampler, token)
        C.llama_sampler_accept(self.grammar, token)
        return token


def install() -> None:
    """Make ``llama_cpp.Llama`` sample grammar requests with :class:`CheckFirstGrammarSampler`.

    Idempotent. Raises ``RuntimeError`` when this llama-cpp-python's ``Llama._init_sampler`` no
    longer takes the keywords it is called with (then the patch would be wrong, not slow)."""
    original = llama_cpp.Llama._init_sampler
    if getattr(original, "check_first", False):
        return
    parameters = inspect.signature(original).parameters
    if not {"grammar", "temp", "mirostat_mode"} <= parameters.keys():
        raise RuntimeError("llama_cpp.Llama._init_sampler has an unknown signature; run llama_cpp.server instead")

    def _init_sampler(self: llama_cpp.Llama, **kwargs: Any) -> Any:
        grammar = kwargs.pop("grammar", None)
        chain = original(self, **kwargs)
        if grammar is None:
            return chain
        greedy = kwargs.get("temp", 0.8) == 0.0
        return CheckFirstGrammarSampler(self, chain, grammar, greedy=greedy)

    _init_sampler.check_first = True  # type: ignore[attr-defined]
    llama_cpp.Llama._init_sampler = _init_sampler


def without_extra_buffer_types() -> None:
    """Make every ``llama_cpp.Llama`` load its weights without llama.cpp's extra CPU buffer types.

    llama-cpp-python builds llama.cpp for the CPU it is installed on; on a CPU with AMX (Intel
    Sapphire Rapids and later) the weights then go to the AMX buffer type, whose matrix product
    crashed the process (SIGSEGV in ``ggml_backend_amx_mul_mat``, llama-cpp-python 0.3.36, the
    embedded Gemma 3 270M at its first decode). The plain CPU kernels run everywhere. Idempotent."""
    defaults = C.llama_model_default_params
    if getattr(defaults, "plain_buffers", False):
        return

    def plain_defaults() -> Any:
        params = defaults()
        params.use_extra_bufts = False
        return params

    plain_defaults.plain_buffers = True  # type: ignore[attr-defined]
    C.llama_model_default_params = plain_defaults


def main() -> None:
    without_extra_buffer_types()
    install()
    from llama_cpp.server.__main__ import main as serve

    serve()


if __name__ == "__main__":
    main()
