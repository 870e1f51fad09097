"""The smoke tier (``harness.testcase.smoke``), checked without running a scenario: its tests exist in
the default tier and are at most a tenth of it, each fault the self-tests know has a smoke
test among those that must catch it, and each scenario family is either run or left to the
default tier on purpose.

That the smoke run really fails on each faulty backend takes one run per backend, minutes
in all: ``python run_tests.py --tier smoke -j 1 --backend test.harness.faulty_backends:NAME``
must exit 1 for every NAME below.
"""

from __future__ import annotations

import fnmatch
import os
import unittest
from unittest import mock

from harness.testcase import smoke
from harness.run.collection import collect
from test.harness import faulty_backends
from test.proofs import (test_compile_surface_faults, test_distributed_faults, test_eager_share_faults,
                         test_export_faults, test_faulty_backends, test_faulty_models, test_faulty_transforms,
                         test_judging_faults, test_random_law_faults, test_scope_faults, test_variant_faults)
from test.harness.cli import run_cli

MODULE = "test.dynamo."
SDPA = "test_op_sweep.OpSweepTests.test_op_nn_functional_scaled_dot_product_attention"

# Faulty backends the glob tables of test_faulty_backends.FAULTS do not cover, and the smoke
# test that fails on each, with how we know.
CAUGHT_OUTSIDE_FAULTS = {
    # OperatorFamilyFaultTests: exactly the reducing ops of the quick sweep fail.
    "perturbs_reductions": "test_op_sweep.OpSweepTests.test_op_sum",
    # OperatorFamilyFaultTests: the attention op fails (in the models only eval reaches it).
    "wrong_attention": SDPA,
    # Measured on torch 2.13: of the default tier, only this test has a forward graph over
    # faulty_backends.BIG_GRAPH operators (nn_transformer's training test, the other one
    # measured with FIRED_LOG_ENV, runs nightly).
    "miscompiles_big_graphs": "test_aot_autograd.LSTMTests.test_lstm_grad_enabled_input_requires_grad",
    # CRASH_AND_HANG_PLAN: a segfault, so CRASH at once, not a hang that costs --timeout.
    "crashes_and_hangs": "test_python_autograd.PythonAutogradTests.test_forwards_resetting_tape",
    # A compiler stuck on aten.trunc: a TIMEOUT; only ArgDupeRecompileTests compile trunc.
    "hangs_compiling_trunc":
        "test_aot_autograd.ArgDupeRecompileTests.test_duplicated_then_distinct_args_recompile_0_two_args",
    # test_isolation's runtime that refuses float64 inputs: the second call gets one.
    "breaks_after_float64": "test_backend_contract.ChangingInputsTests.test_dtypes_recompile",
    # OperatorFamilyFaultTests: each fails its op's test and not the other two.
    "wrong_group_norm": "test_op_sweep.OpSweepTests.test_op_nn_functional_group_norm",
    "wrong_conv_transpose": "test_op_sweep.OpSweepTests.test_op_nn_functional_conv_transpose2d",
    "skips_batch_norm_stats": "test_op_sweep.OpSweepTests.test_op_nn_functional_batch_norm",
    # OperatorFamilyFaultTests: its samples with training=False fail.
    "folds_batch_norm_wrong": "test_op_sweep.OpSweepTests.test_op_nn_functional_batch_norm",
    "wrong_upsampling": "test_op_sweep.OpSweepTests.test_op_nn_functional_upsample_bilinear",
    # test_value_domain_faults' options group; of the smoke tests (measured on torch 2.13), the
    # broadcasting reference inputs too: a sum's keepdim in their gradients.
    "ignores_kernel_options": "test_op_sweep.OpSweepTests.test_reference_broadcasting",
    # test_value_domain_faults: each fails the value-domain tests of its kind of value or dtype
    # (loses_negative_zero: the subnormal test has -0.0 among its values too).
    "flushes_subnormals": "test_op_sweep.OpSweepTests.test_subnormals_float32",
    "loses_negative_zero": "test_op_sweep.OpSweepTests.test_subnormals_float32",
    "integers_through_float32": "test_op_sweep.OpSweepTests.test_values_int64",
    "saturates_8_bit": "test_op_sweep.OpSweepTests.test_values_int8",
    # test_caller_faults: it fails the CallerTests test of its way of calling.
    "ignores_saved_tensor_hooks": "test_backend_contract.CallerTests.test_call_inside_saved_tensor_hooks",
    "drops_imaginary_parts": "test_op_sweep.OpSweepTests.test_values_complex64",
    # test_real_data_faults: each fails its kind of special value, and its ordinary twin passes.
    # And a NaN skipped by a full max is the NaN contract test's.
    "skips_nan_in_reductions": "test_backend_contract.OutputContractTests.test_nan_and_inf_propagate",
    "breaks_ties_last": "test_real_data.RealDataTests.test_tied_values_and_repeated_indices_0_special",
    "loses_duplicate_writes": "test_real_data.RealDataTests.test_tied_values_and_repeated_indices_0_special",
    "wrong_past_2_to_the_16": "test_real_data.RealDataTests.test_tensors_past_2_to_the_16_elements_0_special",
}

