"""--max-eager-share catches a backend that silently runs its graphs eagerly (the eager share's
self-test).

Four faulty backends of test/harness/faulty_backends/eager_share.py give right results, so every
scenario passes them, and run with PyTorch's eager kernels what they should run themselves:
every graph (after a swallowed compile error), only graphs with symbolic sizes, one op
(aten.mul), or every backward graph. Under a limit of 0% on scenarios whose graphs inductor runs wholly in its own
kernels, each must fail where it falls back and pass where it does not; inductor must pass;
aot_eager, which runs every op eagerly by design, passes through an [[eager_share]] entry.

A second run, with no limit and ``--eager-fallback fail`` (the project's word that its backend
compiles everything), runs ``falls_back_on_some_graphs``: inductor, except that a graph with a
multiplication raises in its lowering and runs as handed over. Every run's reports name the
tests whose graphs ran wholly on PyTorch's kernels; with the declaration each such test fails,
while inductor passes and aot_eager (eager by design) is "not judged" and passes through its entry.
"""

from __future__ import annotations

import fnmatch
import tempfile
import unittest
from pathlib import Path

from harness.axes import registry
from test.harness.cli import read_results, run_cli

# Its own seconds (test/harness/budgets.py): 53 s measured 2026-11-29.
TIME_BUDGET_S = 115

FAULTY = "test.harness.faulty_backends"
# Those of SCENARIOS that run a backward through the compiled code (test_forwards runs
# Python's own tape, not torch's autograd).
WITH_BACKWARD = ("test_backend_contract.GradientContractTests.test_first_order_1_softmax",
                 "test_backend_contract.GradientContractTests.test_gradient_of_input_used_twice")
SCENARIOS = ("test_aot_autograd.InputMutationTests.test_input_mutation_visible_to_caller_*",
             "test_python_autograd.PythonAutogradTests.test_forwards", *WITH_BACKWARD)
TESTS_PER_RUN = 7  # per backend and variant
# Those of SCENARIOS whose forward graphs multiply (one_op_eagerly's op); _0_add does not.
WITH_MUL = ("test_aot_autograd.InputMutationTests.test_input_mutation_visible_to_caller_[123]_*",
            "test_python_autograd.PythonAutogradTests.test_forwards", *WITH_BACKWARD)
# backend -> {variant it runs under: scenario globs that must fail there}; every other test
# must pass. Only the fault of symbolic sizes, and its control, need the dynamic variant.
CAUGHT = {
    "swallows_errors_runs_eagerly": {"static": SCENARIOS},
    "eager_for_symbolic_sizes": {"static": (), "dynamic": SCENARIOS},
    "one_op_eagerly": {"static": WITH_MUL},
    "backward_eagerly": {"static": WITH_BACKWARD},
    "inductor": {"static": (), "dynamic": ()},
    "aot_eager": {"static": ()},
}
LIMITS = """\
[[eager_share]]
backend = "aot_eager"
max = 1.0
reason = "runs every op of its graphs with PyTorch's kernels, by design"
"""


def _backend_spec(name: str) -> str:
    return name if name in ("inductor", "aot_eager") else f"{FAULTY}:{name}"


def _id_glob(scenario: str, backend: str, variant: str) -> str:
    return registry.test_id(scenario, backend=backend, variant=variant)


class EagerShareFaultsTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(directory.cleanup)
        limits = Path(directory.name) / "limits.toml"
        limits.write_text(LIMITS)
        patterns = sorted({_id_glob(scenario, backend, variant) for backend, caught in CAUGHT.items()
                           for variant in caught for scenario in SCENARIOS})
        cls.completed = run_cli("--backend", ",".join(map(_backend_spec, CAUGHT)), "--variants", "static,dynamic",
                                "--max-eager-share", "0", "--expectations", str(limits),
                                *(arg for pattern in patterns for arg in ("-k", pattern)),
                                "--report-dir", directory.name)
        cls.results = read_results(directory.name)["tests"] if cls.completed.returncode in (0, 1) else []
        cls.summary = (Path(directory.name) / "summary.md").read_text() if cls.results else ""

    def describe(self) -> str:
        return f"\n{self.completed.stdout[-3000:]}\n{self.completed.stderr[-2000:]}"

    def test_every_fault_fails_where_it_falls_back_and_passes_elsewhere(self):
        self.assertTrue(self.results, self.describe())
        for backend, caught in CAUGHT.items():
            for variant, failing in caught.items():
                tests = [test for test in self.results
                         if any(fnmatch.fnmatchcase(test["id"], _id_glob(scenario, backend, variant)) for scenario in SCENARIOS)]
                with self.subTest(backend=backend, variant=variant):
                    self.assertEqual(len(tests), TESTS_PER_RUN, self.describe())
                    should_fail = {test["id"] for test in tests if any(
                        fnmatch.fnmatchcase(test["id"], _id_glob(scenario, backend, variant)) for scenario in failing)}
                    wrong = {test["id"]: (test["outcome"], test["reason"][:200]) for test in tests
                             if (test["outcome"] == "FAIL") != (test["id"] in should_fail)}
                    self.assertEqual(wrong, {})

    def test_the_failure_names_the_ops_that_ran_eagerly_and_the_limit(self):
        reasons = {test["backend"]: test["reason"] for test in self.results if test["outcome"] == "FAIL"}
        self.assertRegex(reasons["one_op_eagerly"], r"ran \d+% of its \d+ compute ops eagerly \(limit 0%\), through "
                                                    r"PyTorch's kernels: aten\.mul x\d+ \[--max-eager-share\]$")
        self.assertRegex(reasons["swallows_errors_runs_eagerly"], r"ran 100% of its")
        self.assertRegex(reasons["backward_eagerly"], r"graph 1, the backward of call 1 ran 100% of its \d+ compute ops")

    def test_the_results_and_summary_carry_the_share(self):
        shares = {(test["backend"], test["variant"]): test["eager_share"]["share"] for test in self.results
                  if test["id"].endswith("test_forwards")}
        self.assertEqual(shares[("aot_eager", "static")], 1.0)
        self.assertEqual(shares[("inductor", "dynamic")], 0.0)
        self.assertEqual(shares[("eager_for_symbolic_sizes", "static")], 0.0)
        self.assertEqual(shares[("eager_for_symbolic_sizes", "dynamic")], 1.0)
        self.assertIn(f"eager share on inductor/dynamic: {TESTS_PER_RUN} tests measured, median 0%", self.summary)
        backward = {test["backend"]: test["eager_share"]["backward"]["share"] for test in self.results
                    if test["id"].endswith("test_gradient_of_input_used_twice") and test["variant"] == "static"}
        self.assertEqual(backward, {"swallows_errors_runs_eagerly": 1.0, "eager_for_symbolic_sizes": 0.0,
                                    "one_op_eagerly": 0.0, "backward_eagerly": 1.0, "inductor": 0.0, "aot_eager": 1.0})


