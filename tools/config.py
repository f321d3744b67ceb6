"""The environment variables the project reads and the defaults it shares, documented once.

==========================  ==========================================================================
``AUTONESY_LLM``            default ``--llm`` spec (``openai:MODEL``, ``http://HOST:PORT/v1@MODEL``,
                            ``local``, ``replay:TRACE``, ``CONFIG.toml``); unset: ``local``
``OPENAI_API_KEY``          the key of ``openai:MODEL`` (and of OpenAI-compatible servers when
                            ``AUTONESY_LLM_API_KEY`` is unset); never written to a file or a prompt
``AUTONESY_LLM_API_KEY``    the key of ``http(s)://HOST:PORT/v1@MODEL`` servers
``OPENAI_BASE_URL``         the endpoint of ``openai:MODEL``; unset: https://api.openai.com/v1
``AUTONESY_DATA_DIR``       the tasks' annotated data (``--data-dir`` wins); unset: USER_CACHE/data
``AUTONESY_CACHE_DIR``      caches (the embedded model, DCP-Bench conversions, ground-truth model
                            counts); unset: the user cache directory (e.g. ~/.cache/autonesy-agent)
``AUTONESY_LLM_CACHE``      the response cache shared by every run and sweep (an SQLite file); unset:
                            ``AUTONESY_CACHE_DIR``/llm/responses.sqlite (``--no-cache``: none)
``AUTONESY_TRUST_TASK_CODE`` ``1``: import the Python modules a task file names beside it (they run as
                            your code, unsandboxed); what ``--trust-task-code`` sets. Unset: refused
==========================  ==========================================================================
"""

from __future__ import annotations

import os
from pathlib import Path

APP_NAME = "autonesy-agent"

LLM_ENV = "AUTONESY_LLM"
OPENAI_KEY_ENV = "OPENAI_API_KEY"
LLM_KEY_ENV = "AUTONESY_LLM_API_KEY"
OPENAI_BASE_URL_ENV = "OPENAI_BASE_URL"
DATA_DIR_ENV = "AUTONESY_DATA_DIR"
CACHE_DIR_ENV = "AUTONESY_CACHE_DIR"
LLM_CACHE_ENV = "AUTONESY_LLM_CACHE"
TRUST_TASK_CODE_ENV = "AUTONESY_TRUST_TASK_CODE"

OPENAI_BASE_URL = "https://api.openai.com/v1"
DEFAULT_LLM = "local"
LLM_TIMEOUT_S = 120.0  # wall-clock seconds for one LLM answer, retries included (--llm-timeout)
MAX_REPAIRS = 5  # syntax-repair rounds before a formula is rejected (--max-repairs)
COMPILE_TIME_LIMIT_S = 60.0  # SDD compilation budget (compile --time-limit, and each run's circuit)
MAX_REFLECTIONS = 3  # verifier: self-reflection rounds on a failing checker (--max-reflections)
CHECKER_TIMEOUT_S = 10.0  # verifier: seconds one checker run may take (--checker-timeout)


def env(name: str) -> str:
    """The variable's value without surrounding blanks ("" when unset)."""
    return os.environ.get(name, "").strip()


def user_cache_dir() -> Path:
    """``platformdirs``' cache directory of the application (e.g. ~/.cache/autonesy-agent)."""
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME))


def cache_dir(name: str) -> Path:
    """The cache folder ``name``: under ``$AUTONESY_CACHE_DIR`` when set, else under the user cache."""
    base = env(CACHE_DIR_ENV)
    return (Path(base).expanduser() if base else user_cache_dir()) / name


def trusts_task_code() -> bool:
    """Whether the user vouched for the modules beside task files (``--trust-task-code``): a received
    task file is untrusted, and its Python would otherwise run outside the sandbox."""
    return env(TRUST_TASK_CODE_ENV) == "1"
