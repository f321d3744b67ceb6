"""The policy ``example/vote``: self-consistency. It asks for ``samples`` formalizations of the same
prompt, groups the ones that parse by the project's own equivalence check (exact model counting on
the task variables), and answers with one formula of the largest group. Repairs and semantic rounds
are the built-in ones; every call and check is traced and counted by the graph."""

from dataclasses import dataclass

import autonesy
from autonesy import AgentTurn, AttemptSpec, Policy
from autonesy.tools.cnf import CNF
from autonesy.tools.counting import CountTimedOut


@autonesy.policy("vote")
@dataclass
class SelfConsistency(Policy):
    """k answers at ``temperature``, keep the formula most of them are equivalent to."""

    samples: int = 3
    temperature: float = 0.7

    def formalize(self, spec: AttemptSpec) -> AgentTurn:
        """Ask ``samples`` times; group the answers that parse by equivalence; answer from the largest group."""
        prompt = self.formalizer_prompt(spec)
        grammar = self.grammar_for(spec, "formalizer")
        turns = [
            self.ask("formalizer", prompt, grammar=grammar, sample=i, temperature=self.temperature)
            for i in range(self.samples)
        ]
        answered = [turn for turn in turns if turn.error is None]
        if not answered:
            return turns[0]  # the graph reports the failed call as it reports any
        parsed = [(turn, self.check(spec, turn.text).cnf) for turn in answered]
        groups: list[list[AgentTurn]] = []  # answers that say the same, the first one's formula stands for them
        formulas: list[CNF] = []
        for turn, cnf in parsed:
            if cnf is None:
                continue
            for group, formula in zip(groups, formulas):
                if self.equivalent(cnf, formula):
                    group.append(turn)
                    break
            else:
                groups.append([turn])
                formulas.append(cnf)
        if not groups:
            return answered[0]  # nothing parses: the graph's repair loop takes it from here
        return max(groups, key=len)[0]  # the largest group; on a tie, the earliest

    def equivalent(self, formula: CNF, other: CNF) -> bool:
        """Proved to say the same on the task variables (a count past its time limit proves nothing)."""
        try:
            return self.compare(formula, other).relation == "equal"
        except CountTimedOut:
            return False