# Its own seconds (test/harness/budgets.py): 9 s measured 2026-11-29.
TIME_BUDGET_S = 25


def _faulty_backend_names() -> set[str]:
    # Each faulty backend's docstring starts with the clause it breaks.
    return {name for name, value in vars(faulty_backends).items()
            if callable(value) and not name.startswith("_") and (value.__doc__ or "").startswith("Breaks:")}


def _ids(scenario: str, backend: str) -> list[str]:
    """The test ids a scenario may have: per backend, or once."""
    module, family, test = scenario.split(".")
    return [f"{MODULE}{module}.{family}_{backend}.{test}", f"{MODULE}{module}.{family}.{test}"]


class SmokeSelectionTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        # The default run as run_tests.py collects it: default backends, quick sweep, all tiers.
        environment = {key: value for key, value in os.environ.items()
                       if key not in ("DYNAMO_SUITE_BACKENDS", "DYNAMO_SUITE_OP_SWEEP", "DYNAMO_SUITE_TIER")}
        with mock.patch.dict(os.environ, environment, clear=True):
            cls.collected = collect().tests
        cls.by_scenario = {}
        for test in cls.collected:
            if test.tier != "perf":  # the perf tier's tests are in no other tier, the smoke tier's source
                cls.by_scenario.setdefault(test.scenario, []).append(test)

    def test_every_pick_is_a_default_tier_scenario(self):
        for pick in smoke.PICKS:
            with self.subTest(scenario=pick.scenario):
                tests = self.by_scenario.get(pick.scenario)
                self.assertTrue(tests, "no such test in the default run")
                # A nightly test would only SKIP here.
                self.assertEqual({test.tier for test in tests}, {"default"})
                once = {test.backend for test in tests} == {"-"}
                self.assertEqual(pick.per_backend, not once, "per_backend says otherwise")

    def test_at_most_a_tenth_of_the_default_run(self):
        backends = {test.backend for test in self.collected} - {"-"}
        for chosen in (backends, {"eager"}):
            with self.subTest(backends=sorted(chosen)):
                run = [test for test in self.collected if test.backend in chosen | {"-"}]
                selected = [test for test in run if test.scenario in smoke.SCENARIOS]
                self.assertLessEqual(10 * len(selected), len(run), f"{len(selected)} of {len(run)} tests")

    def test_every_family_is_run_or_left_to_the_default_tier(self):
        families = {scenario.rsplit(".", 1)[0] for scenario in self.by_scenario}
        run = set(smoke.families())
        self.assertEqual(run & set(smoke.LEFT_TO_DEFAULT), set(), "both run and left out")
        self.assertEqual(families - run - set(smoke.LEFT_TO_DEFAULT), set(), "neither run nor left out")
        self.assertEqual(set(smoke.LEFT_TO_DEFAULT) - families, set(), "left out, but no such family")

    def test_the_runner_selects_exactly_the_picks(self):
        completed = run_cli("--list", "--tier", "smoke", "--backend", "eager")
        self.assertEqual(completed.returncode, 0, completed.stderr)
        listed = completed.stdout.split()
        expected = {test.id for scenario in smoke.SCENARIOS for test in self.by_scenario[scenario]
                    if test.backend in ("eager", "-")}
        self.assertEqual(sorted(listed), sorted(expected))


