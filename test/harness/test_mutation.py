"""The conditional mutants (test/harness/mutation/), without a run of the suite: each is a
backend spec; the control computes what eager computes, bit for bit, on the probes; a mutant
fires where its condition holds and nowhere else, at compile time or at run time; the control
records which mutants a program reaches; scripts/mutation_score.py's --list and argument errors.

The score itself (test x mutant over a tier): ``python scripts/mutation_score.py``
(docs/coverage.md); test/proofs/test_mutation_faults.py keeps its kills.
"""

from __future__ import annotations

import subprocess
import sys
import unittest
from pathlib import Path


from harness.axes.backends import resolve_backend
from harness.features import catalogue
from test.harness.mutation import faults, mutants, probes

# Its own seconds (test/harness/budgets.py): 12 s measured 2026-12-02; 49-51 s on 2026-12-06 in
# the whole self-test run, with issue 66's probes (threads, results kept, a tensor hook, eight
# value semantics).
TIME_BUDGET_S = 60

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "mutation_score.py"
PROBES = {probe.name: probe for probe in probes.PROBES}
# A mutant of each fault, and a probe it must change.
DIFFERS_ON = {
    "perturb__broadcast_middle__s0": "broadcast_middle",
    "wrong_row__broadcast_first__s0": "broadcast_first",
    "promotion_lost__type_promotion__s0": "scalar_operands",
    "zero_dim_promotes__zero_dim_operand__s0": "zero_dim",
    "scalar_rounded__scalar_operand__s0": "scalar_operands",
    "low_precision__float32__s0": "training",
    "bfloat16_accumulation__long_reduction__s0": "long_reduction",
    "strides_ignored__transposed__s0": "transposed",
    "offset_ignored__storage_offset__s0": "offset",
    "stale_result__later_call__s0": "broadcast_last",
    "nondeterministic__deterministic__s0": "deterministic",
    "nan_skipped__nan__s0": "nan",
    "infinity_saturated__infinity__s0": "infinity",
    "zero_sign_lost__negative_zero__s0": "negative_zero",
    "subnormal_flushed__subnormal__s0": "subnormal",
    "half_saturated__large_values__s0": "large_values",
    "int_off_by_one__int64__s0": "integers",
    "int_truncated__int64__s0": "integers",
    "ties_last__ties__s0": "ties",
    "duplicates_overwrite__repeated_indices__s0": "repeated_indices",
    "index_clamped__index_out_of_range__s0": "index_out_of_range",
    "negative_index_zero__negative_indices__s0": "negative_indices",
    "round_half_away__exact_halves__s0": "exact_halves",
    "clamp_max_first__float32__s0": "exact_halves",
    "masked_row_zeros__fully_masked_row__s0": "masked_rows",
    "attention_masked_row_nan__fully_masked_row__s0": "masked_rows",
    "float8_unsaturated__float8__s0": "float8",
    "bytes_saturated__uint8__s0": "bytes_from_floats",
    "unsigned_as_signed__wide_unsigned__s0": "wide_unsigned",
    "padding_row_gradient__padding_index__s0": "embedding_options",
    "max_norm_skipped__max_norm__s0": "embedding_options",
    "keep_reference__float32__s0": "several_outputs",
    "detach_outputs__training__s0": "training",
    "mutation_lost__input_mutation__s0": "input_mutation",
    "staged_in_shared_buffer__other_thread__s0": "threads",
    "reuse_outputs__later_call__s0": "kept_results",
    "reuse_gradients__later_call__s0": "kept_results",
    "drops_tensor_hooks__training__s0": "tensor_hook",
}


def _run(probe: str, name: str | None) -> probes.Outcome:
    return probes.run_on_switch(probe, name)


class CatalogueTests(unittest.TestCase):
    def test_every_fault_has_mutants_over_every_group(self):
        every_fault = {*faults.FAULTS, *faults.CALL_FAULTS, *faults.GRAPH_FAULTS}
        kernel = [spec for spec in mutants.MUTANTS.values() if not spec.stack]  # test_stack_mutants.py: the others
        self.assertEqual({spec.fault for spec in kernel}, every_fault)
        self.assertEqual({spec.group for spec in kernel}, set(catalogue.GROUPS))
        self.assertGreaterEqual(len(mutants.MUTANTS), 300)
        self.assertEqual(set(DIFFERS_ON) - set(mutants.MUTANTS), set())
        self.assertEqual({name.split("__")[0] for name in DIFFERS_ON}, every_fault)

    def test_a_mutant_is_a_backend_spec(self):
        name = "wrong_row__broadcast_middle__s1"
        backend = resolve_backend(mutants.spec(name))
        self.assertEqual(backend.name, name)
        self.assertIs(mutants.mutant(name).spec, mutants.MUTANTS[name])
        with self.assertRaisesRegex(AttributeError, r"named <fault>__<condition>__s<seed>"):
            mutants.mutant("wrong_row__nowhere__s0")


