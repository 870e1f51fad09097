"""The compute program generator (harness.fuzz.compute) and its judge: seeded, valid
and well-conditioned in eager, reaching the vocabulary and the value domains, exact where
eager is exact and tolerant where it rounds.

Which faulty backends the default budget of compute programs finds is in
test/proofs/test_generated_faults.py.
"""

from __future__ import annotations

import re
import unittest
from unittest import mock

import torch
import torch._dynamo

from harness.fuzz import compute, generator
from harness.fuzz.differential import disagreement, shrink
from harness.fuzz.generator import Run
from test.harness.test_generated_programs import _compile_with

# Its own seconds (test/harness/budgets.py): 27 s measured 2026-11-29 under load.
TIME_BUDGET_S = 40
SEEDS = range(40)


def _flips_floor(gm, example_inputs):
    """Replaces every floor by ceil: a miscompile of one exact op."""
    for node in gm.graph.nodes:
        if node.target in (torch.floor, torch.ops.aten.floor.default, "floor"):
            node.op, node.target = "call_function", torch.ceil
    gm.recompile()
    return gm.forward


class GeneratorTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.programs = [compute.generate(seed) for seed in SEEDS]

    def test_a_seed_always_gives_the_same_program(self):
        self.assertEqual(compute.generate(7).source(), compute.generate(7).source())
        self.assertEqual(len({program.source() for program in self.programs}), len(self.programs))

    def test_a_program_survives_its_own_source(self):
        for program in self.programs[:20]:
            self.assertEqual(generator.parse(program.source()), program)

    def test_programs_run_eagerly_deterministically_and_well_conditioned(self):
        for program in self.programs[:20]:
            with self.subTest(seed=program.seed):
                self.assertTrue(2 <= len(program.statements) <= generator.MAX_STATEMENTS)
                self.assertTrue(generator.deterministic(program))
                self.assertTrue(compute._conditioned(program))

    def test_programs_reach_the_vocabulary_and_the_value_domains(self):
        text = "\n".join(program.source() for program in self.programs)
        for family in compute.FAMILY_WEIGHTS:
            with self.subTest(family=family):
                reached = [op for op in compute.VOCABULARY if op.family == family
                           and re.search(re.escape(op.code.split("{")[0].split("(")[0] or op.code[:4]), text)]
                self.assertTrue(reached)
        for construct in (r"float\('nan'\)", r"-float\('inf'\)", r"-0\.0\b", r"e-4[0-5]\b", r"1e\+20", r"torch\.int64",
                          r"torch\.bool", r"torch\.float16", r"reshape\(\(\)\)", r"reshape\(\(0, 4\)\)",
                          r"torch\.tensor\(\[(\d+), [^]]*\b\1\b", r"requires_grad_\(\)"):
            self.assertRegex(text, construct)
        self.assertTrue(any(program.backward for program in self.programs))
        # Exact values are told apart from rounded ones, and both reach the outputs.
        outputs = [(name in program.exact) for program in self.programs for name in program.outputs]
        self.assertIn(True, outputs)
        self.assertIn(False, outputs)

    def test_redrawn_inputs_keep_shapes_and_dtypes(self):
        program = self.programs[3]
        bases, _ = program.build()[0]()
        for domain, variant in compute.redrawn(program):
            with self.subTest(domain=domain):
                again, _ = variant.build()[0]()
                self.assertEqual([(b.shape, b.dtype, b.requires_grad) for b in bases],
                                 [(b.shape, b.dtype, b.requires_grad) for b in again])


class JudgeTests(unittest.TestCase):
    def tearDown(self):
        torch._dynamo.reset()

    def _judge(self, exact: bool, want: torch.Tensor, got: torch.Tensor) -> str | None:
        program = compute.generate(0).replace(outputs=("v0",), exact=("v0",) if exact else (), backward=False)
        return compute.judge(program, Run([], [], (want,), None), Run([], [], (got,), None))

    def test_exact_values_compare_bit_for_bit(self):
        self.assertRegex(self._judge(True, torch.tensor([0.0, -0.0]), torch.tensor([0.0, 0.0])),
                         "where eager is exact.*flat index 1")
        self.assertRegex(self._judge(True, torch.tensor([1e-40]), torch.tensor([0.0])), "exact")
        self.assertIsNone(self._judge(True, torch.tensor([float("nan"), 1.0]), torch.tensor([-float("nan"), 1.0])))

    def test_rounded_values_compare_within_tolerance_with_nan_and_infinities_in_place(self):
        self.assertIsNone(self._judge(False, torch.tensor([0.0, 1.0]), torch.tensor([-0.0, 1.0 + 1e-7])))
        self.assertRegex(self._judge(False, torch.tensor([float("nan"), 1.0]), torch.tensor([0.0, 1.0])), "NaN")
        self.assertRegex(self._judge(False, torch.tensor([float("inf")]), torch.tensor([-float("inf")])),
                         "infinities")

    def test_integers_compare_exactly_even_when_not_marked_exact(self):
        self.assertRegex(self._judge(False, torch.tensor([3]), torch.tensor([4])), "exact")

    def test_correct_backends_agree(self):
        for seed in range(10):
            torch._dynamo.reset()
            self.assertIsNone(disagreement(compute.generate(seed), _compile_with("aot_eager")))

    def test_a_miscompiled_exact_op_is_found_and_shrunk(self):
        compile_ = _compile_with(_flips_floor)
        for seed in range(200):
            program = compute.generate(seed)
            if ".floor()" in program.function_source() and len(program.statements) >= 6:
                torch._dynamo.reset()
                message = disagreement(program, compile_)
                if message is not None:
                    break
        else:
            self.fail("no compute program with 6 statements or more shows a miscompiled floor")
        small, _ = shrink(program, compile_, message, before_each=torch._dynamo.reset)
        # What reads the floor's value may stay: the check that fails (exact or rounded) is kept.
        self.assertLessEqual(len(small.statements), 5, small.source())
        self.assertIn(".floor()", small.function_source())


class ToyEntryTests(unittest.TestCase):
    def tearDown(self):
        torch._dynamo.reset()

    def test_a_toy_operation_is_drawn_and_judged_with_no_other_edit(self):
        """One Op added to VOCABULARY, as a contributor adds one, is drawn, kept and judged:
        the shared builder, the program model and the judge need nothing else."""
        toy = compute.Op("pointwise", "torch.deg2rad({x})")
        with mock.patch.object(compute, "VOCABULARY", (*compute.VOCABULARY, toy)):
            # Generated inside the patch: only then can a seed's program use it.
            program = next((program for program in map(compute.generate, range(300))
                            if "torch.deg2rad(" in program.function_source()), None)
        self.assertIsNotNone(program, "no compute program of seeds 0-299 uses the toy operation")
        self.assertIs(program.kind, generator.Kind.COMPUTE)
        self.assertEqual(generator.parse(program.source()), program)
        self.assertTrue(generator.deterministic(program))
        self.assertIsNone(disagreement(program, _compile_with("aot_eager")))


if __name__ == "__main__":
    unittest.main()
