"""The scoreboard as a page (index.html: the clause matrix as a heat map) and as summary.md.

Both are made from the dict ``board.to_json`` returns, plus the per-family cells, so that the
page, the summary and scoreboard.json say the same numbers.
"""

from __future__ import annotations

import html
from typing import Any

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


def _e(text: Any) -> str:
    return html.escape(str(text))


def _backend_table(data: dict[str, Any]) -> str:
    head = ("<tr><th>backend</th><th>torch</th><th>package</th><th>suite</th><th>tests</th><th>passed</th>"
            "<th>expected failures</th><th>refused</th><th>unexpected</th><th>problems</th><th>eager share</th>"
            "<th>speed-up</th><th>test time</th></tr>")
    rows = []
    for backend in data["backends"]:
        versions = backend["versions"]
        first = (f"<td>{_e(backend['label'])}</td><td>{_e(versions['torch'])}</td><td>{_e(versions['package'])}</td>"
                 f"<td>{_e(versions['suite'])}</td>")
        if backend["install_failed"]:
            rows.append(f"<tr class='failed'>{first}<td colspan='9'>not run: "
                        f"{_e(backend['install_failed'])}</td></tr>")
            continue
        counts = backend["counts"]
        share = "–" if backend["eager_share"] is None else f"{100 * backend['eager_share']:.0f}%"
        speedup = "–" if backend["speedup"] is None else f"{backend['speedup']:.2f}x"
        rows.append(f"<tr>{first}<td>{counts['tests']}</td><td>{counts['PASS']}</td><td>{counts['XFAIL']}</td>"
                    f"<td>{counts['REFUSED']}</td><td>{counts['unexpected']}</td><td>{counts['problems']}</td>"
                    f"<td>{share}</td><td>{speedup}</td><td>{backend['duration_s']:.0f} s</td></tr>")
    return f"<table class='backends'>{head}{''.join(rows)}</table>"


def _labels(data: dict[str, Any]) -> list[str]:
    return [backend["label"] for backend in data["backends"] if not backend["install_failed"]]


def _matrix(data: dict[str, Any]) -> str:
    labels = _labels(data)
    head = "<tr><th>clause of the backend contract</th>" + "".join(f"<th>{_e(label)}</th>" for label in labels) + "</tr>"
    rows = []
    for clause, cells in data["clauses"].items():
        tds = []
        for label in labels:
            cell = cells.get(label)
            rate = _rate(cell)
            title = f"{cell[0]} of {cell[1]} tests pass" if cell else "no test"
            tds.append(f"<td class='heat' style='background:{_heat(rate)}' title='{_e(title)}'>{_percent(rate)}"
                       f"<small>{cell[1] if cell else ''}</small></td>")
        rows.append(f"<tr><td>{_e(clause)}</td>{''.join(tds)}</tr>")
    return f"<table class='matrix'>{head}{''.join(rows)}</table>"


def _interop(data: dict[str, Any]) -> str:
    shared = data["interop"]
    parts = [f"<p>{shared['common']} tests ran on every backend: {shared['all_pass']} pass on all of them, "
             f"{len(shared['all_fail'])} fail on all of them (likely torch, or the suite), "
             f"{sum(map(len, shared['only_one_fails'].values()))} fail on one backend only, "
             f"{shared['some_fail']} on some.</p>"]
    if shared["all_fail"]:
        parts.append("<details><summary>Failing on every backend</summary><ul>"
                     + "".join(f"<li><code>{_e(test)}</code></li>" for test in shared["all_fail"]) + "</ul></details>")
    for label, tests in shared["only_one_fails"].items():
        if tests:
            parts.append(f"<details><summary>Failing only on {_e(label)}: {len(tests)}</summary><ul>"
                         + "".join(f"<li><code>{_e(test)}</code></li>" for test in tests) + "</ul></details>")
    return "".join(parts)