class ControlTests(unittest.TestCase):
    def test_the_control_computes_what_eager_computes(self):
        for name in ("broadcast_middle", "input_mutation", "deterministic", "backward_twice", "module", "nan"):
            with self.subTest(probe=name):
                eager = probes.run(PROBES[name], "eager")
                self.assertIsNone(probes.difference(eager, _run(name, None)))

    def test_the_control_records_what_a_program_reaches(self):
        mutants.start_test()
        mutants.use(None)
        probes.run(PROBES["broadcast_middle"], mutants.mutant(mutants.SWITCH))
        reached = mutants.reached_mutants()
        self.assertIn("wrong_row__broadcast_middle__s0", reached)
        self.assertNotIn("wrong_row__broadcast_first__s0", reached)  # no operand broadcast along the first
        self.assertIn("stale_result__later_call__s0", reached)  # called three times
        self.assertNotIn("nan_skipped__nan__s0", reached)  # no NaN, no reduction
        self.assertEqual(mutants.fired(), set())

    def test_the_control_records_each_kernel_under_the_conditions_its_calls_met(self):
        for probe, met, not_met in (
                ("broadcast_middle", {"where", "where: broadcast-middle", "add: float32", "mul: later-call"},
                 {"add: broadcast-first", "where: nan"}),
                ("zero_dim", {"mul: zero-dim-operand", "add: mixed-dtypes"}, {"sum: zero-dim-operand"}),
                ("nan", {"sum: nan", "amax: nan", "amax: keepdim=False"}, {"sum: infinity", "amax: keepdim=True"}),
                ("training", {"mm: backward", "tanh_backward: backward", "mm: float32"}, set())):
            with self.subTest(probe=probe):
                mutants.start_test()
                mutants.use(None)
                probes.run(PROBES[probe], mutants.mutant(mutants.SWITCH))
                kernels = mutants.kernels_met()
                self.assertLessEqual(met, kernels)
                self.assertFalse(not_met & kernels, sorted(kernels))


class FaultTests(unittest.TestCase):
    def test_each_fault_changes_what_its_probe_computes(self):
        for name, probe in DIFFERS_ON.items():
            with self.subTest(mutant=name):
                control = _run(probe, None)
                self.assertIsNotNone(probes.difference(control, _run(probe, name)))
                self.assertIn(name, mutants.fired())

    def test_a_mutant_fires_only_where_its_condition_holds(self):
        # Compile time: a broadcast along the middle only.
        self.assertIsNone(probes.difference(_run("broadcast_first", None), _run("broadcast_first",
                                                                                 "wrong_row__broadcast_middle__s0")))
        self.assertEqual(mutants.fired(), set())
        # Run time: under no_grad only, not on the same graph called with grad enabled.
        self.assertIsNone(probes.difference(_run("training", None), _run("training", "perturb__grad_disabled__s0")))
        self.assertIsNotNone(probes.difference(_run("no_grad", None), _run("no_grad", "perturb__grad_disabled__s0")))

    def test_a_fault_raises_where_the_right_call_does_unless_it_is_the_check(self):
        outcome = _run("index_out_of_range", "negative_index_zero__negative_indices__s0")
        self.assertEqual(outcome.calls[0], ("raised", "IndexError"))
        self.assertNotEqual(_run("index_out_of_range", "index_clamped__index_out_of_range__s0").calls[0][0], "raised")


class ScriptTests(unittest.TestCase):
    def run_script(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120)

    def test_list_prints_every_mutant(self):
        listed = self.run_script("--list")
        self.assertEqual(listed.returncode, 0, listed.stderr)
        lines = listed.stdout.splitlines()
        self.assertEqual(len(lines), len(mutants.MUTANTS))
        self.assertRegex(lines[0], r"^\w+__[\w]+__s\d\t(shape|dtype|layout|values|graph|call|module)\t.+, when: .+")
        self.assertRegex(lines[-1], r"^\w+__[\w]+__s0\t(dynamo|aot_autograd)\t.+, where the control met it$")

    def test_bad_arguments_are_one_line_and_exit_2(self):
        for args, message in ((["--mutants", "nothing*"], "matches no mutant"), (["--kills", "-1"], "--kills"),
                              (["--tier", "weekly"], "invalid choice")):
            with self.subTest(args=args):
                done = self.run_script(*args)
                self.assertEqual(done.returncode, 2)
                self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
                self.assertIn(message, done.stderr)


if __name__ == "__main__":
    unittest.main()
