"""Each module's time budget (budgets.py): a module over its budget, or without one, fails its
budget check; a shared run it starts is charged to the run, against the run's own budget."""

from __future__ import annotations

import contextlib
import io
import math
import os
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path
from unittest import mock

from test.harness import budgets
from test.harness.shared_runs import Finished

# Its own seconds (test/harness/budgets.py): 1 s measured 2026-11-29.
TIME_BUDGET_S = 10


RUNS: list[Finished] = []


class BudgetTests(unittest.TestCase):
    def setUp(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.top = Path(directory.name)
        self.package = self.top / "budget_probe_package"
        self.package.mkdir()
        (self.package / "__init__.py").write_text("")
        sys.path.insert(0, str(self.top))
        self.addCleanup(sys.path.remove, str(self.top))
        self.addCleanup(lambda: [sys.modules.pop(name) for name in list(sys.modules)
                                 if name.startswith("budget_probe_package")])
        RUNS.clear()  # what the probes' shared runs append to, as shared_runs.py would
        self.real_factor, self.real_load_factor = budgets.machine_factor, budgets.load_factor
        for name in ("machine_factor", "load_factor"):
            factor = mock.patch.object(budgets, name, return_value=1.0)
            factor.start()
            self.addCleanup(factor.stop)
        enforced = mock.patch.dict(os.environ, {budgets.ENFORCE_ENV: "1"})  # as in CI; the test below unsets it
        enforced.start()
        self.addCleanup(enforced.stop)

    def module(self, name: str, budget: str, body: str) -> None:
        test = textwrap.indent(textwrap.dedent(body), " " * 8)
        (self.package / f"{name}.py").write_text(
            f"import time, unittest\n{budget}\n\n\nclass Probe(unittest.TestCase):\n    def test_it(self):\n{test}\n")

    def budget_failures(self) -> dict[str, str]:
        suite = budgets.with_budgets(unittest.TestLoader(), str(self.package), str(self.top), None,
                                     lambda: list(RUNS))
        result = unittest.TestResult()
        suite.run(result)
        self.assertEqual(result.errors, [])
        return {test.id().split(".")[1]: message for test, message in result.failures}

    def test_a_module_over_its_budget_fails_its_check_and_one_within_passes(self):
        self.module("test_slow", "TIME_BUDGET_S = 0.05", "time.sleep(0.2)")
        self.module("test_quick", "TIME_BUDGET_S = 5", "pass")
        failures = self.budget_failures()
        self.assertEqual(set(failures), {"test_slow"})
        self.assertRegex(failures["test_slow"], r"budget_probe_package\.test_slow took 0 s, over its "
                                                r"TIME_BUDGET_S = 0\.05 \(x1\.00 for this machine and its load\)")

    def test_a_budget_informs_and_fails_only_where_enforced_past_its_headroom(self):
        self.module("test_slow", "TIME_BUDGET_S = 0.05", "time.sleep(0.2)")
        self.module("test_a_little_slow", "TIME_BUDGET_S = 0.15", "time.sleep(0.2)")
        printed = io.StringIO()
        with contextlib.redirect_stderr(printed):
            self.assertEqual(set(self.budget_failures()), {"test_slow"})  # 4 times over; the other 1.3
        self.assertRegex(printed.getvalue(), r"time budget: budget_probe_package\.test_a_little_slow took 0 s, over")
        with mock.patch.dict(os.environ, {budgets.ENFORCE_ENV: ""}), contextlib.redirect_stderr(io.StringIO()):
            self.assertEqual(self.budget_failures(), {})

    def test_a_module_without_a_budget_fails(self):
        self.module("test_unbudgeted", "", "pass")
        self.assertIn("states no TIME_BUDGET_S", self.budget_failures()["test_unbudgeted"])

    def test_a_shared_run_is_charged_to_itself_not_to_the_module_that_started_it(self):
        # The module sleeps as long as "its" shared run took: without the run, it is in budget.
        self.module("test_reader", "TIME_BUDGET_S = 0.15", """\
            time.sleep(0.3)
            import test.harness.test_budgets as probe
            probe.RUNS.append(probe.Finished("SHARED", 0.28, 60))
            """)
        self.assertEqual(self.budget_failures(), {})
        RUNS[:] = [Finished("EARLIER", 1.0, 60)]  # finished before the module started: not its own
        self.module("test_over", "TIME_BUDGET_S = 5", """\
            import test.harness.test_budgets as probe
            probe.RUNS.append(probe.Finished("SLOW", 9.0, 2))
            """)
        failures = self.budget_failures()
        self.assertRegex(failures["test_over"], r"shared run SLOW took 9 s, over its budget of 2 s")
        self.assertNotIn("EARLIER", failures["test_over"])

    def test_the_load_factor_is_the_load_per_core_and_never_below_one(self):
        cores = os.cpu_count() or 1
        with mock.patch.object(os, "getloadavg", return_value=(3.0 * cores, 0.0, 0.0)):
            self.assertEqual(self.real_load_factor(), 3.0)
        with mock.patch.object(os, "getloadavg", return_value=(0.1, 0.0, 0.0)):
            self.assertEqual(self.real_load_factor(), 1.0)

    def test_the_load_factor_counts_a_busy_stretch_that_ended_before_the_check(self):
        # Three processes per core for 90 s, then none for 30 s: the last minute's load average
        # alone reads about 1.4 per core; the mean over the span was 2.25.
        cores = os.cpu_count() or 1
        busy, idle = 90.0, 30.0

        def average(window: float) -> float:
            return 3.0 * cores * (1 - math.exp(-busy / window)) * math.exp(-idle / window)

        at_end = (busy + idle, tuple(average(window) for window in budgets._LOAD_WINDOWS_S))
        with mock.patch.object(budgets, "load_sample", return_value=at_end):
            self.assertLess(self.real_load_factor(), 1.7)
            self.assertGreater(self.real_load_factor((0.0, (0.0, 0.0, 0.0))), 2.0)

    def test_the_machine_factor_is_never_below_one(self):
        for reference, check in ((1e9, lambda factor: self.assertEqual(factor, 1.0)),
                                 (1e-9, lambda factor: self.assertGreater(factor, 1000))):
            with mock.patch.object(budgets, "_factor", None), \
                    mock.patch.object(budgets, "REFERENCE_WORKLOAD_S", reference):
                check(self.real_factor())


if __name__ == "__main__":
    unittest.main()
