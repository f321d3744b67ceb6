"""Random strings of a :class:`~.ir.Grammar`, with bounded nesting: the property tests' generator.

Below ``max_depth`` rule expansions every alternative is equally likely; past it only the options
with the shallowest derivation are taken, so sampling always ends. Unbounded repetitions draw
0..``spread`` extra items, bounded ones at most ``spread`` extra; negated character sets draw from
printable ASCII, a blank, a newline and a few non-ASCII letters.
"""

from __future__ import annotations

import math
import random

from autonesy.tools.grammar.ir import Alt, Chars, Expr, Grammar, Lit, Ref, Seq

_POOL = [chr(c) for c in range(32, 127)] + ["\n", "\t", "é", "→", "∧"]


def _heights(grammar: Grammar) -> dict[str, float]:
    """The least derivation height of each rule (a fixpoint; ``inf`` for rules that never end)."""
    height = {name: math.inf for name in grammar.rules}

    def of(expr: Expr) -> float:
        if isinstance(expr, (Lit, Chars)):
            return 0
        if isinstance(expr, Ref):
            return height[expr.name] + 1
        if isinstance(expr, Seq):
            return max((of(item) for item in expr.items), default=0)
        if isinstance(expr, Alt):
            return min(of(option) for option in expr.options)
        return 0 if expr.min == 0 else of(expr.item)

    changed = True
    while changed:
        changed = False
        for name, expr in grammar.rules.items():
            value = of(expr)
            if value < height[name]:
                height[name], changed = value, True
    return height


class Sampler:
    """Draws random strings from a grammar (bounded depth), to test that a grammar and its recogniser agree."""

    def __init__(self, grammar: Grammar, *, max_depth: int = 8, spread: int = 3) -> None:
        self.grammar = grammar.check()
        self.max_depth = max_depth
        self.spread = spread
        self.heights = _heights(grammar)
        if self.heights[grammar.start] == math.inf:
            raise ValueError("the start rule derives no finite string")

    def _height(self, expr: Expr) -> float:
        if isinstance(expr, (Lit, Chars)):
            return 0
        if isinstance(expr, Ref):
            return self.heights[expr.name] + 1
        if isinstance(expr, Seq):
            return max((self._height(i) for i in expr.items), default=0)
        if isinstance(expr, Alt):
            return min(self._height(o) for o in expr.options)
        return 0 if expr.min == 0 else self._height(expr.item)

    def sample(self, rng: random.Random) -> str:
        """One random string of the grammar."""
        out: list[str] = []
        self._emit(Ref(self.grammar.start), 0, rng, out)
        return "".join(out)

    def _emit(self, expr: Expr, depth: int, rng: random.Random, out: list[str]) -> None:
        if isinstance(expr, Lit):
            out.append(expr.text)
        elif isinstance(expr, Chars):
            if expr.negated:
                out.append(rng.choice([c for c in _POOL if expr.contains(c)]))
            else:
                low, high = rng.choice(expr.ranges)
                out.append(chr(rng.randint(ord(low), ord(high))))
        elif isinstance(expr, Ref):
            self._emit(self.grammar.rules[expr.name], depth + 1, rng, out)
        elif isinstance(expr, Seq):
            for item in expr.items:
                self._emit(item, depth, rng, out)
        elif isinstance(expr, Alt):
            options = list(expr.options)
            if depth >= self.max_depth:
                least = min(self._height(o) for o in options)
                options = [o for o in options if self._height(o) == least]
            self._emit(rng.choice(options), depth, rng, out)
        else:
            extra = 0 if depth >= self.max_depth else rng.randint(0, self.spread)
            count = expr.min + extra if expr.max is None else min(expr.max, expr.min + extra)
            for _ in range(count):
                self._emit(expr.item, depth, rng, out)


def sample(grammar: Grammar, rng: random.Random, *, max_depth: int = 8, spread: int = 3) -> str:
    """One random string of the grammar (see ``Sampler``)."""
    return Sampler(grammar, max_depth=max_depth, spread=spread).sample(rng)
