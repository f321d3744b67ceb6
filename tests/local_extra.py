"""Why the ``[local]`` extra (llama-cpp-python's server and the GGUF package) cannot be used here,
or None when it can: the skip reason of the tests that need the embedded model."""

from __future__ import annotations

from autonesy.agents.llm import LLMError
from autonesy.agents.llm.local import find_local_gguf, require_local_extra


def local_extra_missing() -> str | None:
    try:
        require_local_extra()
        find_local_gguf()
    except LLMError as error:
        return str(error)
    return None
