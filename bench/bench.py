#!/usr/bin/env python3
"""How fast is `python run_tests.py`? One command measures, side by side:

  cold      the run with empty inductor/FX-graph/AOTAutograd caches, -j JOBS
  warm      the same run again on the caches the cold run filled, -j JOBS
  unmeasured  warm again with the eager-share measurement off (its cost is warm / unmeasured)
  serial    the same selection, warm, with -j 1 (the speed-up of -j JOBS is warm / serial)

and for each: wall time, CPU time (user + system of every process), peak memory of all
processes together at one instant (PSS summed, which counts each resident page once, and
RSS summed, which counts a shared page again for every process that maps it),
and the harness's own time per test (everything in the workers that is not a scenario's
compile-and-run, see bench/overhead.py). It prints a table and the targets, and writes JSON.

    python bench/bench.py                              # the default run (about 10 min on 2 cores)
    python bench/bench.py -- --backend aot_eager       # arguments after -- go to run_tests.py

Exit code 0 when every target is met, 1 when one is not, 2 when a run could not be measured.
Linux only (memory is read from /proc). Your own TORCHINDUCTOR_CACHE_DIR is not touched.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import overhead  # noqa: E402
import proctree  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TIMINGS_ENV = "DYNAMO_SUITE_TIMINGS"  # harness.worker.worker_log.TIMINGS_ENV (no torch import here)
sys.path.insert(0, str(ROOT))
from harness.measure.share_limit import MEASURE_ENV  # noqa: E402 (torch-free)
GB = 1024 ** 3

# (what, the value it reads, limit, unit, higher is better): the project's targets on 2 cores.
TARGETS = (
    ("default run, cold caches", "cold.wall_s", 300.0, " s", False),
    ("default run, warm caches", "warm.wall_s", 120.0, " s", False),
    ("speed-up of -j JOBS over -j 1 (warm)", "speedup", 1.6, "×", True),
    ("harness overhead per test (warm)", "warm.overhead_per_test_ms", 20.0, " ms", False),
    # What measuring the eager share (harness/measure/eager_share.py) costs: the warm run's CPU time
    # against the same run with the measurement off.
    ("eager-share measurement, extra CPU time (warm)", "eager_share_cost_pct", 10.0, " %", False),
    # The memory of the processes together: pages two processes share (libtorch's code in
    # both workers, the precompiled header both compilers map) are resident once, so they are
    # counted once. The plain sum of RSS is printed beside it.
    ("peak memory of all processes (PSS, any run)", "peak_pss_gb", 1.5, " GB", False),
)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/bench.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=2, metavar="N",
                        help="workers of the cold and warm runs, compared with -j 1 (default: 2)")
    parser.add_argument("--json", default="reports/bench.json", metavar="FILE",
                        help="where the measurements go (default: reports/bench.json)")
    parser.add_argument("--keep", metavar="DIR",
                        help="keep each run's reports, console log and timings under DIR")
    parser.add_argument("--skip", default="", metavar="RUNS",
                        help="comma-separated runs to leave out (cold, warm, unmeasured, serial); warm and serial "
                             "then reuse your TORCHINDUCTOR_CACHE_DIR as it is")
    parser.add_argument("run_tests_args", nargs="*", help="arguments for run_tests.py, after --")
    args = parser.parse_args(argv)
    args.skip = {name for name in args.skip.split(",") if name}
    if args.skip - {"cold", "warm", "unmeasured", "serial"}:
        parser.error(f"--skip: unknown run(s) {', '.join(sorted(args.skip - {'cold', 'warm', 'unmeasured', 'serial'}))}")
    if args.jobs < 2:
        parser.error("--jobs must be at least 2 (it is compared with -j 1)")
    return args


def run_once(name: str, jobs: int, caches: dict[str, str], work: Path, extra: list[str],
             settings: dict[str, str] | None = None) -> dict:
    report_dir, timings = work / name / "reports", work / name / "timings"
    report_dir.mkdir(parents=True)
    env = dict(os.environ, **caches, **{TIMINGS_ENV: str(timings)}, **(settings or {}))
    command = [sys.executable, str(ROOT / "run_tests.py"), *extra, "-j", str(jobs), "--report-dir", str(report_dir)]
    print(f"{name}: {' '.join(command[1:])}", flush=True)
    with open(work / name / "console.log", "w") as log:
        usage = proctree.measure(command, env=env, cwd=ROOT, stdout=log)
    results_file = report_dir / "results.json"
    if usage.returncode not in (0, 1) or not results_file.exists():
        tail = (work / name / "console.log").read_text(errors="replace").strip().splitlines()[-3:]
        raise SystemExit(f"bench.py: the {name} run failed (exit {usage.returncode}): {' / '.join(tail)}")
    results = json.loads(results_file.read_text())
    split = overhead.analyse(overhead.read_lines(timings), usage.started, usage.ended)
    outcomes: dict[str, int] = {}
    for test in results["tests"]:
        outcomes[test["outcome"]] = outcomes.get(test["outcome"], 0) + 1
    measured = {
        "name": name, "jobs": jobs, "returncode": usage.returncode, "tests": len(results["tests"]),
        "outcomes": outcomes, "torch": results["run"].get("torch"),
        "wall_s": round(usage.wall_s, 2), "cpu_s": round(usage.cpu_s, 2),
        "peak_rss_gb": round(usage.peak_rss_bytes / GB, 3), "peak_pss_gb": round(usage.peak_pss_bytes / GB, 3),
        "peak_rss_bytes": usage.peak_rss_bytes, "peak_pss_bytes": usage.peak_pss_bytes,
        "peak_processes": usage.peak_processes,
        "peak_breakdown_mb": [[name, round(size / 1024 ** 2)] for name, size in usage.peak_breakdown],
        "pss_breakdown_mb": [[name, round(size / 1024 ** 2)] for name, size in usage.pss_breakdown],
        "runner_cpu_s": round(usage.command_cpu_s, 2), "bench_sampler_cpu_s": round(usage.sampler_cpu_s, 2),
        **split.as_dict(),
    }
    print(f"{name}: {measured['wall_s']:.1f} s, exit {usage.returncode}", flush=True)
    return measured


def evaluate(runs: dict[str, dict]) -> list[dict]:
    values: dict[str, float] = {}
    for name, run in runs.items():
        for key in ("wall_s", "overhead_per_test_ms"):
            values[f"{name}.{key}"] = run[key]
    if "warm" in runs and "serial" in runs:
        values["speedup"] = runs["serial"]["wall_s"] / runs["warm"]["wall_s"]
    if "warm" in runs and "unmeasured" in runs:
        values["eager_share_cost_pct"] = 100 * (runs["warm"]["cpu_s"] / runs["unmeasured"]["cpu_s"] - 1)
    if runs:
        # Judged on the bytes: a peak a megabyte over the limit must not round down to it.
        values["peak_pss_gb"] = max(run.get("peak_pss_bytes", run["peak_pss_gb"] * GB) / GB for run in runs.values())
    targets = []
    for label, key, limit, unit, higher_is_better in TARGETS:
        if key not in values:
            continue
        value = values[key]
        met = value >= limit if higher_is_better else value <= limit
        targets.append({"target": label, "value": round(value, 3), "limit": limit, "unit": unit.strip(),
                        "higher_is_better": higher_is_better, "met": met})
    return targets


def render(runs: dict[str, dict], targets: list[dict], jobs: int) -> str:
    header = ("run", "-j", "tests", "wall", "CPU", "peak RSS", "peak PSS", "procs",
              "overhead/test", "in test", "pytest", "idle", "start-up")
    rows = [header]
    for run in runs.values():
        tests = max(1, run["tests"])
        rows.append((
            run["name"], str(run["jobs"]), str(run["tests"]), f"{run['wall_s']:.1f} s", f"{run['cpu_s']:.0f} s",
            f"{run['peak_rss_gb']:.3f} GB", f"{run['peak_pss_gb']:.3f} GB", str(run["peak_processes"]),
            f"{run['overhead_per_test_ms']:.1f} ms",
            f"{1000 * run['in_test_s'] / tests:.1f} ms", f"{1000 * run['per_test_s'] / tests:.1f} ms",
            f"{1000 * run['idle_s'] / tests:.1f} ms", f"{run['startup_s']:.1f} s",
        ))
    lines = _table(rows, right_from=1)
    lines.append("")
    for run in runs.values():
        for kind in ("pss", "peak"):
            parts = ", ".join(f"{name} {size} MB" for name, size in run.get(f"{kind}_breakdown_mb", [])[:8])
            lines.append(f"at the {run['name']} run's {'PSS' if kind == 'pss' else 'RSS'} peak: {parts}")
    lines.append("")
    target_rows = [("target", "measured", "limit", "")]
    for target in targets:
        label = target["target"].replace("JOBS", str(jobs))
        unit = target["unit"] if target["unit"] == "×" else f" {target['unit']}"
        bound = "≥" if target["higher_is_better"] else "≤"
        digits = 3 if target["unit"] == "GB" else 2
        target_rows.append((label, f"{target['value']:.{digits}f}{unit}", f"{bound} {target['limit']:g}{unit}",
                            "met" if target["met"] else "MISSED"))
    lines += _table(target_rows, right_from=1)
    return "\n".join(lines)


def _table(rows: list[tuple], right_from: int) -> list[str]:
    widths = [max(len(row[column]) for row in rows) for column in range(len(rows[0]))]
    def line(row):
        return "  ".join(cell.ljust(width) if index < right_from else cell.rjust(width)
                         for index, (cell, width) in enumerate(zip(row, widths))).rstrip()
    return [line(rows[0]), "  ".join("-" * width for width in widths), *map(line, rows[1:])]


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if not Path("/proc/self/statm").exists():
        print("bench.py: error: needs Linux's /proc to measure memory", file=sys.stderr)
        return 2
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="dynamo-suite-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    if "cold" in args.skip:  # warm means the caches you have
        caches = {}
    else:
        # Inductor keeps its precompiled headers in the temporary directory, outside
        # TORCHINDUCTOR_CACHE_DIR: a private TMPDIR as well makes the cold run truly cold.
        caches = {"TORCHINDUCTOR_CACHE_DIR": str(work / "inductor-cache"), "TMPDIR": str(work / "tmp")}
        for directory in caches.values():
            shutil.rmtree(directory, ignore_errors=True)
            Path(directory).mkdir(parents=True)
    plan = [("cold", args.jobs, {}), ("warm", args.jobs, {}), ("unmeasured", args.jobs, {MEASURE_ENV: "0"}),
            ("serial", 1, {})]
    runs: dict[str, dict] = {}
    try:
        for name, jobs, settings in plan:
            if name not in args.skip:
                if (work / name).exists():
                    shutil.rmtree(work / name)
                runs[name] = run_once(name, jobs, caches, work, args.run_tests_args, settings)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    targets = evaluate(runs)
    print()
    print(render(runs, targets, args.jobs))
    record = {
        "machine": {"cpus": len(os.sched_getaffinity(0)), "python": platform.python_version(),
                    "platform": platform.platform(), "memory_gb": round(_memory_total() / GB, 1)},
        "run_tests_args": args.run_tests_args, "jobs": args.jobs,
        "runs": list(runs.values()), "targets": targets,
    }
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_name(out.name + ".tmp")
    temporary.write_text(json.dumps(record, indent=1) + "\n")
    temporary.replace(out)
    print(f"\nwrote {out}")
    return 0 if all(target["met"] for target in targets) else 1


def _memory_total() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