class SmokeCatchesEveryFaultTests(unittest.TestCase):
    def test_every_backend_fault_has_a_smoke_test_that_must_catch_it(self):
        for fault in test_faulty_backends.FAULTS:
            with self.subTest(fault=fault.name):
                caught = [scenario for scenario in smoke.SCENARIOS
                          if any(fnmatch.fnmatchcase(scenario, glob) for glob in fault.catches)
                          and not any(fnmatch.fnmatchcase(scenario, glob) for glob in fault.spared)]
                self.assertTrue(caught, f"no smoke test among {fault.catches}")

    def test_every_transform_patch_has_a_smoke_test_that_must_catch_it(self):
        for patch, globs in test_faulty_transforms.CATCHES.items():
            with self.subTest(patch=patch):
                # The patches are checked on aot_eager (test_faulty_transforms._run).
                caught = [scenario for scenario in smoke.SCENARIOS for test_id in _ids(scenario, "aot_eager")
                          if any(fnmatch.fnmatchcase(test_id, glob) for glob in globs)]
                self.assertTrue(caught, f"no smoke test among {globs}")

    def test_every_faulty_backend_is_caught(self):
        in_tables = {fault.name for fault in test_faulty_backends.FAULTS}
        self.assertEqual(set(test_faulty_models.MODEL_FAULTS) - set(CAUGHT_OUTSIDE_FAULTS), set())
        # Right under static/float32 by design (all smoke runs): test_variant_faults catches
        # each under the variants and dtypes it is wrong in.
        variant_only = {fault.name for fault in test_variant_faults.FAULTS}
        # Right in every result by design: test_eager_share_faults catches each with --max-eager-share.
        eager_share_only = set(test_eager_share_faults.CAUGHT) - {"inductor", "aot_eager"} | {test_eager_share_faults.FALLBACK}
        # Right outside an export variant, or outside a process group (the nightly distributed
        # family): test_export_faults and test_distributed_faults catch them there; refusing
        # training, as the refusal contract's run declares it (test_scope_faults).
        # Wrong only in a higher-order operator of the compile surface, whose families the smoke
        # tier leaves to the default tier (smoke.LEFT_TO_DEFAULT): test_compile_surface_faults.
        elsewhere = (set(test_export_faults.FAULTS) | set(test_distributed_faults.FAULTS)
                     | {test_scope_faults.KEEPS, *test_scope_faults.BREAKS, *test_scope_faults.FORM_BACKENDS}
                     | set(test_compile_surface_faults.CATCHES))
        # Random kernels off eager's law and a runtime holding every call's memory (issue 65):
        # test_random_law_faults catches them; no smoke pick yet (the bernoulli and normal op
        # tests and the dropout law tests are outside the default tier the picks come from),
        # until the tier is chosen again with them in the kill matrix.
        elsewhere |= set(test_random_law_faults.CATCHES)
        # The judging faults are wrong in half precision, at a second size or where only the
        # options group's gradients look (test_judging_faults).
        elsewhere |= set(test_judging_faults.CATCHES)
        self.assertEqual(_faulty_backend_names() - in_tables - set(CAUGHT_OUTSIDE_FAULTS) - variant_only
                         - eager_share_only - elsewhere, set(), "a faulty backend with no smoke test on record")
        for fault, scenario in CAUGHT_OUTSIDE_FAULTS.items():
            with self.subTest(fault=fault):
                self.assertIn(scenario, smoke.SCENARIOS)

    def test_the_crash_scenario_is_one_that_crashes_and_no_hang(self):
        plan = {f"test_python_autograd.PythonAutogradTests.{test}": action
                for test, action in faulty_backends.CRASH_AND_HANG_PLAN.items()}
        actions = {plan[scenario] for scenario in smoke.SCENARIOS if scenario in plan}
        self.assertEqual(actions, {"segfault"})

    def test_the_reduction_pick_is_a_perturbed_reduction(self):
        op = CAUGHT_OUTSIDE_FAULTS["perturbs_reductions"].rsplit("test_op_", 1)[1]
        self.assertIn(op, faulty_backends.PERTURBED_REDUCTIONS)


class SmokeCoverageTests(unittest.TestCase):
    def test_every_clause_has_a_pick_and_every_pick_names_known_clauses(self):
        named = {clause for pick in smoke.PICKS for clause in pick.clauses}
        self.assertEqual(set(smoke.CLAUSES) - named, set(), "a clause no smoke test makes observable")
        self.assertEqual(named - set(smoke.CLAUSES), set(), "a pick names a clause CLAUSES does not")

    def test_every_pick_says_what_it_stands_for(self):
        for pick in smoke.PICKS:
            with self.subTest(scenario=pick.scenario):
                self.assertTrue(pick.clauses or pick.family_checks)
        self.assertEqual(len(smoke.SCENARIOS), len(smoke.PICKS), "a scenario picked twice")

    def test_coverage_lines_name_each_clause_and_family_once(self):
        lines = smoke.coverage_lines()
        self.assertEqual(len(lines), len(smoke.CLAUSES) + len(smoke.families()))
        self.assertIn("clause the RNG stream: "
                      "GlobalStateContractTests.test_deterministic_code_leaves_the_rng_stream_alone", lines)
        self.assertIn("family test_op_sweep.OpSweepTests: test_op_sum, "
                      "test_op_nn_functional_scaled_dot_product_attention, test_op_nn_functional_group_norm, "
                      "test_op_nn_functional_conv_transpose2d, test_op_nn_functional_batch_norm, "
                      "test_op_nn_functional_upsample_bilinear, test_subnormals_float32, test_values_int64, "
                      "test_values_int8, test_values_complex64, test_reference_broadcasting", lines)

    def test_headline_counts_what_is_selected(self):
        per_backend = sum(pick.per_backend for pick in smoke.PICKS)
        self.assertEqual(smoke.headline(), f"smoke tier: {per_backend} tests per backend and "
                                           f"{len(smoke.PICKS) - per_backend} backend-independent, covering "
                                           f"{len(smoke.CLAUSES)} of {len(smoke.CLAUSES)} contract clauses and "
                                           f"{len(smoke.families())} of "
                                           f"{len(smoke.families()) + len(smoke.LEFT_TO_DEFAULT)} scenario families "
                                           f"(the others run in the default tier)")
        self.assertTrue(smoke.headline([SDPA]).startswith(
            "smoke tier: 1 test per backend and 0 backend-independent, covering 1 of "))


if __name__ == "__main__":
    unittest.main()