def _families(data: dict[str, Any], families: dict[str, dict[str, FamilyCell]]) -> str:
    labels = _labels(data)
    head = "<tr><th>scenario family</th>" + "".join(f"<th>{_e(label)}</th>" for label in labels) + "</tr>"
    rows = []
    for family, cells in families.items():
        tds = []
        for label in labels:
            cell = cells.get(label)
            if cell is None:
                tds.append("<td class='none'>–</td>")
                continue
            rate = cell.passed / cell.judged if cell.judged else None
            links = " ".join(f"<a href='{_e(repro)}' title='{_e(problem)}'>[{index}]</a>" if repro
                             else f"<span title='{_e(problem)}'>[{index}]</span>"
                             for index, (problem, repro) in enumerate(cell.problems, 1))
            tds.append(f"<td style='background:{_heat(rate)}'>{cell.passed}/{cell.judged}"
                       + (f" <small>{links}</small>" if links else "") + "</td>")
        rows.append(f"<tr><td><code>{_e(family)}</code></td>{''.join(tds)}</tr>")
    return f"<table class='families'>{head}{''.join(rows)}</table>"


def _changes(data: dict[str, Any]) -> str:
    if "changes" not in data:
        return ""
    items = [f"<li>{_e(label)}: {len(found['newly_failing'])} newly failing, {len(found['newly_passing'])} "
             "newly passing</li>" for label, found in data["changes"].items()]
    return "<h2>Since the previous board</h2><ul>" + "".join(items) + "</ul>"


_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #1b1f24; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: .5em 0; }
th, td { padding: 3px 8px; border: 1px solid #eaeef2; text-align: left; vertical-align: top; }
td.heat { text-align: center; font-weight: 600; min-width: 5em; }
td.heat small { display: block; font-weight: normal; opacity: .6; }
table.families td { text-align: center; } table.families td:first-child { text-align: left; }
tr.failed td { background: #fff3c4; }
.meta { color: #57606a; }
"""


def page(data: dict[str, Any], families: dict[str, dict[str, FamilyCell]]) -> str:
    labels = ", ".join(_labels(data))
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>dynamo-aot-suite scoreboard: "
            f"{_e(labels)}</title><style>{_STYLE}</style></head><body>"
            f"<h1>torch.compile backends, clause by clause</h1>"
            f"<p class='meta'>dynamo-aot-suite scoreboard, built {_e(data['built'])}. A test passes when its outcome "
            "is PASS: expected failures and refusals count as failing, skipped tests not at all "
            "(docs/scoreboard.md).</p>"
            f"<h2>Backends</h2>{_backend_table(data)}"
            f"<h2>Pass rate by clause of the backend contract</h2>{_matrix(data)}"
            f"<h2>Across backends</h2>{_interop(data)}"
            f"{_changes(data)}"
            f"<h2>By scenario family</h2><p class='meta'>Passed of judged; [n]: a problem, linked to its repro "
            f"where the run wrote one.</p>{_families(data, families)}"
            "</body></html>\n")


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
                     f"{counts['problems']} problems" + (f", {counts['REFUSED']} refused" if counts["REFUSED"] else ""))
    shared = data["interop"]
    lines.append(f"{shared['common']} tests ran on every backend: {shared['all_pass']} pass on all, "
                 f"{len(shared['all_fail'])} fail on all (likely torch, or the suite), "
                 f"{sum(map(len, shared['only_one_fails'].values()))} fail on one only")
    for label, found in data.get("changes", {}).items():
        lines.append(f"since the previous board, {label}: {len(found['newly_failing'])} newly failing, "
                     f"{len(found['newly_passing'])} newly passing")
    return lines




def summary(data: dict[str, Any]) -> str:
    labels = _labels(data)
    lines = [f"## dynamo-aot-suite scoreboard ({escaped(data['built'])})", "",
             "| backend | torch | package | tests | passed | refused | unexpected | problems |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |"]
    for backend in data["backends"]:
        versions = backend["versions"]
        if backend["install_failed"]:
            lines.append(f"| {escaped(backend['label'])} | {escaped(versions['torch'])} | {escaped(versions['package'])} | "
                         f"not run: {escaped(backend['install_failed'][:200])} | | | | |")
            continue
        counts = backend["counts"]
        lines.append(f"| {escaped(backend['label'])} | {escaped(versions['torch'])} | {escaped(versions['package'])} | "
                     f"{counts['tests']} | {counts['PASS']} | {counts['REFUSED']} | {counts['unexpected']} | "
                     f"{counts['problems']} |")
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
