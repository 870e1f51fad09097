"""Generated programs find the faulty backends a program can show: within the default
budget, each such fault makes some program disagree with eager, and a run reports the
disagreement shrunk, with a repro."""

from __future__ import annotations

import re
import unittest

import torch
import torch._dynamo

from harness.fuzz import compute, programs
from harness.fuzz.differential import disagreement
from test.dynamo.test_generated_programs import DEFAULT_BUDGET
from test.harness import faulty_backends
from test.harness import shared_runs
from test.harness.test_generated_programs import _compile_with

# Its own seconds (test/harness/budgets.py, shared runs apart): 13 s measured 2026-11-29, and about
# 35 s more for the compute programs (16 programs under 7 faults), measured under load.
TIME_BUDGET_S = 60

# The faults a generated program can show (the others are about guards, RNG, global state,
# subclasses or specific operators, which these programs do not touch by design).
FOUND_BY_PROGRAMS = ("wrong_values", "upcasts_outputs", "copies_outputs", "detaches_outputs", "assumes_contiguous",
                     "drops_input_mutations", "runs_graph_twice", "wrong_gradients", "reuses_output_buffers",
                     "writes_results_into_inputs")

# The faults the default budget's compute programs show, each in two programs or more (the
# op sweep catches them too). The faults of one kind of value (negative zero, subnormals, wide
# integers: about one compute program in seven meets each) are the nightly budget's, and the
# value-domain tests' (test_value_domain_faults.py).
FOUND_BY_COMPUTE = ("wrong_values", "wrong_gradients", "perturbs_reductions", "computes_in_bfloat16",
                    "loses_duplicate_writes", "upcasts_outputs", "detaches_outputs")


SHRUNK_RUN = shared_runs.DEFAULT.part(
    ["test.harness.faulty_backends:drops_input_mutations"],
    ["test.dynamo.test_generated_programs.GeneratedProgramTests_drops_input_mutations.test_seed_0013"])


class FaultsFoundTests(unittest.TestCase):
    def tearDown(self):
        torch._dynamo.reset()

    def _finding(self, chosen: list, faults: tuple[str, ...]) -> dict[str, list[int]]:
        """For each fault, the seeds of the ``chosen`` programs that disagree under it."""
        found: dict[str, list[int]] = {}
        for name in faults:
            compile_ = _compile_with(getattr(faulty_backends, name))
            found[name] = []
            for program in chosen:
                torch._dynamo.reset()
                if disagreement(program, compile_) is not None:
                    found[name].append(program.seed)
        return found

    def test_each_fault_is_found_by_the_default_budget(self):
        chosen = [programs.generate(seed) for seed in range(DEFAULT_BUDGET)]
        for name, seeds in self._finding(chosen, FOUND_BY_PROGRAMS).items():
            with self.subTest(fault=name):
                self.assertTrue(seeds, f"no program of the default budget ({DEFAULT_BUDGET}) disagrees under {name}")

    def test_each_fault_is_found_by_the_default_compute_budget(self):
        """Compute programs find the faults of values, dtypes and gradients, each in at least
        two of the default budget's programs: the class, not one program that happens to show it."""
        chosen = [compute.generate(seed) for seed in range(DEFAULT_BUDGET)]
        for name, seeds in self._finding(chosen, FOUND_BY_COMPUTE).items():
            with self.subTest(fault=name):
                self.assertGreaterEqual(len(seeds), 2, f"compute programs of the default budget that disagree under "
                                                       f"{name}: {seeds}")

    def test_a_failing_program_is_reported_shrunk_with_a_repro(self):
        """Through the runner: the reason names the check, the failure shows the shrunk
        program, and the problem's repro holds the shrunk program's graph."""
        (test,) = SHRUNK_RUN.tests()
        self.assertEqual(test["outcome"], "FAIL", SHRUNK_RUN.describe())
        self.assertRegex(test["reason"], "generated program disagrees with eager: inputs after the call")
        self.assertIn("shrunk from 4 to 1 statements", test["details"])
        self.assertTrue((SHRUNK_RUN.report_dir / "repros" / f"{test['problem']}.py").exists())
        self.assertRegex(SHRUNK_RUN.completed.stdout, re.escape("repro: python ") + r"\S+repros/\S+\.py")


if __name__ == "__main__":
    unittest.main()
