"""--accept: the expectations file follows a run, and only the entries that changed move."""

from __future__ import annotations

import tempfile
import unittest
from pathlib import Path

from harness.testcase import expectations
from harness.run.accept import accept
from harness.report.results import BACKEND_INDEPENDENT, RunResults, TestResult

# Its own seconds (test/harness/budgets.py): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10

ORIGINAL = """\
# Header comment: kept as it is.

# Why the first entry exists.
[[expect]]
test = "test_x.Family.test_fixed"
status = "xfail"
reason = "was broken"

[[expect]]
test = "test_x.Family.test_still_broken"  # trailing comment
backend = "inductor"
status = "xfail"
reason = "still broken"

# A skip is never dropped: skipped tests do not run, so nothing says they pass.
[[expect]]
test = "test_x.Family.test_skipped"
status = "skip"
reason = "takes the machine down"
"""


def test_result(method: str, outcome: str, backend: str = "inductor", expectation: str | None = None,
                reason: str = "") -> TestResult:
    return TestResult(id=f"test.dynamo.test_x.Family_{backend}.{method}", scenario=f"test_x.Family.{method}",
                      backend=backend, backend_spec=backend, outcome=outcome, reason=reason,
                      expectation=expectation)


class AcceptTests(unittest.TestCase):
    def setUp(self):
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.path = Path(directory.name) / "expectations.toml"
        self.path.write_text(ORIGINAL)
        self.source = lambda line: f"{self.path}:{line}"

    def run_accept(self, *tests: TestResult, torch: str = "2.13.0+cpu"):
        return accept(self.path, RunResults(run={"torch": torch}, tests=list(tests)))

    def test_drops_an_entry_whose_tests_all_pass_with_its_comment(self):
        changes = self.run_accept(
            test_result("test_fixed", "XPASS", "eager", self.source(4)),
            test_result("test_fixed", "XPASS", "inductor", self.source(4)),
            test_result("test_still_broken", "XFAIL", expectation=self.source(9)),
        )
        self.assertEqual(len(changes.dropped), 1)
        text = self.path.read_text()
        self.assertNotIn("test_fixed", text)
        self.assertNotIn("Why the first entry exists", text)
        self.assertEqual(text, ORIGINAL.replace(ORIGINAL[ORIGINAL.index("# Why"):ORIGINAL.index("[[expect]]\ntest = \"test_x.Family.test_still")], ""))

    def test_keeps_an_entry_that_still_catches_a_failure(self):
        changes = self.run_accept(
            test_result("test_fixed", "XPASS", "eager", self.source(4)),
            test_result("test_fixed", "XFAIL", "inductor", self.source(4)),
        )
        self.assertEqual(changes.dropped, [])
        self.assertEqual(len(changes.kept), 1)
        self.assertEqual(self.path.read_text(), ORIGINAL)

    def test_adds_unexpected_failures_for_this_backend_and_torch_minor(self):
        self.run_accept(
            test_result("test_new_failure", "FAIL", reason='AssertionError: "quoted" \\ value'),
            test_result("test_new_crash", "CRASH", reason="worker gw0 died: SIGSEGV"),
            test_result("test_machinery", "ERROR", backend=BACKEND_INDEPENDENT, reason="KeyError: 'k'"),
            test_result("test_fine", "PASS"),
        )
        text = self.path.read_text()
        self.assertTrue(text.startswith(ORIGINAL), "existing entries and comments moved")
        entries = expectations.parse(text, str(self.path))
        added = {entry.test: entry for entry in entries[3:]}
        self.assertEqual(set(added), {"test_x.Family.test_new_failure", "test_x.Family.test_new_crash",
                                      "test_x.Family.test_machinery"})
        failure = added["test_x.Family.test_new_failure"]
        self.assertEqual((failure.pattern("backend"), failure.torch, failure.status), ("inductor", "==2.13.*", "xfail"))
        self.assertEqual(failure.reason, 'observed FAIL: AssertionError: "quoted" \\ value')
        self.assertEqual(added["test_x.Family.test_new_crash"].status, "skip")
        self.assertEqual(added["test_x.Family.test_machinery"].pattern("backend"), "*")

    def test_accepted_file_makes_the_same_results_expected(self):
        failing = test_result("test_new_failure", "FAIL", reason="AssertionError")
        self.run_accept(failing)
        entries = expectations.parse(self.path.read_text(), str(self.path))
        from packaging.version import Version

        chosen = expectations.decide(
            expectations.candidates(failing.scenario, Version("2.13.0"), {"backend": failing.backend}, entries),
            lambda: True)
        self.assertEqual(chosen.status, "xfail")
        self.assertEqual(expectations.candidates(failing.scenario, Version("2.14.0"), {"backend": failing.backend}, entries),
                         [])

    def test_a_bundled_entry_that_passes_here_is_taken_back_in_the_projects_file(self):
        bundled = "/site-packages/harness/expectations.toml:14"
        changes = self.run_accept(test_result("test_works_here", "XPASS", "mycc", bundled),
                                  test_result("test_fails_here", "XFAIL", "mycc", bundled))
        self.assertEqual(changes.added, ["test_x.Family.test_works_here on mycc: XPASS"])
        entries = expectations.parse(self.path.read_text(), str(self.path))
        added = entries[-1]
        self.assertEqual((added.test, added.pattern("backend"), added.status),
                         ("test_x.Family.test_works_here", "mycc", "pass"))
        self.assertIn(bundled, added.reason)
        # The project's entry comes first, so it decides for its test and only for it.
        from packaging.version import Version

        bundled_entry = expectations.Expectation(test="test_x.Family.*", status="xfail", reason="torch", source=bundled)
        decide = lambda test: expectations.decide(expectations.candidates(  # noqa: E731
            f"test_x.Family.{test}", Version("2.13.0"), {"backend": "mycc"}, [*entries, bundled_entry]), lambda: True)
        self.assertEqual(decide("test_works_here").status, "pass")
        self.assertEqual(decide("test_fails_here").status, "xfail")

    def test_a_pass_entry_whose_tests_all_fail_is_dropped(self):
        self.path.write_text(ORIGINAL + '\n[[expect]]\ntest = "test_x.Family.test_regressed"\nstatus = "pass"\n'
                                        'reason = "passes here"\n')
        source = self.source(ORIGINAL.count("\n") + 2)
        changes = self.run_accept(test_result("test_regressed", "FAIL", "mycc", source, reason="AssertionError"))
        self.assertEqual(len(changes.dropped), 1, changes.render())
        self.assertEqual(changes.added, [], "the entry beneath decides again; nothing is added over it")
        self.assertEqual(self.path.read_text().rstrip("\n"), ORIGINAL.rstrip("\n"))

    def test_nothing_to_do_leaves_the_file_untouched(self):
        changes = self.run_accept(test_result("test_fine", "PASS"))
        self.assertIn("unchanged", changes.render())
        self.assertEqual(self.path.read_text(), ORIGINAL)


if __name__ == "__main__":
    unittest.main()
