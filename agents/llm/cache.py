"""``ResponseCache``: LLM answers stored in SQLite, keyed by (endpoint, model, request key).

Makes runs and sweeps resumable and cheap to re-run: a hit returns the stored answer
(``cached=True``) without calling the model. One cache is shared by every run and sweep
(:func:`shared_cache`: ``$AUTONESY_LLM_CACHE``, else ``$AUTONESY_CACHE_DIR/llm/responses.sqlite``),
so a new ``--out`` does not pay again for calls already made. Safe for threads and for several
processes sharing one file (each operation opens its own short connection; WAL journal; busy
timeout). Only answers are stored — never a failure (a failed call raises before ``put``), never
keys or headers: the endpoint is its public URL and the request key a hash.
A cache file may lie in a run or sweep directory from elsewhere: a link, a FIFO, a folder, a file
that is not SQLite or one with other tables or columns is refused with one line before any query
(``tools/safe_files.check_sqlite``, then the schema).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import replace
from pathlib import Path

from autonesy.agents.llm.errors import LLMError
from autonesy.agents.llm.response import LLMResponse
from autonesy.tools import safe_files
from autonesy.tools.cache_entries import distrust
from autonesy.tools.config import LLM_CACHE_ENV, cache_dir, env

SHARED_CACHE_FILE = "responses.sqlite"
MAX_RESPONSE_BYTES = 16 << 20  # one cached answer with its record (a model's answer is kilobytes)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    endpoint    TEXT NOT NULL,
    model       TEXT NOT NULL,
    prompt_hash TEXT NOT NULL,
    response    TEXT NOT NULL,
    created_at  REAL NOT NULL,
    PRIMARY KEY (endpoint, model, prompt_hash)
)
"""
_COLUMNS = {"endpoint", "model", "prompt_hash", "response", "created_at"}
_FRESH = "remove it or choose a fresh --out"


class ResponseCache:
    """A persistent map (endpoint, model, request key) → ``LLMResponse``.

    The request key is whatever the backend computes; ``LangChainChatBackend`` hashes the request
    as it is sent (the messages after system-prompt folding, every decoding and sampling setting,
    a grammar included) with the caller's salt, so any difference in the request is another entry.
    """

    def __init__(self, path: str | Path, *, timeout_s: float = 30.0) -> None:
        self.path = Path(path)
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0
        try:
            safe_files.output_dir(self.path.parent)
            safe_files.check_sqlite(self.path)
        except OSError as exc:
            raise LLMError("config", f"cannot use the response cache: {exc}; {_FRESH}") from None
        try:
            with self._connect() as con:
                tables = {row[0] for row in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                if tables <= {"responses"}:
                    con.execute("PRAGMA journal_mode=WAL")
                    con.execute(_SCHEMA)
                columns = {row[1] for row in con.execute("PRAGMA table_info(responses)")}
        except sqlite3.Error as exc:
            raise LLMError("config", f"cannot open the response cache {self.path}: {exc}; {_FRESH}") from None
        if not tables <= {"responses"} or not _COLUMNS <= columns:
            raise LLMError("config", f"{self.path} is not a response cache (other tables or columns); {_FRESH}")

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=self.timeout_s)
        con.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable across crashes of this process
        return con

    def get(self, endpoint: str, model: str, prompt_hash: str) -> LLMResponse | None:
        """A cached response for (endpoint, model, prompt hash), marked as cached; None when absent or unreadable."""
        with self._lock:
            con = self._connect()
            try:
                row = con.execute(  # an answer past the cap is not read into memory (the file may be crafted)
                    "SELECT CASE WHEN length(CAST(response AS BLOB)) <= ? THEN response END FROM responses "
                    "WHERE endpoint=? AND model=? AND prompt_hash=?",
                    (MAX_RESPONSE_BYTES, endpoint, model, prompt_hash),
                ).fetchone()
            finally:
                con.close()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        try:
            return replace(LLMResponse.from_dict(json.loads(row[0])), cached=True)
        except (ValueError, TypeError, RecursionError, LLMError):  # row[0] is None past the cap
            # a damaged (or crafted) entry is a miss, said once; the next put overwrites it
            distrust(
                self.path, f"the answer to request {prompt_hash[:12]}… is damaged or over {MAX_RESPONSE_BYTES:,} bytes"
            )
            return None

    def put(self, endpoint: str, model: str, prompt_hash: str, response: LLMResponse) -> None:
        """Store a response (as data, never pickled) so a resumed run does not pay for the call again."""
        data = json.dumps(replace(response, cached=False).to_dict(), ensure_ascii=False, sort_keys=True)
        with self._lock:
            con = self._connect()
            try:
                with con:
                    con.execute(
                        "INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?)",
                        (endpoint, model, prompt_hash, data, time.time()),
                    )
            finally:
                con.close()

    def __len__(self) -> int:
        con = self._connect()
        try:
            return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
        finally:
            con.close()

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"


def shared_cache_path() -> Path:
    """Where the shared response cache lives: ``$AUTONESY_LLM_CACHE``, else under the cache directory."""
    override = env(LLM_CACHE_ENV)
    return Path(override).expanduser() if override else cache_dir("llm") / SHARED_CACHE_FILE


def shared_cache() -> ResponseCache:
    """The response cache every run and sweep shares (see the module docstring)."""
    return ResponseCache(shared_cache_path())
