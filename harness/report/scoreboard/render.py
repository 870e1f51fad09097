"""The scoreboard's formats: a page (index.html: the clause matrix as a heat map), summary.md
and scoreboard.json, each from a ``BoardReport`` (harness.report.writer writes them), and its
lines for the console.

All are made from the dict ``board.to_json`` returns, plus the per-family cells, so that the
page, the summary and scoreboard.json say the same numbers.
"""

from __future__ import annotations

import json
from typing import Any

from harness.report.formats import pages
from harness.report.formats.format import BoardReport
from harness.report.formats.markdown import escaped
from harness.report.scoreboard.board import FamilyCell

_EXAMPLES = 12  # tests listed per interop entry; scoreboard.json has them all


def _rate(cell: list[int] | tuple[int, int] | None) -> float | None:
    return None if not cell or not cell[1] else cell[0] / cell[1]


def _heat(rate: float | None) -> str:
    """A cell's colour: red at 0 % through yellow to green at 100 %; grey when nothing ran."""
    if rate is None:
        return "#eaeef2"
    hue = 120 * rate ** 2  # most of the range for the last few percent, where backends differ
    return f"hsl({hue:.0f}, 70%, {88 - 10 * rate:.0f}%)"


def _percent(rate: float | None) -> str:
    return "–" if rate is None else f"{100 * rate:.0f}%" if rate < 0.995 or rate == 1 else ">99%"


def _labels(data: dict[str, Any]) -> list[str]:
    return [backend["label"] for backend in data["backends"] if not backend["install_failed"]]


def _share(backend: dict[str, Any]) -> str:
    return "–" if backend["eager_share"] is None else f"{100 * backend['eager_share']:.0f}%"


def _speedup(backend: dict[str, Any]) -> str:
    """The perf tier's geometric mean; said in words where compiled code runs slower than eager."""
    if backend["speedup"] is None:
        ran = (backend.get("perf_tests") or {}).get("ran", 0)
        return f"none measured: its {ran} perf tests failed" if ran else "–"
    return f"{backend['speedup']:.2f}x" + (" (slower than eager)" if backend["speedup"] < 1 else "")


def _ready(backend: dict[str, Any]) -> str:
    issues = backend.get("issues")
    return f"{issues['ready']} of {issues['written']}" if issues else "–"


def _bugs(backend: dict[str, Any]) -> str:
    """The open upstream bugs the row's expected failures showed, each linked (boards built
    before the count was kept show none)."""
    numbers = backend.get("upstream_bugs") or []
    return f"{len(numbers)}: " + ", ".join(f"[#{number}](https://github.com/pytorch/pytorch/issues/{int(number)})"
                                            for number in numbers) if numbers else "0"


def _family_rate(cell: FamilyCell) -> float | None:
    return cell.passed / cell.judged if cell.judged else None


def page(report: BoardReport) -> str:
    """index.html, from templates/scoreboard.html.j2: every value escaped there (pages)."""
    labels = _labels(report.data)
    return pages.render(
        "scoreboard.html.j2",
        data=report.data,
        families=report.families,
        title=", ".join(labels),
        labels=labels,
        share=_share,
        speedup=_speedup,
        duration=lambda backend: f"{backend['duration_s']:.0f} s",
        clause_rate=_rate,
        family_rate=_family_rate,
        heat=_heat,
        percent=_percent,
    ) + "\n"


def console_lines(data: dict[str, Any]) -> list[str]:
    """The board in a few plain lines, for the terminal."""
    lines = []
    for backend in data["backends"]:
        if backend["install_failed"]:
            lines.append(f"{backend['label']}: not run ({backend['install_failed'][:160]})")
            continue
        counts, versions = backend["counts"], backend["versions"]
        lines.append(f"{backend['label']} ({versions['package'] or 'no package'}, torch {versions['torch']}): "
                     f"{counts['tests']} tests, {counts['PASS']} passed, {counts['unexpected']} unexpected in "
                     f"{counts['problems']} problems" + (f", {counts['REFUSED']} refused" if counts["REFUSED"] else "")
                     + (f", speed-up {_speedup(backend)}" if backend["speedup"] is not None else "")
                     + (f", open upstream bugs shown: {len(backend['upstream_bugs'])}" if backend.get("upstream_bugs")
                        else ""))
    shared = data["interop"]
    lines.append(f"{shared['common']} tests ran on every backend: {shared['all_pass']} pass on all, "
                 f"{len(shared['all_fail'])} fail on all (likely torch, or the suite), "
                 f"{sum(map(len, shared['only_one_fails'].values()))} fail on one only")
    for label, found in data.get("changes", {}).items():
        lines.append(f"since the previous board, {label}: {len(found['newly_failing'])} newly failing, "
                     f"{len(found['newly_passing'])} newly passing")
    return lines


def summary(report: BoardReport) -> str:
    """summary.md, every value through the reports' one Markdown escape."""
    data = report.data
    labels = _labels(data)
    lines = [f"## dynamo-aot-suite scoreboard ({escaped(data['built'])})", "",
             "| backend | torch | package | tests | passed | refused | unexpected | problems | speed-up | issues ready "
             "| upstream bugs shown |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |"]
    for backend in data["backends"]:
        versions = backend["versions"]
        if backend["install_failed"]:
            lines.append(f"| {escaped(backend['label'])} | {escaped(versions['torch'])} | {escaped(versions['package'])} | "
                         f"not run: {escaped(backend['install_failed'][:200])} | | | | | | | |")
            continue
        counts = backend["counts"]
        lines.append(f"| {escaped(backend['label'])} | {escaped(versions['torch'])} | {escaped(versions['package'])} | "
                     f"{counts['tests']} | {counts['PASS']} | {counts['REFUSED']} | {counts['unexpected']} | "
                     f"{counts['problems']} | {_speedup(backend)} | {_ready(backend)} | {_bugs(backend)} |")
    lines += ["", "| clause | " + " | ".join(map(escaped, labels)) + " |", "| --- |" + " ---: |" * len(labels)]
    for clause, cells in data["clauses"].items():
        lines.append(f"| {escaped(clause)} | " + " | ".join(_percent(_rate(cells.get(label))) for label in labels) + " |")
    shared = data["interop"]
    lines += ["", f"{shared['common']} tests ran on every backend: {shared['all_pass']} pass on all, "
                  f"{len(shared['all_fail'])} fail on all (likely torch, or the suite), "
              + ", ".join(f"{len(tests)} fail only on {escaped(label)}" for label, tests in shared["only_one_fails"].items())
              + "."]
    for label, found in data.get("changes", {}).items():
        lines.append(f"- since the previous board, {escaped(label)}: {len(found['newly_failing'])} newly failing, "
                     f"{len(found['newly_passing'])} newly passing")
    return "\n".join(lines) + "\n"


def record(report: BoardReport) -> str:
    """scoreboard.json: the board's numbers, which a later --scoreboard --baseline reads."""
    return json.dumps(report.data, indent=1) + "\n"
