"""Each variant and each half dtype catches a backend that is wrong only there (the axes'
self-test).

A faulty backend of test/harness/faulty_backends/axes.py that is right under ``static``/float32
and wrong only with what a variant (harness/axes/variants.py) or a dtype (harness/axes/dtypes.py) gives
it must fail those scenarios there, pass the same scenarios under static/float32, and
aot_eager must pass them there.
"""

from __future__ import annotations

import fnmatch
import itertools
import tempfile
import unittest
from dataclasses import dataclass

from harness.axes import registry
from test.harness import shared_runs
from test.harness.cli import read_results, run_cli

# Its own seconds (test/harness/budgets.py): 114 s measured 2026-11-29.
TIME_BUDGET_S = 235

FAULTY_MODULE = "test.harness.faulty_backends"
CONTRACT = "test_backend_contract"
FLOAT32 = "float32"


@dataclass(frozen=True)
class VariantFault:
    name: str  # an attribute of test.harness.faulty_backends (defined in its axes.py)
    variants: tuple[str, ...]  # the variants it is wrong under (right under static)
    catches: tuple[str, ...]  # globs over "<module>.<Family>.<test>": each must fail under each variant
    dtypes: tuple[str, ...] = ()  # the dtypes it is wrong under, with static (right in float32)

    @property
    def wrong_under(self) -> list[tuple[str, str]]:
        """(variant, dtype) configurations it is wrong under."""
        return [(variant, FLOAT32) for variant in self.variants] + [("static", dtype) for dtype in self.dtypes]


FAULTS = (
    VariantFault("bakes_in_first_sizes", ("dynamic", "automatic_dynamic"), (
        f"{CONTRACT}.OutputContractTests.test_layouts_[0-3]_*",
        f"{CONTRACT}.GradientContractTests.test_first_order_[4-6]_*",
        "test_aot_autograd.ExpandMutationTests.test_mutation_through_expand_*")),
    # Under automatic_dynamic its third size recompiles anyway (the tape, a global list, grew),
    # and the fault bakes in that size too: only a graph reused at another size shows it.
    VariantFault("bakes_in_first_sizes", ("dynamic",), ("test_python_autograd.PythonAutogradTests.test_forwards",)),
    VariantFault("wrong_compiled_autograd_backward", ("compiled_autograd",), (
        f"{CONTRACT}.GradientContractTests.test_first_order_*",
        f"{CONTRACT}.OutputContractTests.test_layouts_[0-4]_*",  # 5 is zero-size: no gradient to be wrong
        "test_aot_autograd.RequiresGradRecompileTests.*")),
    VariantFault("forgets_to_cast_back_half", (), (
        f"{CONTRACT}.OutputContractTests.test_layouts_*",
        f"{CONTRACT}.GradientContractTests.test_first_order_*",
        "test_python_autograd.PythonAutogradTests.test_forwards",
        "test_aot_autograd.LSTMTests.test_lstm_no_grad"), dtypes=("bfloat16", "float16")),
)
CONTROL = "aot_eager"
CAUGHT = ("FAIL", "ERROR", "CRASH")


def _id_glob(scenario_glob: str, backend: str, variant: str, dtype: str = "float32") -> str:
    return registry.test_id(scenario_glob, backend=backend, variant=variant, dtype=dtype)


class VariantFaultsTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(directory.cleanup)
        backends = [f"{FAULTY_MODULE}:{fault.name}" for fault in FAULTS] + [CONTROL]
        variants = ["static", *dict.fromkeys(variant for fault in FAULTS for variant in fault.variants)]
        dtypes = [FLOAT32, *dict.fromkeys(dtype for fault in FAULTS for dtype in fault.dtypes)]
        patterns = sorted({_id_glob(scenario, backend, variant, dtype) for fault in FAULTS for scenario in fault.catches
                           for backend, variant, dtype in [(fault.name, "static", FLOAT32),
                                                           *((name, variant, dtype) for variant, dtype in fault.wrong_under
                                                             for name in (fault.name, CONTROL))]})
        cls.completed = run_cli("--backend", ",".join(backends), "--variants", ",".join(variants),
                                "--dtypes", ",".join(dtypes),
                                *(arg for pattern in patterns for arg in ("-k", pattern)),
                                "--report-dir", directory.name)
        cls.results = read_results(directory.name)["tests"] if cls.completed.returncode in (0, 1) else []

    def describe(self) -> str:
        return f"\n{self.completed.stdout[-3000:]}\n{self.completed.stderr[-2000:]}"

    def matching(self, scenario_glob: str, backend: str, variant: str, dtype: str = FLOAT32) -> list[dict]:
        pattern = _id_glob(scenario_glob, backend, variant, dtype)
        tests = [test for test in self.results if fnmatch.fnmatchcase(test["id"], pattern)]
        self.assertTrue(tests, f"no test matches {pattern}" + self.describe())
        return tests

    def test_each_fault_fails_its_variant_or_dtype(self):
        # XFAIL: an expectation says the scenario cannot pass on this machine even on the
        # control (harness/expectations.toml), so it can prove nothing here; the others must.
        for fault in FAULTS:
            for variant, dtype in fault.wrong_under:
                caught = 0
                for scenario in fault.catches:
                    with self.subTest(fault=fault.name, variant=variant, dtype=dtype, scenario=scenario):
                        tests = self.matching(scenario, fault.name, variant, dtype)
                        missed = {t["id"]: t["outcome"] for t in tests if t["outcome"] not in CAUGHT + ("XFAIL",)}
                        self.assertEqual(missed, {}, f"{fault.name} went unnoticed under {variant}/{dtype}")
                        caught += sum(t["outcome"] in CAUGHT for t in tests)
                        for test in tests:
                            self.assertNotIn("leaked global state", test["reason"], test["id"])
                with self.subTest(fault=fault.name, variant=variant, dtype=dtype):
                    self.assertGreater(caught, 0, "every scenario exempted by expectations")

    def test_each_fault_passes_static(self):
        for fault in FAULTS:
            for scenario in fault.catches:
                with self.subTest(fault=fault.name, scenario=scenario):
                    failed = {t["id"]: t["reason"] for t in self.matching(scenario, fault.name, "static")
                              if t["outcome"] != "PASS"}
                    self.assertEqual(failed, {})

    def test_the_control_passes_each_variant_and_dtype(self):
        for fault in FAULTS:
            for (variant, dtype), scenario in itertools.product(fault.wrong_under, fault.catches):
                with self.subTest(variant=variant, dtype=dtype, scenario=scenario):
                    failed = {t["id"]: t["reason"] for t in self.matching(scenario, CONTROL, variant, dtype)
                              if t["outcome"] not in ("PASS", "XFAIL")}
                    self.assertEqual(failed, {})

    def test_columns_and_ids_carry_the_variant_and_dtype(self):
        columns = {(t["backend"], t["variant"], t["dtype"]) for t in self.results}
        self.assertIn((CONTROL, "dynamic", FLOAT32), columns)
        self.assertIn((CONTROL, "automatic_dynamic", FLOAT32), columns)
        self.assertIn((CONTROL, "compiled_autograd", FLOAT32), columns)
        self.assertIn((CONTROL, "static", "bfloat16"), columns)
        self.assertIn((CONTROL, "static", "float16"), columns)
        self.assertTrue(all(t["id"].split(".")[-2].endswith(f"_{t['variant']}") for t in self.results
                            if t["variant"] != "static" and t["dtype"] == FLOAT32))
        self.assertTrue(all(t["id"].split(".")[-2].endswith(f"_{t['dtype']}") for t in self.results
                            if t["dtype"] != FLOAT32))


