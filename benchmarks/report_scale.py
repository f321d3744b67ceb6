"""``report`` over a large received sweep: wall time and peak memory of building every table.

Builds a sweep directory holding only ``results.jsonl`` (20,000 rows over 2,000 model names by default,
the size a hostile reviewer sent), runs ``build_report`` in a child process per size (so each peak RSS is its
own) and prints seconds and peak RSS side by side, with the load average.

    python benchmarks/report_scale.py [--rows 2000,20000] [--models 2000,200] [--baseline GIT_REF]

``--baseline REF`` also runs the whole package as committed at REF (put first on PYTHONPATH), in the same run.

The issue's target: 20,000 rows and 2,000 models in seconds with memory flat (was 115 s and 300 MB).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import viewer_load  # benchmarks/: its sweep builder


def make_sweep(out: Path, rows: int, models: int) -> None:
    """A sweep directory with ``rows`` results rows spread evenly over ``models`` LLMs (accepted, rejected,
    infra_failed)."""
    names = [f"model-{k:04d}" for k in range(models)]
    viewer_load.make_sweep(out, rows, names, ("accepted",) * 6 + ("rejected",) * 3 + ("infra_failed",))


PACKAGES = {"autonesy": "api", **{f"autonesy.{name}": name for name in ("agents", "graph", "nesy", "tasks", "tools")}}


def _package_at(ref: str, into: Path) -> Path:
    """The whole package as committed at ``ref``, laid out as installed (``autonesy`` from api/, its subpackages from
    their folders) under ``into``: a folder for PYTHONPATH, so the baseline is that commit's code throughout."""
    source = into / "source"
    source.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", ref], check=True, capture_output=True, cwd=Path(__file__).parents[1])
    subprocess.run(["tar", "-x", "-C", str(source)], input=archive.stdout, check=True)
    root = into / "path"
    for package, folder in PACKAGES.items():
        shutil.copytree(source / folder, root.joinpath(*package.split(".")), dirs_exist_ok=True)
    return root


def _child(folder: str) -> None:
    import autonesy.graph.report
    from autonesy.graph.report import build_report

    print(f"code: {autonesy.graph.report.__file__}", file=sys.stderr)
    start, cpu = time.perf_counter(), time.process_time()
    report = build_report([folder], Path(folder) / "report", plots=False)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over fork and exec, so a child's would be at least the
    # parent's peak (this parent has just built the sweep), not the report's own
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    peak_mb = int(status["VmHWM"].split()[0]) / 1024
    print(json.dumps({"seconds": seconds, "cpu": cpu, "peak_mb": peak_mb, "counted": report.counted}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="2000,20000")
    parser.add_argument("--models", default="2000", help="model names, comma-separated for several sweeps")
    parser.add_argument("--baseline", help="also run the package as committed at this git ref (e.g. 2855a5a)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child)
        return
    print(f"load average: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    print("| code | rows | models | counted | report wall s | report CPU s | CPU ratio to baseline | peak RSS MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        baseline = _package_at(args.baseline, Path(tmp) / "baseline") if args.baseline else None
        for models, rows in ((m, r) for m in map(int, args.models.split(",")) for r in map(int, args.rows.split(","))):
            folder = Path(tmp) / f"sweep{rows}x{models}"
            make_sweep(folder, rows, min(models, rows))
            baseline_cpu = None
            for ref in ([args.baseline] if args.baseline else []) + [None]:
                command = [sys.executable, __file__, "--child", str(folder)]
                environment = {**os.environ, "PYTHONPATH": str(baseline)} if ref else None
                found = subprocess.run(command, check=True, capture_output=True, text=True, env=environment)
                result = json.loads(found.stdout.strip().splitlines()[-1])
                if ref:
                    baseline_cpu = result["cpu"]
                ratio = "—" if baseline_cpu is None or ref else f"{baseline_cpu / result['cpu']:.1f}× faster"
                print(
                    f"| {ref or 'current'} | {rows:,} | {min(models, rows):,} | {result['counted']:,} "
                    f"| {result['seconds']:.1f} | {result['cpu']:.1f} | {ratio} | {result['peak_mb']:.0f} |"
                )
            shutil.rmtree(folder)
    print(f"load average after: {' '.join(open('/proc/loadavg').read().split()[:3])}")


if __name__ == "__main__":
    main()
