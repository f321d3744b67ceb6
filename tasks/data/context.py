"""What a data generator is given: the task, the split sizes, seeded random streams, a progress hook.

Random streams. Every stream is ``numpy.random.default_rng(SeedSequence([seed, crc32(task),
crc32(stream)]))``: a generator asks for a stream by name ("train", "val", "test", "digit-pools",
"features", …). Streams are independent of each other and of the split sizes, so, for example,
the test split does not change when the train size does, and two tasks never share a stream.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from autonesy.tasks.task import Task

SPLITS = ("train", "val", "test")


def stream_rng(task_name: str, seed: int, stream: str) -> np.random.Generator:
    """A random stream of its own for (task, seed, purpose): adding a stream never changes the numbers of another."""
    entropy = [int(seed), zlib.crc32(task_name.encode()), zlib.crc32(stream.encode())]
    return np.random.default_rng(np.random.SeedSequence(entropy))


@dataclass
class GenerationContext:
    """What a data generator gets: the task, seed and split sizes, and named random streams."""

    task: Task
    seed: int
    sizes: dict[str, int]
    advance: Callable[[int], None] = field(default=lambda n: None)

    def rng(self, stream: str) -> np.random.Generator:
        """The random stream named ``stream`` for this task and seed."""
        return stream_rng(self.task.name, self.seed, stream)
