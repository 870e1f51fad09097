"""What a report format is, so every one is declared the same way (``harness.report.writer``
lists them): ``Format``, a file and how it is rendered, and the reports it renders, a run's
(``RunReport``), a scoreboard's (``BoardReport``) or a run's problems as issues for the
backends' trackers (``UpstreamReport``). Every format's render takes one report
and returns the file's text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from harness.report.results import RunResults


@dataclass
class RunReport:
    """One run, as its formats read it: its results, what it was compared with (a
    ``baseline.Difference`` against ``baseline_name``), its problems' repro files (problem id ->
    path; harness.repros.generic), and whether the accuracy CSVs were asked for."""

    results: RunResults
    difference: Any = None
    baseline_name: str | None = None
    repro_files: dict[str, str] = field(default_factory=dict)
    accuracy: bool = False


@dataclass
class BoardReport:
    """A scoreboard, as its formats read it: ``board.to_json``'s dict, and each scenario family's
    cells per row label (``board.families``), so every file says the same numbers."""

    data: dict[str, Any]
    families: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class UpstreamReport:
    """A run's problems as issues for the backends' trackers (``--upstream-reports``): its
    results, and each problem's repro as run when the reports were written (problem id ->
    ``harness.repros.generic.Checked``)."""

    results: RunResults
    checked: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Format:
    """One report format: ``path`` in the report directory; ``render(report)`` its text. A
    ``path`` ending in "/" is a folder: ``render`` returns file name -> text, and may return none.
    ``of``: the kinds of report it is written for; ``wanted(report)``: whether this one asked for it."""

    path: str
    render: Callable[[Any], str | Mapping[str, str]]
    of: tuple[type, ...] = (RunReport,)
    wanted: Callable[[Any], bool] = lambda report: True

    def files(self, report: RunReport | BoardReport) -> dict[str, str]:
        """Path in the report directory -> text; nothing where this report has no such file."""
        if not isinstance(report, self.of) or not self.wanted(report):
            return {}
        if self.path.endswith("/"):
            return {self.path + name: text for name, text in self.render(report).items()}
        return {self.path: self.render(report)}
