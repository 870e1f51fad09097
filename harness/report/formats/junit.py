"""junit.xml: one <testsuite> per backend, so CI systems group results the way the suite does."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from harness import outcomes
from harness.axes import registry
from harness.report.formats.format import RunReport
from harness.report.results import BACKEND_INDEPENDENT, TestResult

# Characters XML 1.0 cannot carry at all (test output holds ANSI escapes and worse).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _text(value: object) -> str:
    return _NOT_XML.sub("\N{REPLACEMENT CHARACTER}", str(value))


def _testcase(test: TestResult) -> ET.Element:
    module_class, _, method = test.id.rpartition(".")
    case = ET.Element("testcase", classname=_text(module_class), name=_text(method), time=f"{test.duration_s:.3f}")
    properties = ET.SubElement(case, "properties")
    axes = [(axis.name, test.axis(axis.name)) for axis in registry.beside_backend()]
    for name, value in [("outcome", test.outcome), ("backend", test.backend), *axes, ("scenario", test.scenario),
                        *sorted((test.metrics or {}).items()), ("expectation", test.expectation or "")]:
        ET.SubElement(properties, "property", name=_text(name), value=_text(value))
    declared = outcomes.named(test.outcome)
    if declared.junit is not None:
        # A skipped element has no type of its own to say why: its message names the outcome.
        message = f"{test.outcome}: {test.reason}" if declared.junit == "skipped" else test.reason
        if declared.junit_typed:
            element = ET.SubElement(case, declared.junit, message=_text(message), type=test.outcome)
            element.text = _text(test.details)
        else:
            ET.SubElement(case, declared.junit, message=_text(message))
    # Where a dashboard groups failures: the stage, the problem and the contract clause.
    # What it needed of the backend, and which of that the project declared unsupported.
    for name in ("stage", "problem", "clause", "after", "needs", "out_of_scope"):
        value = getattr(test, name)
        if value:
            value = ",".join(value) if isinstance(value, list) else value
            ET.SubElement(properties, "property", name=name, value=_text(value))
    return case


def _count(tests: list[TestResult], element: str) -> int:
    return sum(outcomes.named(test.outcome).junit == element for test in tests)


def render(report: RunReport) -> str:
    results = report.results
    root = ET.Element("testsuites", name="dynamo-aot-suite")
    for column in results.columns():
        tests = [test for test in results.tests if test.column == column]
        suite = ET.SubElement(
            root, "testsuite",
            name="backend-independent" if column == BACKEND_INDEPENDENT else _text(column),
            tests=str(len(tests)),
            failures=str(_count(tests, "failure")),
            errors=str(_count(tests, "error")),
            skipped=str(_count(tests, "skipped")),
            time=f"{sum(test.duration_s for test in tests):.3f}",
            timestamp=_text(results.run.get("started", "")),
            hostname=_text(results.run.get("host", "")),
        )
        # The build every test ran on, and the declared scope, for a dashboard that keeps runs apart.
        properties = ET.SubElement(suite, "properties")
        for name, value in (("torch", results.run.get("torch", "")), ("python", results.run.get("python", "")),
                            ("unsupported", ",".join(results.unsupported))):
            ET.SubElement(properties, "property", name=name, value=_text(value))
        suite.extend(_testcase(test) for test in tests)
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
