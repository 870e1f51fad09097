"""The held-out regressions of torch (bench/held_out_regressions.py) are real faults, and the
suite's tests that caught them in the measurement (bench/held_out.py --regressions,
docs/coverage.md) still do: each named test passes on torch as it is and fails with the
regression patched in; a plain program still compiles right under every regression (none
breaks everything); each regression changes what its probe program computes, the ones no
test catches included; and a run of run_tests.py with HELD_OUT_REGRESSION set has the
regression in its worker processes.

The tests run in this process, torch patched within ``regression(name)`` and Dynamo's caches
emptied on both sides; the one run of run_tests.py is a process of its own, so its patch
never reaches this one.
"""

from __future__ import annotations

import os
import sys
import tempfile
import unittest
from pathlib import Path
from typing import Callable
from unittest import mock

import torch

from test.harness.cli import REPO_ROOT, read_results, spawn_cli

BENCH = REPO_ROOT / "bench"
sys.path.insert(0, str(BENCH))
import held_out_regressions  # noqa: E402  (bench/, beside held_out.py)

# Its own seconds (test/harness/budgets.py, shared runs apart): 42 s measured 2026-12-06 (2 cores at
# a load of 8), the run of run_tests.py one test of them.
TIME_BUDGET_S = 120

CONTRACT = "test.dynamo.test_backend_contract"
AOT = "test.dynamo.test_aot_autograd"
TRANSFORMS = "test.dynamo.test_tracing_transforms"
# Each regression the default tier of aot_eager caught on 2026-12-06, and the cheapest test of
# those that caught it (its class for aot_eager).
CAUGHT_BY = {
    "detach_dropped": f"{CONTRACT}.CallerTests_aot_eager.test_module_with_forward_and_backward_hooks",
    "no_grad_region_dropped": f"{AOT}.GradModeMutationTests_aot_eager.test_grad_mode_disabled_inside_compiled_fn",
    "input_clone_elided": f"{CONTRACT}.SideEffectContractTests_aot_eager.test_mutation_of_non_contiguous_input",
    "view_inplace_dce": f"{AOT}.ExpandMutationTests_aot_eager.test_mutation_through_expand_functionalizes",
    "scatter_lost": f"{AOT}.ExpandMutationTests_aot_eager.test_mutation_through_expand_functionalizes",
    "training_buffer_mutation_dropped": "test.dynamo.test_training_loop.ModuleStateTests_aot_eager."
                                        "test_buffer_written_by_forward",
    "rng_state_rewound": "test.dynamo.test_op_sweep.OpSweepTests_aot_eager.test_op_randn_like",
    "outputs_made_contiguous": f"{TRANSFORMS}.JointGraphGradientTests_aot_eager."
                               "test_tangent_of_output_that_is_a_view_0_transpose",
    "outputs_require_grad": f"{CONTRACT}.CallIndependenceTests_aot_eager.test_calls_let_go_of_their_tensors_0_training",
    "aliased_output_offset_lost": f"{CONTRACT}.OutputContractTests_aot_eager.test_outputs_that_are_views_of_inputs",
    "attribute_tensors_frozen": "test.dynamo.test_state_changes.StateChangeTests_aot_eager.test_buffer_grows",
}
# What only a nightly test catches (the default tier misses it).
CAUGHT_AT_NIGHT = {
    "aliasing_guard_dropped": f"{AOT}.StorageOverlapTests_aot_eager.test_overlap_change_recompiles_1_overlap_grows",
}
# What no test of the suite catches: shown to be a fault by its probe alone. No scenario compiles
# an autocast region (autocast is always around the call), and none reads a version counter or
# mutates, in a compiled call, a tensor eager autograd saved.
MISSED = ("autocast_region_dropped", "version_counter_kept")
# A test of none of their conditions: every regression leaves it passing.
UNTOUCHED = f"{CONTRACT}.OutputContractTests_aot_eager.test_integers_stay_exact"


def _run(test_id: str) -> unittest.TestResult:
    """The test run here, on the tier it is in."""
    result = unittest.TestResult()
    tier = {"DYNAMO_SUITE_TIER": "nightly"} if test_id in CAUGHT_AT_NIGHT.values() else {}
    with mock.patch.dict(os.environ, tier):
        unittest.defaultTestLoader.loadTestsFromName(test_id).run(result)
    return result


def _catchers() -> dict[str, str]:
    return {**CAUGHT_BY, **CAUGHT_AT_NIGHT}


def _problems(result: unittest.TestResult) -> str:
    return "\n".join(text[-1500:] for _, text in result.failures + result.errors)


def _compiled(fn: Callable) -> Callable:
    return torch.compile(fn, backend="aot_eager")


# -- a probe program per regression: True where it computed what eager does ---------------------------------


def _detach() -> bool:
    w = torch.randn(3, requires_grad=True)
    (grad,) = torch.autograd.grad(_compiled(lambda x: (x * x.detach()).sum())(w), w)
    return torch.allclose(grad, w.detach())


def _no_grad() -> bool:
    def fn(x):
        with torch.no_grad():
            return x * 2
    return not _compiled(fn)(torch.randn(3, requires_grad=True)).requires_grad


