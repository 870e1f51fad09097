"""The program generator (harness.fuzz.programs), the differential check and the shrinker
(harness.fuzz.differential): seeded, valid in eager, able to fail, and small when they fail.

The scenario family's proof, that the default budget of test/dynamo/test_generated_programs.py
finds each faulty backend a program of views, writes and aliasing can show, is
test/proofs/test_generated_faults.py.
"""

from __future__ import annotations

import unittest
from unittest import mock

import torch
import torch._dynamo

from harness.fuzz import generator, programs
from harness.fuzz.differential import check_of, disagreement, shrink
from test.harness import faulty_backends

# Its own seconds (test/harness/budgets.py): 12 s measured 2026-11-29.
TIME_BUDGET_S = 30

def _compile_with(backend):
    def compile_(function):
        return torch.compile(function, backend=backend)

    return compile_


def _breaks_sine(gm, example_inputs):
    """Replaces every sin in the graph by cos: a one-op miscompile for the shrinker."""
    for node in gm.graph.nodes:
        if node.target in (torch.sin, torch.ops.aten.sin.default):
            node.target = torch.cos
    gm.recompile()
    return gm.forward


class GeneratorTests(unittest.TestCase):
    def setUp(self):
        self.programs = [programs.generate(seed) for seed in range(60)]

    def test_a_seed_always_gives_the_same_program(self):
        self.assertEqual(programs.generate(7).source(), programs.generate(7).source())
        self.assertEqual(len({program.source() for program in self.programs}), len(self.programs))

    def test_a_program_survives_its_own_source(self):
        for program in self.programs:
            self.assertEqual(generator.parse(program.source()), program)

    def test_programs_run_eagerly_and_deterministically(self):
        for program in self.programs:
            with self.subTest(seed=program.seed):
                self.assertTrue(2 <= len(program.statements) <= generator.MAX_STATEMENTS)
                self.assertTrue(generator.deterministic(program))

    def test_programs_reach_what_the_family_is_about(self):
        text = "\n".join(program.source() for program in self.programs)
        for construct in (r"\] = ", r"\.(add|mul|copy|zero)_\(", r"\.transpose\(|\.t\(\)", r"\.expand", r"view\(torch",
                          r"as_strided", r"unbind|split|chunk", r"contiguous|reshape|\.to\(", "no_grad",
                          r"requires_grad_\(\)", r"base0\.clone\(\)", r"= base0\[|base0\.transpose"):
            self.assertRegex(text, construct)
        self.assertTrue(any(program.backward for program in self.programs))
        # Outputs that alias an input or each other.
        self.assertTrue(any(set(program.outputs) & set(program.params) or len(set(program.outputs)) < len(program.outputs)
                            for program in self.programs))


class DifferentialTests(unittest.TestCase):
    def tearDown(self):
        torch._dynamo.reset()

    def test_correct_backends_agree(self):
        for seed in range(10):
            self.assertIsNone(disagreement(programs.generate(seed), _compile_with("aot_eager")))

    def test_writes_through_expand_views_are_kept_out(self):
        # Before that limit (FRONTEND_LIMITS) these seeds wrote through x.expand_as(x) onto NaN
        # and infinities, which AOTAutograd replays wrongly (pytorch#197448): aot_eager disagreed.
        for seed in (844, 941):
            torch._dynamo.reset()
            program = programs.generate(seed)
            self.assertIn(".expand_as(", program.function_source())
            self.assertIsNone(disagreement(program, _compile_with("aot_eager")))

    def test_a_dropped_input_write_is_shrunk_to_the_write(self):
        program = programs.generate(13)
        compile_ = _compile_with(faulty_backends.drops_input_mutations)
        message = disagreement(program, compile_)
        self.assertRegex(message, "inputs after the call")
        small, small_message = shrink(program, compile_, message, before_each=torch._dynamo.reset)
        self.assertEqual(check_of(small_message), check_of(message))
        self.assertEqual(len(small.statements), 1, small.source())
        self.assertTrue(generator.deterministic(small))

    def test_a_miscompiled_op_is_shrunk_to_its_statement(self):
        compile_ = _compile_with(_breaks_sine)
        for seed in range(300):
            program = programs.generate(seed)
            if len(program.statements) >= 8 and "torch.sin(" in program.function_source():
                torch._dynamo.reset()
                message = disagreement(program, compile_)
                if message is not None:
                    break
        else:
            self.fail("no generated program with 8 statements or more shows a miscompiled sin")
        small, _ = shrink(program, compile_, message, before_each=torch._dynamo.reset)
        self.assertLessEqual(len(small.statements), 3, small.source())
        self.assertIn("torch.sin(", small.function_source())


def _toy_statement(builder: programs.ViewBuilder) -> str | None:
    """A toy kind of statement: the rule a contributor writes for one."""
    name = builder.pick(lambda name: builder.values[name].dtype.is_floating_point)
    return None if name is None else f"{builder.fresh()} = torch.deg2rad({name})"


class ToyEntryTests(unittest.TestCase):
    def tearDown(self):
        torch._dynamo.reset()

    def test_a_toy_statement_kind_is_drawn_and_checked_with_no_other_edit(self):
        """One kind of statement added to STATEMENT_KINDS with its rule, as a contributor adds
        one, is drawn, kept (under no_grad too) and checked: the shared builder, the program
        model and the differential check need nothing else."""
        with mock.patch.dict(programs.STATEMENT_KINDS, {"toy": (40, True)}), \
                mock.patch.object(programs.ViewBuilder, "_toy", _toy_statement, create=True):
            chosen = [programs.generate(seed) for seed in range(10)]
        using = [program for program in chosen if "torch.deg2rad(" in program.function_source()]
        self.assertTrue(using, "no program of seeds 0-9 uses the toy statement")
        self.assertTrue(any(statement.no_grad and "deg2rad" in statement.code
                            for program in using for statement in program.statements))
        for program in using[:3]:
            with self.subTest(seed=program.seed):
                self.assertIs(program.kind, generator.Kind.VIEWS)
                self.assertEqual(generator.parse(program.source()), program)
                self.assertTrue(generator.deterministic(program))
                torch._dynamo.reset()
                self.assertIsNone(disagreement(program, _compile_with("aot_eager")))
