"""Command-line start-up: how long `--help`, `tasks`, `task show warcraft` and `score` of the fashion
ground truth take end to end, as subprocesses of an installed `autonesy-agent`, before and after.

    python benchmarks/cli_startup.py [--runs 7]
        [--before-rev REV | --before-venv DIR | --before-cmd CMD]
        [--after-rev REV | --after-venv DIR | --after-cmd CMD]

Each side is a command prefix: CMD itself (e.g. "python -m autonesy.graph"), DIR/bin/autonesy-agent,
or, for a git revision, a throwaway virtual environment with that revision installed (not editable)
on top of the dependencies of the running interpreter (the folders of sys.path outside sys.prefix,
or --deps-site). Without an --after option the `autonesy-agent` beside this interpreter is timed;
without a --before option only the after side is.

Both sides run with the same fresh $AUTONESY_CACHE_DIR. One untimed run per command and side comes
first (it fills caches, e.g. the ground-truth model counts that `tasks` keeps; its time is printed
as "first"); then the sides alternate run by run, so that a change of the machine's load hits both.
Printed per command: the minimum and the median wall time, the minimum CPU time (user + system of
the process and its children, less sensitive to a loaded machine than the wall time), whether both
sides printed the same output, and the before/after ratio of the minimum wall times.
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Side:
    name: str
    prefix: list[str]
    first: dict[str, float] = field(default_factory=dict)
    wall: dict[str, list[float]] = field(default_factory=dict)
    cpu: dict[str, list[float]] = field(default_factory=dict)
    output: dict[str, str] = field(default_factory=dict)


def commands(work: Path) -> dict[str, list[str]]:
    """The timed commands; `score` reads the fashion ground truth exported into ``work``."""
    return {
        "--help": ["--help"],
        "tasks": ["tasks"],
        "task show warcraft": ["task", "show", "warcraft"],
        "score fashion": ["score", str(work / "fashion.cnf"), "--task", "fashion", "--format", "dimacs"],
    }


def timed(prefix: list[str], args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system of the child and its children) and stdout of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(prefix + args, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{shlex.join(prefix + args)} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def dependency_sites(given: list[str]) -> list[str]:
    if given:
        return given
    own = Path(sys.prefix).resolve()
    return [p for p in sys.path if p.endswith("site-packages") and own not in Path(p).resolve().parents]


def venv_for_revision(rev: str, folder: Path, sites: list[str]) -> list[str]:
    """A virtual environment with ``rev`` of this repository installed; its `autonesy-agent` as prefix."""
    source = folder / "src"
    source.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive, check=True)
    venv = folder / "venv"
    # Without a pip of its own, the venv uses the dependencies' pip and setuptools (through the .pth).
    subprocess.run(
        [getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)], check=True
    )
    site_packages = next((venv / "lib").glob("python*/site-packages"))
    lines = "".join(f"import site; site.addsitedir({s!r})\n" for s in sites)
    (site_packages / "_dependencies.pth").write_text(lines)
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", str(source)],
        capture_output=True,
        text=True,
    )
    if installed.returncode != 0:
        raise SystemExit(f"installing {rev} failed: {installed.stderr.strip()[-2000:]}")
    return [str(venv / "bin" / "autonesy-agent")]


def side(name: str, rev: str | None, venv: str | None, cmd: str | None, work: Path, sites: list[str]) -> Side | None:
    if rev:
        print(f"installing {name} = {rev} …", file=sys.stderr)
        return Side(f"{name} ({rev})", venv_for_revision(rev, work / name, sites))
    if venv:
        return Side(f"{name} ({venv})", [str(Path(venv) / "bin" / "autonesy-agent")])
    if cmd:
        return Side(f"{name} ({cmd})", shlex.split(cmd))
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="Timed runs per command and side (default 7).")
    for name in ("before", "after"):
        group = parser.add_mutually_exclusive_group()
        group.add_argument(f"--{name}-rev", help="A git revision of this repository, installed into a throwaway venv.")
        group.add_argument(f"--{name}-venv", help="A virtual environment with autonesy-agent installed.")
        group.add_argument(f"--{name}-cmd", help="A command prefix, e.g. 'python -m autonesy.graph'.")
    parser.add_argument(
        "--deps-site",
        action="append",
        default=[],
        help="site-packages folder with the dependencies, for --*-rev (repeatable).",
    )
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="cli-startup-") as tmp:
        work = Path(tmp)
        sites = dependency_sites(options.deps_site)
        after = side("after", options.after_rev, options.after_venv, options.after_cmd, work, sites) or Side(
            "after (this interpreter)", [str(Path(sys.executable).parent / "autonesy-agent")]
        )
        before = side("before", options.before_rev, options.before_venv, options.before_cmd, work, sites)
        sides = [s for s in (before, after) if s is not None]
        env = dict(os.environ, AUTONESY_CACHE_DIR=str(work / "cache"), COLUMNS="100", NO_COLOR="1")
        timed(after.prefix, ["task", "export", "fashion", "--out", str(work)], env)
        cases = commands(work)
        load = os.getloadavg()[0]
        for label, args in cases.items():
            for s in sides:
                s.first[label], _, s.output[label] = timed(s.prefix, args, env)
            for _ in range(options.runs):
                for s in sides:
                    wall, cpu, _ = timed(s.prefix, args, env)
                    s.wall.setdefault(label, []).append(wall)
                    s.cpu.setdefault(label, []).append(cpu)
        report(sides, cases, options.runs, load, os.getloadavg()[0])
        shutil.rmtree(work / "cache", ignore_errors=True)


def report(sides: list[Side], cases: dict[str, list[str]], runs: int, load_start: float, load_end: float) -> None:
    print(
        f"{runs} timed runs per command and side; load average {load_start:.1f} at the start, {load_end:.1f} at the end"
    )
    for s in sides:
        print(f"{s.name}: {shlex.join(s.prefix)}")
    header = f"{'command':<20}" + "".join(
        f"{s.name.split()[0] + ' ' + k:>16}" for s in sides for k in ("first", "min", "median", "cpu min")
    )
    if len(sides) == 2:
        header += f"{'same out':>10}{'min ratio':>11}{'cpu ratio':>11}"
    print(header)
    for label in cases:
        row = f"{label:<20}"
        for s in sides:
            row += (
                f"{s.first[label]:>15.2f}s{min(s.wall[label]):>15.2f}s{statistics.median(s.wall[label]):>15.2f}s"
                f"{min(s.cpu[label]):>15.2f}s"
            )
        if len(sides) == 2:
            before, after = sides
            same = "yes" if before.output[label] == after.output[label] else "no"
            row += (
                f"{same:>10}{min(before.wall[label]) / min(after.wall[label]):>10.1f}x"
                f"{min(before.cpu[label]) / min(after.cpu[label]):>10.1f}x"
            )
        print(row)


if __name__ == "__main__":
    main()
