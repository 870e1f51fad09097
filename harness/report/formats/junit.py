"""junit.xml: one <testsuite> per backend, so CI systems group results the way the suite does."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from harness.axes import registry
from harness.report.formats.format import RunReport
from harness.report.results import BACKEND_INDEPENDENT, COLLATERAL, REFUSED, TestResult

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
    if test.outcome in ("FAIL", "XPASS"):
        element = ET.SubElement(case, "failure", message=_text(test.reason), type=test.outcome)
        element.text = _text(test.details)
    elif test.outcome in ("ERROR", "CRASH", "TIMEOUT"):
        element = ET.SubElement(case, "error", message=_text(test.reason), type=test.outcome)
        element.text = _text(test.details)
    elif test.outcome in ("SKIP", "XFAIL", REFUSED):
        # A refusal of what the project declared unsupported is not run, by its own account.
        ET.SubElement(case, "skipped", message=_text(f"{test.outcome}: {test.reason}"),
                      **({"type": REFUSED} if test.outcome == REFUSED else {}))
    elif test.outcome == COLLATERAL:
        # Not this test's failure (it passes alone), so not a <failure>; counted apart by type.
        element = ET.SubElement(case, "skipped", message=_text(f"{test.outcome}: {test.reason}"), type=COLLATERAL)
        element.text = _text(test.details)
    # Where a dashboard groups failures: the stage, the problem and the contract clause.
    # What it needed of the backend, and which of that the project declared unsupported.
    for name in ("stage", "problem", "clause", "after", "needs", "out_of_scope"):
        value = getattr(test, name)
        if value:
            value = ",".join(value) if isinstance(value, list) else value
            ET.SubElement(properties, "property", name=name, value=_text(value))
    return case


def render(report: RunReport) -> str:
    results = report.results
    root = ET.Element("testsuites", name="dynamo-aot-suite")
    for column in results.columns():
        tests = [test for test in results.tests if test.column == column]
        suite = ET.SubElement(
            root, "testsuite",
            name="backend-independent" if column == BACKEND_INDEPENDENT else _text(column),
            tests=str(len(tests)),
            failures=str(sum(test.outcome in ("FAIL", "XPASS") for test in tests)),
            errors=str(sum(test.outcome in ("ERROR", "CRASH", "TIMEOUT") for test in tests)),
            skipped=str(sum(test.outcome in ("SKIP", "XFAIL", REFUSED, COLLATERAL) for test in tests)),
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