FALLBACK = "falls_back_on_some_graphs"
FALLBACK_SCENARIO = "test_aot_autograd.InputMutationTests.test_input_mutation_visible_to_caller_*"
FALLBACK_BACKENDS = (FALLBACK, "inductor", "aot_eager")


class SilentFallbackTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(directory.cleanup)
        limits = Path(directory.name) / "limits.toml"
        limits.write_text(LIMITS)
        cls.completed = run_cli("--backend", ",".join(map(_backend_spec, FALLBACK_BACKENDS)), "--eager-fallback", "fail",
                                "--expectations", str(limits),
                                *(arg for backend in FALLBACK_BACKENDS
                                  for arg in ("-k", _id_glob(FALLBACK_SCENARIO, backend, "static"))),
                                "--report-dir", directory.name)
        results = read_results(directory.name) if cls.completed.returncode in (0, 1) else {"run": {}, "tests": []}
        cls.run_record, cls.results = results["run"], results["tests"]
        cls.summary = (Path(directory.name) / "summary.md").read_text() if cls.results else ""

    def describe(self) -> str:
        return f"\n{self.completed.stdout[-3000:]}\n{self.completed.stderr[-2000:]}"

    def outcomes(self, backend: str) -> dict[str, str]:
        found = {test["id"].rsplit(".", 1)[1]: test["outcome"] for test in self.results if test["backend"] == backend}
        self.assertEqual(len(found), 4, self.describe())
        return found

    def test_declared_to_compile_everything_the_graphs_it_ran_eagerly_fail(self):
        outcomes = self.outcomes(FALLBACK)
        # _0_add adds; the other three multiply, and those graphs ran as handed over.
        self.assertEqual({name: outcome for name, outcome in outcomes.items() if "_0_" not in name},
                         {name: "FAIL" for name in outcomes if "_0_" not in name}, self.describe())
        self.assertEqual([outcome for name, outcome in outcomes.items() if "_0_" in name], ["PASS"])
        for test in self.results:
            if test["outcome"] == "FAIL":
                self.assertRegex(test["reason"], r"silent fallback to eager: graph 1, call 1 ran all \d+ of its compute "
                                                 r"ops through PyTorch's kernels: aten\..*\[--eager-fallback fail")
        self.assertEqual(set(self.outcomes("inductor").values()), {"PASS"})
        self.assertEqual(set(self.outcomes("aot_eager").values()), {"PASS"})

    def test_every_run_reports_it_per_backend(self):
        self.assertEqual(self.run_record["eager_fallback"], "fail")
        fallback = self.run_record["silent_fallback"]
        # Three of its four graphs ran eagerly: more than half, which the line cannot tell from eager
        # by design, and says so (test_eager_share: it names them where they are a minority).
        self.assertEqual(fallback[FALLBACK]["wholly_eager"], 3)
        self.assertEqual(len(fallback[FALLBACK]["tests"]), 3)
        self.assertEqual(fallback["inductor"]["wholly_eager"], 0)
        self.assertTrue(fallback["aot_eager"]["eager_throughout"])
        for text in (self.completed.stdout, self.summary.replace("\\_", "_")):
            self.assertRegex(text, rf"silent fallback to eager on {FALLBACK}: .*3 of 4 tests' graphs ran wholly on "
                                   r"PyTorch's kernels")
            self.assertIn("silent fallback to eager on inductor: none of 4 tests' graphs ran wholly", text)
            self.assertIn("silent fallback to eager on aot_eager: not told apart: 4 of 4 tests' graphs ran wholly on "
                          "PyTorch's kernels", text)


if __name__ == "__main__":
    unittest.main()
