"""How far a maintainer walks to follow ``run --task warcraft``: the project files the main thread
passes through, from the CLI to the run directory, read as a profile of Python calls.

    python benchmarks/run_walk.py [--out benchmarks/results/run_walk.json] [--label after]

The LLM is a real OpenAI-compatible server on 127.0.0.1 (tests/loopback_llm.py) answering the
task's reference formalization, so the walk is the one an HTTP model takes (spec parsed, backend
built, formalize, check, oracle test, compile, score), with ``--train none``. Every call into a
project module is recorded in order (calls made while a module is imported — module bodies,
decorators registering things — are not part of the walk); consecutive calls in one file are one *stay*. Reported:
``files`` (distinct files visited), ``stays`` and ``returns`` (stays in a file already left before),
for the whole run and for its set-up (CLI until the attempt graph is invoked — where the options,
the LLM spec and the task are resolved). Also the import edges between the five packages
(module-to-module, ``tests/import_graph.layer_edge_counts``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from import_graph import layer_edge_counts, read_import_graph  # noqa: E402
from loopback_llm import LoopbackLLM  # noqa: E402

PACKAGES = ("agents", "graph", "tools", "nesy", "tasks")


def project_file(filename: str) -> str | None:
    """``graph/run.py`` for a file of ours (through the .pkg links or the folders), else None."""
    parts = Path(filename).parts
    for index, part in enumerate(parts):
        if part in PACKAGES and index + 1 < len(parts) and parts[-1].endswith(".py"):
            if "autonesy" in parts[:index] or (Path(*parts[:index]) / "pyproject.toml").is_file():
                return "/".join(parts[index:])
    return None


def stays_of(files: list[str]) -> list[str]:
    """The files in call order, consecutive calls in one file merged into one stay."""
    stays: list[str] = []
    for name in files:
        if not stays or stays[-1] != name:
            stays.append(name)
    return stays


def walk_stats(files: list[str]) -> dict[str, object]:
    """Distinct files, stays (runs of consecutive calls in one file) and returns to a file already left."""
    stays = stays_of(files)
    seen: set[str] = set()
    returns = 0
    for name in stays:
        returns += name in seen
        seen.add(name)
    return {"files": len(seen), "stays": len(stays), "returns": returns, "calls": len(files)}


def import_edges() -> dict[str, int]:
    """Module-to-module imports between the packages, by ``from→to``, and their total."""
    counts = layer_edge_counts(read_import_graph(ROOT))
    edges = {f"{a}→{b}": n for (a, b), n in sorted(counts.items())}
    return {**edges, "total": sum(counts.values())}


def record(argv: list[str]) -> tuple[list[str], int]:
    """The project files of every call made by the main thread while the CLI runs ``argv``; the
    index where the attempt graph is first invoked (the end of the set-up)."""
    from autonesy.graph.cli import app

    calls: list[str] = []
    setup_end = [0]
    main = threading.main_thread()

    base = sys._getframe()

    def importing(frame) -> bool:  # a module body running (an import), or a call made from one
        while frame is not None and frame is not base:
            if frame.f_code.co_name == "<module>":
                return True
            frame = frame.f_back
        return False

    def profile(frame, event, arg):  # noqa: ARG001 - the signature sys.setprofile calls
        if event != "call" or threading.current_thread() is not main:
            return
        name = project_file(frame.f_code.co_filename)
        if name is None or importing(frame):
            return
        if not setup_end[0] and frame.f_code.co_name == "run_or_resume":
            setup_end[0] = len(calls)
        calls.append(name)

    sys.setprofile(profile)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            app(argv, standalone_mode=False)
    finally:
        sys.setprofile(None)
    return calls, setup_end[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "run_walk.json")
    parser.add_argument("--label", default="after")
    args = parser.parse_args()
    import autonesy.graph.cli  # noqa: F401 - imported before the profile: the walk, not the imports
    from autonesy.tasks.reference import reference_source
    from autonesy.tasks.registry import load_task

    answer = f"<cnf>\n{reference_source(load_task('warcraft'), 'cpmpy').rstrip()}\n</cnf>"
    with LoopbackLLM([answer]) as server, tempfile.TemporaryDirectory() as tmp:
        argv = ["run", "--task", "warcraft", "--format", "cpmpy", "--prompt", "zs", "--train", "none"]
        argv += ["--llm", f"{server.base_url}@walk-model", "--out", str(Path(tmp) / "run"), "--json"]
        calls, setup_end = record(argv)
        summary = json.loads((Path(tmp) / "run" / "summary.json").read_text())
    result = {
        "label": args.label,
        "status": summary.get("status"),
        "whole_run": walk_stats(calls),
        "setup": walk_stats(calls[:setup_end]),
        "setup_stays": stays_of(calls[:setup_end]),
        "import_edges": import_edges(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    previous = json.loads(args.out.read_text()) if args.out.is_file() else {}
    previous[args.label] = result
    args.out.write_text(json.dumps(previous, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "setup_stays"}))


if __name__ == "__main__":
    main()