SIZE_CHANGE_FAMILY = "AutomaticDynamicTests"  # test_backend_contract's; its faults are proved here
SIZE_CHANGE = f"{CONTRACT}.{SIZE_CHANGE_FAMILY}.*"
SYMBOLIC_RUN = shared_runs.DEFAULT.part([f"{FAULTY_MODULE}:bakes_in_first_sizes", CONTROL],
                                        [_id_glob(SIZE_CHANGE, backend, "static")
                                         for backend in ("bakes_in_first_sizes", CONTROL)])
FORGETFUL_RUN = shared_runs.SharedRun(env={"DYNAMO_SUITE_IMPORTS": "test.harness.forgetful_dynamo"}).part(
    [CONTROL], [_id_glob(SIZE_CHANGE, CONTROL, "static")])

# The automatic_dynamic variant's replays, under a Dynamo that keeps one entry per function:
# the grown call runs eagerly, with no graph of the backend's; each replayed test must fail
# saying so (it passed when a grown call without a graph counted as replayed).
ONE_ENTRY_SCENARIOS = (f"{CONTRACT}.OutputContractTests.test_layouts_[0-2]_*",)
ONE_ENTRY_RUN = shared_runs.SharedRun("--variants", "automatic_dynamic", "--op-sweep", "none",
                                      env={"DYNAMO_SUITE_IMPORTS": "test.harness.one_entry_dynamo"},
                                      label="one entry per function").part(
    [CONTROL], [_id_glob(scenario, CONTROL, "automatic_dynamic") for scenario in ONE_ENTRY_SCENARIOS])


class DefaultSizeChangeFaultTests(unittest.TestCase):
    """The default run's one family with a size change (AutomaticDynamicTests, static only)
    catches a backend wrong only on symbolic sizes, and a Dynamo whose automatic dynamic
    shapes forget the sizes they saw (every new size recompiles; every result stays right)."""

    def outcomes(self, part: shared_runs.Part, backend: str) -> dict[str, str]:
        found = {test["id"].rsplit(".", 1)[1]: test["outcome"] for test in part.tests() if test["backend"] == backend}
        self.assertTrue(found, part.describe())
        return found

    def test_a_backend_wrong_only_on_symbolic_sizes_fails_and_the_control_passes(self):
        self.assertIn("FAIL", self.outcomes(SYMBOLIC_RUN, "bakes_in_first_sizes").values())
        self.assertEqual(set(self.outcomes(SYMBOLIC_RUN, CONTROL).values()), {"PASS"})

    def test_a_dynamo_that_forgets_sizes_fails_every_size_change_on_its_recompile_count(self):
        self.assertEqual(set(self.outcomes(FORGETFUL_RUN, CONTROL).values()), {"FAIL"})
        for test in FORGETFUL_RUN.tests():
            self.assertRegex(test["reason"], r"3 != 2 : sizes .*recompile", test["id"])


class ReplayWithoutGraphTests(unittest.TestCase):
    """No replay without a graph: a grown call that the backend served with no graph of its
    own (Dynamo ran it eagerly) fails its test instead of comparing eager with eager."""

    def test_a_grown_call_that_ran_eagerly_fails_saying_so(self):
        tests = ONE_ENTRY_RUN.tests()
        self.assertTrue(tests, ONE_ENTRY_RUN.describe())
        for test in tests:
            with self.subTest(test=test["id"]):
                self.assertEqual(test["outcome"], "FAIL", test["reason"])
                self.assertRegex(test["reason"], r"at other sizes: at the grown size \(.*\) the backend ran no graph")


if __name__ == "__main__":
    unittest.main()