def _autocast() -> bool:
    def fn(x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return x @ x
    return _compiled(fn)(torch.randn(4, 4)).dtype == torch.bfloat16


def _clone() -> bool:
    def fn(x):
        y = x.clone()
        y.add_(1)
        return y
    x = torch.zeros(3)
    _compiled(fn)(x)
    return not x.any()


def _write_through_view() -> bool:
    def fn(x):
        y = x * 1
        y[0].add_(5)
        return y
    return _compiled(fn)(torch.zeros(3)).sum().item() == 5


def _frozen() -> bool:
    model = torch.nn.Linear(2, 2)
    model.register_buffer("scale", torch.ones(2))
    compiled, x = _compiled(lambda x: model(x) * model.scale), torch.ones(2)
    compiled(x)
    model.scale.mul_(3)
    return torch.allclose(compiled(x), model(x) * model.scale)


def _aliased() -> bool:
    def fn(x, y):
        x.add_(1)
        return x + y
    compiled, t = _compiled(fn), torch.zeros(2)
    compiled(torch.zeros(2), torch.zeros(2))
    return compiled(t, t).tolist() == [2.0, 2.0]


def _rng() -> bool:
    compiled = _compiled(lambda x: x + torch.rand(3))
    return not torch.equal(compiled(torch.zeros(3)), compiled(torch.zeros(3)))


def _strides() -> bool:
    return _compiled(lambda x: (x + 1).t())(torch.randn(2, 3)).stride() == (1, 3)


def _requires_grad() -> bool:
    outputs = _compiled(lambda x, y: (x * 2, y + 1))(torch.randn(3, requires_grad=True), torch.randn(3))
    return not outputs[1].requires_grad


def _version() -> bool:
    def fn(x):
        x.mul_(2)
        return x.sum()
    x = torch.ones(3)
    before = x._version
    _compiled(fn)(x)
    return x._version > before


def _offset() -> bool:
    return _compiled(lambda x: x[1:])(torch.arange(4.0)).tolist() == [1.0, 2.0, 3.0]


def _buffer() -> bool:
    def fn(x, buffer):
        buffer.add_(1)
        return x * 2
    buffer = torch.zeros(2)
    _compiled(fn)(torch.randn(3, requires_grad=True), buffer)
    return buffer.sum().item() == 2


PROBES = {
    "detach_dropped": _detach, "no_grad_region_dropped": _no_grad, "autocast_region_dropped": _autocast,
    "input_clone_elided": _clone, "view_inplace_dce": _write_through_view, "attribute_tensors_frozen": _frozen,
    "aliasing_guard_dropped": _aliased, "scatter_lost": _write_through_view, "rng_state_rewound": _rng,
    "outputs_made_contiguous": _strides, "outputs_require_grad": _requires_grad,
    "version_counter_kept": _version, "aliased_output_offset_lost": _offset,
    "training_buffer_mutation_dropped": _buffer,
}


class HeldOutRegressionTests(unittest.TestCase):
    def test_every_regression_is_caught_by_a_named_test_or_listed_as_missed(self):
        named = [*CAUGHT_BY, *CAUGHT_AT_NIGHT, *MISSED]
        self.assertEqual(sorted(named), sorted(held_out_regressions.REGRESSIONS))
        self.assertEqual(set(PROBES), set(held_out_regressions.REGRESSIONS))

    def test_each_probe_changes_under_its_regression_only(self):
        for name, probe in PROBES.items():
            with self.subTest(name):
                torch._dynamo.reset()
                self.assertTrue(probe(), "the probe goes wrong on torch as it is")
                with held_out_regressions.regression(name):
                    self.assertFalse(probe(), f"{name} changes nothing its probe computes")

    def test_the_catching_tests_pass_on_torch_as_it_is(self):
        for name, test_id in _catchers().items():
            with self.subTest(name):
                torch._dynamo.reset()
                result = _run(test_id)
                self.assertTrue(result.wasSuccessful(), _problems(result))
                self.assertEqual((result.testsRun, len(result.skipped)), (1, 0), f"{test_id} did not run")

    def test_each_regression_fails_its_catching_test(self):
        for name, test_id in _catchers().items():
            with self.subTest(name), held_out_regressions.regression(name):
                result = _run(test_id)
                self.assertFalse(result.wasSuccessful(), f"{test_id} passes with {name}")
                self.assertEqual((result.testsRun, len(result.skipped)), (1, 0), f"{test_id} did not run")

    def test_no_regression_breaks_everything(self):
        for name in held_out_regressions.REGRESSIONS:
            with self.subTest(name), held_out_regressions.regression(name):
                result = _run(UNTOUCHED)
                self.assertTrue(result.wasSuccessful(), _problems(result))
                self.assertEqual(len(result.skipped), 0)

    def test_the_environment_puts_the_regression_in_the_workers(self):
        name, test_id = "input_clone_elided", CAUGHT_BY["input_clone_elided"]
        with tempfile.TemporaryDirectory() as directory:
            env = {"DYNAMO_SUITE_IMPORTS": "held_out_regressions", held_out_regressions.REGRESSION_ENV: name,
                   "PYTHONPATH": os.pathsep.join(filter(None, (str(BENCH), os.environ.get("PYTHONPATH"))))}
            run = spawn_cli("--backend", "aot_eager", "-k", test_id, "--report-dir", directory, env=env, timeout=300)
            tests = read_results(Path(directory))["tests"]
        self.assertEqual(run.returncode, 1, run.stdout[-2000:])
        self.assertEqual([(test["id"], test["outcome"]) for test in tests], [(test_id, "FAIL")])

    def test_an_unknown_name_says_which_there_are(self):
        with self.assertRaisesRegex(KeyError, "no such regression; one of detach_dropped"):
            held_out_regressions.install("no_such_regression")


if __name__ == "__main__":
    unittest.main()
