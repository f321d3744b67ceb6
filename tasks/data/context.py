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
    entropy = [int(seed), zlib.crc32(task_name.encode()), zlib.crc32(stream.encode())]
    return np.random.default_rng(np.random.SeedSequence(entropy))


@dataclass
class GenerationContext:
    task: Task
    seed: int
    sizes: dict[str, int]
    advance: Callable[[int], None] = field(default=lambda n: None)

    def rng(self, stream: str) -> np.random.Generator:
        return stream_rng(self.task.name, self.seed, stream)
