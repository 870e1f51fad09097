"""The mutants (test/harness/faulty_backends/mutants.py) and scripts/mutation_score.py,
without a run of the suite: each operator makes a mutant that differs from eager on the
probes for some seed; a mutant rewrites exactly one node of a graph, the same node for the
same seed; the unmutated pipeline computes what eager computes, bit for bit, on every
probe (so "differs from its base" is "differs from eager"); a mutant's spec resolves as a
backend; the script's argument errors are one line with exit code 2.

The score itself takes whole runs of the suite (an hour or more):
``python scripts/mutation_score.py --seeds 0-1`` (CONTRIBUTING.md, "Mutation score").
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import tempfile
import unittest
from pathlib import Path

import torch
from torch.fx.experimental.proxy_tensor import make_fx

from harness.axes.backends import resolve_backend
from test.harness.faulty_backends import mutant_probes, mutants

# Its own seconds (test/harness/budgets.py): 14 s measured 2026-11-29 on an idle machine,
# most of it the unmutated pipeline compiling every probe.
TIME_BUDGET_S = 30

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "mutation_score.py"
SEEDS = range(3)


def _program(x: torch.Tensor, y: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> tuple:
    # Something for every operator: floating and integer results, non-commutative ops with
    # same-shaped operands, dims and an index on square matrices, graph inputs.
    difference = torch.softmax(x, -1) - y
    product = (x @ y).sum(0)
    return difference * 1e-39, product, a * 3 + b, x[1] * 2


def _traced() -> torch.fx.GraphModule:
    """A fresh ATen graph of _program with fake values on its nodes, as AOTAutograd gives one."""
    inputs = (torch.randn(3, 3), torch.randn(3, 3), torch.randint(-10, 10, (4,)), torch.randint(-10, 10, (4,)))
    return make_fx(_program, tracing_mode="fake")(*inputs)


def _signature(node: torch.fx.Node) -> str:
    return str(torch.fx.node.map_arg((node.args, node.kwargs), lambda arg: arg.name))


def _rewritten(gm: torch.fx.GraphModule, before: dict[str, str]) -> set[str]:
    """The original nodes a rewrite changed: a node whose arguments changed, or, where its
    only change is reading new nodes in place of an original one, that original one."""
    new = {node for node in gm.graph.nodes if node.name not in before}

    def origins(node: torch.fx.Node) -> set[str]:
        if node not in new:
            return {node.name}
        return set().union(*(origins(arg) for arg in node.all_input_nodes))

    touched: set[str] = set()
    for node in gm.graph.nodes:
        if node in new or _signature(node) == before[node.name]:
            continue
        read = [arg for arg in node.all_input_nodes if arg in new and len(origins(arg)) == 1]
        restored = str(torch.fx.node.map_arg((node.args, node.kwargs),
                                             lambda arg: next(iter(origins(arg))) if arg in read else arg.name))
        touched |= set().union(*(origins(arg) for arg in read)) if restored == before[node.name] else {node.name}
    return touched


class OperatorTests(unittest.TestCase):
    def test_each_operator_rewrites_exactly_one_node(self):
        for operator in mutants.OPERATORS:
            for seed in SEEDS:
                with self.subTest(operator=operator, seed=seed):
                    gm = _traced()
                    before = {node.name: _signature(node) for node in gm.graph.nodes}
                    mutation = mutants.mutate(gm, operator, seed)
                    self.assertIsNotNone(mutation, "no node of the program can be rewritten")
                    self.assertLessEqual(set(before), {node.name for node in gm.graph.nodes}, "a node was removed")
                    chosen = mutation.site.split(" = ")[0]
                    self.assertEqual(_rewritten(gm, before), {chosen})

    def test_the_same_seed_picks_the_same_node_and_seeds_differ(self):
        for operator in mutants.OPERATORS:
            with self.subTest(operator=operator):
                picked = [mutants.mutate(_traced(), operator, seed).site for seed in range(8)]
                # Traced again, so only the graph's description, not an object id, decides.
                self.assertEqual(picked[:2], [mutants.mutate(_traced(), operator, seed).site for seed in range(2)])
                self.assertGreater(len(set(picked)), 1, f"eight seeds, one node: {picked[0]}")

    def test_a_graph_without_an_eligible_node_runs_as_traced(self):
        gm = make_fx(lambda x: x.sin(), tracing_mode="fake")(torch.randn(3))
        code = gm.code
        self.assertIsNone(mutants.mutate(gm, "truncate_int", 0))
        self.assertEqual(gm.code, code)

    def test_each_operator_makes_a_mutant_that_differs_from_eager_for_some_seed(self):
        for operator in mutants.OPERATORS:
            with self.subTest(operator=operator):
                found = [mutant_probes.first_difference(mutants.mutant(mutants.mutant_name(operator, seed)))
                         for seed in SEEDS]
                self.assertTrue(any(found), "equivalent on every probe for every seed")

    def test_the_unmutated_pipeline_is_eager_on_every_probe(self):
        control = mutants.mutant(mutants.CONTROL)
        for probe in mutant_probes.PROBES:
            with self.subTest(probe=probe.name):
                self.assertIsNone(mutant_probes.run_probe(probe, control))
        self.assertEqual(control.mutations, [])

    def test_a_mutant_spec_resolves_as_a_backend(self):
        backend = resolve_backend(mutants.spec("swap_args_s4"))
        self.assertEqual((backend.name, backend.compiler_fn()), ("swap_args_s4", mutants.mutant("swap_args_s4")))
        self.assertEqual(resolve_backend(mutants.spec("perturb_s0_inductor")).compiler_fn().base, "inductor")
        for name in ("perturb", "perturb_s", "nope_s0", "stale_input_s0_inductor"):
            with self.subTest(name=name), self.assertRaises(AttributeError):
                getattr(mutants, name)


def _script():
    spec = importlib.util.spec_from_file_location("mutation_score", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class ScriptArgumentTests(unittest.TestCase):
    def test_bad_arguments_exit_2_with_one_line(self):
        script = _script()
        with tempfile.NamedTemporaryFile() as not_a_folder:
            cases = {
                "no seeds": [],
                "seeds not numbers": ["--seeds", "a-b"],
                "a range backwards": ["--seeds", "3-1"],
                "an unknown operator": ["--seeds", "0", "--operators", "perturb,nope"],
                "an unknown base": ["--seeds", "0", "--backend-base", "tvm"],
                "an operator the base cannot run": ["--seeds", "0", "--backend-base", "inductor",
                                                    "--operators", "stale_input"],
                "no workers": ["--seeds", "0", "-j", "0"],
                "a report dir under a file": ["--seeds", "0", "--report-dir", f"{not_a_folder.name}/reports"],
            }
            for case, argv in cases.items():
                with self.subTest(case=case):
                    stderr, stdout = io.StringIO(), io.StringIO()
                    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(stdout):
                        try:
                            code = script.main(argv)
                        except SystemExit as exit:
                            code = exit.code
                    self.assertEqual(code, 2)
                    self.assertEqual(len(stderr.getvalue().strip().splitlines()), 1, stderr.getvalue())
                    self.assertTrue(stderr.getvalue().startswith("mutation_score.py: error: "), stderr.getvalue())
                    self.assertEqual(stdout.getvalue(), "")

    def test_seeds_and_operators_are_read_as_documented(self):
        script = _script()
        args = script._parse(["--seeds", "0-2,5,1", "--operators", "perturb, swap_args"])
        self.assertEqual((args.seeds, args.operators), ([0, 1, 2, 5], ["perturb", "swap_args"]))
        self.assertNotIn("stale_input", script._parse(["--seeds", "0", "--backend-base", "inductor"]).operators)


if __name__ == "__main__":
    unittest.main()
