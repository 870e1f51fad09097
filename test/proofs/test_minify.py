"""--minify: a mismatch in one operator of a large graph shrinks to that operator."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

import torch
import torch.nn.functional as F

from harness.measure.counters import CompileCounter
from harness.run import minify
from test.harness.cli import REPO_ROOT, spawn_cli
from test.harness.faulty_backends import wrong_attention

# Its own seconds (test/harness/budgets.py): 74 s measured alone 2026-11-29 (the repro run
# against aot_eager finds no difference and runs the op-sweep scenario itself: 30 s of it).
TIME_BUDGET_S = 150

FAULTY = "test.harness.faulty_backends:wrong_attention"


def _block(x, w1, w2):
    # About 60 operations around one attention call, as in a transformer layer.
    for _ in range(6):
        x = torch.tanh(x @ w1) * 0.5 + x.sin() - x.cos() * 0.1
    q = k = v = x.reshape(1, 8, 2, 8).transpose(1, 2)  # batch, heads, sequence, head size
    x = F.scaled_dot_product_attention(q, k, v).transpose(1, 2).reshape(8, 16)
    for _ in range(6):
        x = torch.relu(x @ w2) + x.exp().clamp(max=2.0) - x.abs().sqrt()
    return x.sum(dim=-1)


class ShrinkTests(unittest.TestCase):
    def test_one_wrong_operator_in_a_large_graph_shrinks_to_it(self):
        torch.manual_seed(0)
        inputs = [torch.randn(8, 16), torch.randn(16, 16) / 4, torch.randn(16, 16) / 4]
        counter = CompileCounter()
        torch._dynamo.reset()
        torch.compile(_block, backend=counter)(*inputs)
        gm, example = counter.graphs[0], counter.example_inputs[0]
        self.assertGreaterEqual(minify._ops(gm), 50)
        found = minify.disagreement(gm, list(example), wrong_attention)
        self.assertEqual(found, "output 0: values differ")
        self.assertEqual(minify.disagreement(gm, list(example), "aot_eager"), "")
        small, small_inputs = minify.shrink(
            gm, list(example), lambda graph, values: minify._kind(minify.disagreement(graph, values, wrong_attention))
            == "values differ")
        self.assertLessEqual(minify._ops(small), 3)
        self.assertIn("scaled_dot_product_attention", small.code)


class MinifyCommandTests(unittest.TestCase):
    """--minify hands its work to a child process that writes to the command's own output:
    only a command in a process of its own has it captured."""

    def test_writes_a_repro_that_fails_on_the_backend_only(self):
        test_id = "test.dynamo.test_op_sweep.OpSweepTests_wrong_attention.test_op_nn_functional_scaled_dot_product_attention"
        with tempfile.TemporaryDirectory() as report_dir, tempfile.TemporaryDirectory() as elsewhere:
            done = spawn_cli("--backend", FAULTY, "--minify", test_id, "--report-dir", report_dir)
            self.assertEqual(done.returncode, 0, done.stdout[-3000:] + done.stderr[-3000:])
            self.assertRegex(done.stdout, r"minimized to [123] operation")
            repro = next(Path(report_dir, "repros").glob("minified-*.py"))
            # The faulty backend importable, as a maintainer's installed backend is; nothing else of the suite.
            installed = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
            shown = subprocess.run([sys.executable, str(repro)], cwd=elsewhere, capture_output=True, text=True,
                                   env=installed)
            self.assertEqual(shown.returncode, 1, shown.stdout + shown.stderr[-2000:])
            fixed = subprocess.run([sys.executable, str(repro), "--backend", "aot_eager"], cwd=elsewhere,
                                   capture_output=True, text=True, env=installed)
            self.assertEqual(fixed.returncode, 0, fixed.stdout + fixed.stderr[-2000:])

    def test_an_unknown_test_id_is_one_line_and_exit_2(self):
        done = spawn_cli("--backend", FAULTY, "--minify", "test.dynamo.nope.Nope_wrong_attention.test_x")
        self.assertEqual(done.returncode, 2)
        self.assertIn("--minify test.dynamo.nope.Nope_wrong_attention.test_x: not one test", done.stderr)


if __name__ == "__main__":
    unittest.main()
