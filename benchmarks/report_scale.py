"""``report`` over a large received sweep: wall time and peak memory of building every table.

Builds a sweep directory holding only ``results.jsonl`` (20,000 rows over 2,000 model names by default,
the size a hostile reviewer sent), runs ``build_report`` in a child process per size (so each peak RSS is its
own) and prints seconds and peak RSS side by side, with the load average.

    python benchmarks/report_scale.py [--rows 2000,20000] [--models 2000,200] [--baseline GIT_REF]

``--baseline ec6e2f9`` also times graph/report.py as it was at that commit (before this rewrite), in the same run.

The issue's target: 20,000 rows and 2,000 models in seconds with memory flat (was 115 s and 300 MB).
"""

from __future__ import annotations

import argparse
import json
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


def _build_report(ref: str | None):
    """``build_report`` of the current code, or of graph/report.py as committed at ``ref`` (the baseline)."""
    if not ref:
        from autonesy.graph.report import build_report

        return build_report
    import importlib.util

    source = subprocess.run(
        ["git", "show", f"{ref}:graph/report.py"],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).parents[1],
    ).stdout
    spec = importlib.util.spec_from_loader("autonesy.graph.report_baseline", loader=None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    exec(compile(source, f"{ref}:graph/report.py", "exec"), module.__dict__)
    return module.build_report


def _child(folder: str, ref: str | None) -> None:
    build_report = _build_report(ref)
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
    parser.add_argument("--baseline", help="also time graph/report.py as committed at this git ref (e.g. ec6e2f9)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-ref", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.child_ref)
        return
    print(f"load average: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    print("| code | rows | models | counted | report wall s | report CPU s | CPU ratio to baseline | peak RSS MB |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for models, rows in ((m, r) for m in map(int, args.models.split(",")) for r in map(int, args.rows.split(","))):
            folder = Path(tmp) / f"sweep{rows}x{models}"
            make_sweep(folder, rows, min(models, rows))
            baseline_cpu = None
            for ref in ([args.baseline] if args.baseline else []) + [None]:
                command = [sys.executable, __file__, "--child", str(folder)] + (["--child-ref", ref] if ref else [])
                found = subprocess.run(command, check=True, capture_output=True, text=True)
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
