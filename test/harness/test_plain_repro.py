"""The plain-torch repro (harness/repros/plain.py): a graph Dynamo handed a backend,
recorded as the suite records it (harness.measure.repro), rendered as a short script that
needs torch and the backend only, run from an empty directory against PyTorch's reference
(exit 0) and against faulty backends of a module beside it (exit 1), and one that cannot run
its check (exit 3)."""

from __future__ import annotations

import ast
import concurrent.futures
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

import torch

from harness.measure.repro import replayable
from harness.project import layout
from harness.repros import plain as plain_repro, reduce
from harness.report import problems

# Its own seconds (test/harness/budgets.py): 34 s measured 2026-12-07 on an idle machine (fifteen tests:
# scripts that each import torch, and reductions in this process).
TIME_BUDGET_S = 80
MAX_LINES = 40

# The backends under test, as a package a maintainer has installed: a module beside the script.
FAULTY = textwrap.dedent('''
    import torch


    def wrong_values(gm, example_inputs):
        def run(*args):
            return [out + 1 for out in gm(*args)]
        return run


    def drops_mutations(gm, example_inputs):
        return lambda *args: gm(*[arg.clone() if isinstance(arg, torch.Tensor) else arg for arg in args])


    def refuses(gm, example_inputs):
        raise AssertionError("Please convert all Tensors to FakeTensors first")


    def wrong_pow(gm, example_inputs):
        if not any(node.target is torch.pow for node in gm.graph.nodes):
            return gm.forward
        return lambda *args: [out + 1 for out in gm(*args)]


    def wrong_pow_output(gm, example_inputs):
        outputs = next(node for node in gm.graph.nodes if node.op == "output").args[0]
        wrong = [getattr(output, "target", None) is torch.pow for output in outputs]
        return lambda *args: [out + 1 if bad else out for out, bad in zip(gm(*args), wrong)]


    class _Refused(torch.autograd.Function):
        @staticmethod
        def forward(ctx, value):
            return value.clone()

        @staticmethod
        def backward(ctx, grad):
            raise RuntimeError("no backward for this graph")


    def backward_raises(gm, example_inputs):
        return lambda *args: [_Refused.apply(out) for out in gm(*args)]


    def refuses_views(gm, example_inputs):
        if any(isinstance(arg, torch.Tensor) and arg._is_view() for arg in example_inputs):
            raise AssertionError("sources must not be empty for symbol s0")
        return gm.forward


    def detaches_and_adds(gm, example_inputs):
        return lambda *args: [out.detach() + 1 for out in gm(*args)]
''')


def _recorded(function, *args) -> dict:
    """The graph Dynamo hands a backend for ``function(*args)``, as the suite saves it."""
    graphs = []

    def keep(gm, example_inputs):
        graphs.append(replayable(gm, example_inputs))
        return gm

    torch._dynamo.reset()
    torch.compile(function, backend=keep, fullgraph=True)(*args)
    assert len(graphs) == 1 and graphs[0] is not None, graphs
    return graphs[0]


def _pow_of_a_0d_exponent(x, exponent):
    return torch.pow(x, exponent)


def _adds_into_its_input(x):
    x.add_(1)
    return x * 2


def _pow_among_others(x, y):
    scaled = torch.sin(x) * 2
    return torch.pow(scaled, y) + x.sum(), scaled.cos()


def _first_row_squeezed(x):
    x[:1].squeeze_(0)
    return x * 2


def _ops_side_by_side(a, b, c, d, e, f, g):
    return torch.exp(a), torch.erf(b), torch.sin(c), torch.pow(d, e), torch.cos(f), torch.abs(g)


def _adds_zeros_on_its_device(x):
    return x + torch.zeros(3, device=x.device)


class PlainReproTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pow = _recorded(_pow_of_a_0d_exponent, torch.randn(4, 5, 5), torch.tensor(2.5, dtype=torch.float64))
        cls.view = _recorded(_first_row_squeezed, torch.arange(6.0).view(2, 3))
        cls.mutation = _recorded(_adds_into_its_input, torch.randn(3, 4))
        cls.gradients = _recorded(_pow_among_others, torch.randn(4, 5, requires_grad=True), torch.tensor(2.0))
        cls.directory = tempfile.TemporaryDirectory()  # away from the suite: nothing of it importable
        cls.addClassCleanup(cls.directory.cleanup)
        (Path(cls.directory.name) / "faulty.py").write_text(FAULTY)

    def script(self, name: str, graph: dict, backend: str, backward: bool = False, kind: str | None = None) -> Path:
        text = plain_repro.render(graph, backend, f"{name} under torch.compile", backward=backward, kind=kind)
        self.assertIsNotNone(text)
        self.assertLessEqual(len(text.splitlines()), MAX_LINES, text)
        for machine_path in (str(layout.SUITE_ROOT), os.getcwd(), self.directory.name, "/work/"):
            self.assertNotIn(machine_path, text)
        self.assertNotRegex(text, r"\b(harness|test\.|dynamo_aot_suite|dynamo-aot-suite)\b")
        path = Path(self.directory.name) / f"{name}.py"
        path.write_text(text)
        return path

    def run_script(self, path: Path, *args: str) -> subprocess.CompletedProcess:
        environment = {"PATH": "/usr/bin:/bin", **{key: os.environ[key] for key in ("TORCHINDUCTOR_CACHE_DIR",)
                                                   if key in os.environ}}
        return subprocess.run([sys.executable, str(path), *args], cwd=self.directory.name, capture_output=True,
                              text=True, timeout=120, env=environment)

    def test_the_graph_is_a_function_of_its_ops(self):
        self.assertIn("def f(x, exponent):\n    return torch.pow(x, exponent)\n",
                      plain_repro.render(self.pow, "x", "t"))
        # Dynamo writes the product as an operator or a method depending on what ran before in the process.
        self.assertRegex(plain_repro.render(self.mutation, "x", "t"),
                         r"def f\(x\):\n    x.add_\(1\)\n    return (x \* 2|x.mul\(2\))\n")
        self.assertIsNone(plain_repro.function_source("def helper(a):\n    return a\n"))
        self.assertIn("x[:1].squeeze_(0)", plain_repro.render(self.view, "x", "t"))  # FX's slice(None, 1, None)

    def test_a_check_that_named_an_attribute_compares_it_too(self):
        # assert_close compares values, dtypes and shapes; requires_grad and strides need a line of their own.
        for kind in ("requires_grad", "stride"):
            text = plain_repro.render(self.pow, "aot_eager", "t", kind=kind)
            ast.parse(text)
            self.assertIn(f'sys.exit(f"output {kind}: ', text)
            self.assertLessEqual(len(text.splitlines()), MAX_LINES, text)

    def test_inputs_keep_shape_stride_dtype_and_small_values(self):
        source = plain_repro.tensor_source
        self.assertEqual(source({"shape": [], "stride": [], "dtype": "torch.float64", "values": 2.0}),
                         "torch.tensor(2.0, dtype=torch.float64)")
        self.assertEqual(source({"shape": [2, 3], "stride": [0, 1], "dtype": "torch.int64", "range": [0, 9]}),
                         "torch.randint(0, 10, (1, 3)).expand(2, 3)")
        self.assertEqual(source({"shape": [2, 2], "stride": [1, 2], "dtype": "torch.float32", "values": [[0.1, 2.0],
                                                                                                         [3.0, 4.0]],
                                 "requires_grad": True}),
                         "torch.empty_strided((2, 2), (1, 2), dtype=torch.float32).copy_(torch.tensor([[0.1, 2.0], "
                         "[3.0, 4.0]])).requires_grad_()")

    def test_a_graph_that_names_a_device_is_replayed_and_plain(self):
        # FX writes a torch.device as device(type='cpu'): the LSTM's graphs on 2.9 had no repro for it.
        graph = _recorded(_adds_zeros_on_its_device, torch.randn(3))
        self.assertIn("device(type='cpu')", graph["code"])
        text = plain_repro.render(graph, "aot_eager", "t")
        self.assertIn("torch.device(type='cpu')", text)
        self.assertEqual(reduce.run(text), (0, "torch.compile agrees with eager\n"))

    def test_an_input_that_was_a_view_is_one(self):
        # Dynamo guards a view and its base apart: a problem may show on a view only.
        self.assertTrue(self.view["inputs"][0]["view"])
        self.assertFalse(self.pow["inputs"][0]["view"])
        self.assertIn("torch.tensor([0.0, 1.0, 2.0, 3.0, 4.0, 5.0]).view(2, 3)", plain_repro.render(self.view, "x", "t"))
        strided = {"shape": [2, 2], "stride": [1, 2], "dtype": "torch.float32", "values": [[1.0, 2.0], [3.0, 4.0]],
                   "view": True, "requires_grad": True}
        made = eval(plain_repro.tensor_source(strided), {"torch": torch})
        self.assertTrue(made._is_view() and made.requires_grad)
        self.assertEqual((made.stride(), made.tolist()), ((1, 2), [[1.0, 2.0], [3.0, 4.0]]))

    def test_the_attribute_a_check_named_is_compared_before_values(self):
        # Its values may differ too, another problem: the script prints the one it was made for.
        path = self.script("requires_grad_lost", self.gradients, "faulty:detaches_and_adds", kind="requires_grad")
        result = self.run_script(path)
        self.assertEqual(result.returncode, 1, result.stderr[-2000:])
        self.assertIn("output requires_grad: [False, False], eager gives [True, True]", result.stdout + result.stderr)

    def test_a_message_that_says_grad_is_not_a_difference_in_gradients(self):
        self.assertIsNone(problems.kind("RuntimeError: a leaf Variable that requires grad is being used in an "
                                        "in-place operation."))
        self.assertFalse(problems.needs_backward("AssertionError: True != False : grad mode after the call differs"))
        self.assertTrue(problems.needs_backward("AssertionError: gradient of input 0: values differ from eager"))
        self.assertEqual(problems.kind("AssertionError: False != True : grad of input 0: presence differs"), "grad")

    def test_a_backend_in_a_file_is_imported_by_its_name_not_its_path(self):
        lines, expression = plain_repro.backend_source("/home/someone/backends/mine.py:Compiler()")
        self.assertEqual(lines[-1], "from mine import Compiler")
        self.assertEqual(expression, "Compiler()")
        self.assertNotIn("/home", "\n".join(lines))

    def test_exit_0_where_the_graphs_agree_1_where_the_problem_shows_3_where_it_cannot_check(self):
        cases = [  # script, arguments, exit code, what it prints
            (self.script("pow_wrong", self.pow, "faulty:wrong_values"), (), 1, "output: values differ from eager"),
            (self.script("pow_wrong", self.pow, "faulty:wrong_values"), ("--backend", "aot_eager"), 0, "agrees"),
            (self.script("mutation_lost", self.mutation, "faulty:drops_mutations"), (), 1,
             "inputs after the call: values differ from eager"),
            (self.script("mutation_lost", self.mutation, "faulty:drops_mutations"), ("--backend", "aot_eager"), 0,
             "agrees"),
            (self.script("pow_refused", self.pow, "faulty:refuses"), (), 1,
             "the compiled call raised AssertionError('Please convert all Tensors to FakeTensors first')"),
            # The backend's package is not installed: no check ran, and the control says so too.
            (self.script("not_installed", self.pow, "no_such_backend_package:compiler"), ("--backend", "aot_eager"),
             plain_repro.CANNOT_CHECK, ""),
            (self.script("not_registered", self.pow, "no_such_backend"), (), plain_repro.CANNOT_CHECK, ""),
        ]
        broken = {"code": "def forward(self, L_x_ : torch.Tensor):\n    l_x_ = L_x_\n"
                          "    mm = torch.mm(l_x_, torch.ones(3, 1))\n    return (mm,)\n",
                  "inputs": [dict(self.mutation["inputs"][0], shape=[2, 2], stride=[2, 1],
                                  values=[[1.0, 2.0], [3.0, 4.0]])]}
        cases.append((self.script("eager_raises", broken, "aot_eager"), (), plain_repro.CANNOT_CHECK, ""))
        cases.append((self.script("view_refused", self.view, "faulty:refuses_views"), (), 1,
                      "the compiled call raised AssertionError('sources must not be empty for symbol s0')"))
        cases.append((self.script("view_refused", self.view, "faulty:refuses_views"), ("--backend", "aot_eager"), 0,
                      "agrees"))
        cases.append((self.script("backward_raises", self.gradients, "faulty:backward_raises", backward=True), (), 1,
                      "backward raised RuntimeError('no backward for this graph')"))
        cases.append((self.script("backward_raises", self.gradients, "faulty:backward_raises", backward=True),
                      ("--backend", "aot_eager"), 0, "agrees"))
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            done = list(pool.map(lambda case: self.run_script(case[0], *case[1]), cases))
        for (path, args, code, printed), result in zip(cases, done):
            with self.subTest(script=path.name, args=args):
                self.assertEqual(result.returncode, code, result.stdout + result.stderr[-3000:])
                self.assertIn(printed, result.stdout + result.stderr)


class ReductionTests(unittest.TestCase):
    """harness/repros/reduce.py in this process: a graph of six operations whose one pow a faulty
    backend gets wrong, cut to that pow on smaller inputs while it still shows the problem."""

    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory()
        cls.addClassCleanup(cls.directory.cleanup)
        (Path(cls.directory.name) / "faulty.py").write_text(FAULTY)
        sys.path.insert(0, cls.directory.name)
        cls.addClassCleanup(sys.path.remove, cls.directory.name)
        graph = _recorded(_pow_among_others, torch.randn(4, 5, requires_grad=True), torch.tensor(2.0))
        cls.lines = []
        cls.reduction = reduce.Reduction({"id": "p", "graphs": [graph], "backend": "faulty:wrong_pow",
                                          "outcome": "FAIL", "signature": "output: values differ from eager",
                                          "seconds": 60}, cls.lines.append)
        cls.reduction.reduce()
        cls.before, cls.after = graph, cls.reduction.best

    def test_the_graph_is_cut_to_the_op_the_backend_gets_wrong(self):
        self.assertEqual(reduce.ops(self.before), 6, self.before["code"])  # sin, mul, pow, sum, add, cos
        self.assertEqual(reduce.ops(self.after), 1, self.after["code"])
        self.assertIn("torch.pow(", self.after["code"])
        self.assertEqual(self.lines[-1]["steps"][1:3], ["outputs: 2 to 1", "PyTorch's FX minifier: 5 operations to 1"])

    def test_a_graph_of_many_outputs_is_cut_to_the_one_that_differs_in_a_few_scripts(self):
        # An op sweep's batch: ops side by side, each its own inputs; the comparison names the output.
        graph = _recorded(_ops_side_by_side, *(torch.rand(3) for _ in range(7)))
        lines = []
        reduce.Reduction({"id": "s", "graphs": [graph], "backend": "faulty:wrong_pow_output", "outcome": "FAIL",
                          "signature": "output: values differ from eager", "seconds": 60}, lines.append).reduce()
        self.assertIn("outputs: 6 to 1", lines[-1]["steps"])
        outputs = next(line for line in lines if reduce._output_count(line["graph"]["code"]) == 1)
        self.assertLessEqual(outputs["tried"], 3, outputs)  # the graph, then the output the comparison named
        self.assertEqual(len(outputs["graph"]["inputs"]), 2, outputs["graph"])  # pow's two, not seven
        self.assertEqual(plain_repro.operations(lines[-1]["graph"]["code"]), ["pow"])

    def test_its_inputs_are_smaller_and_simpler(self):
        specs = [spec for spec in self.after["inputs"] if isinstance(spec, dict)]
        self.assertTrue(all(not spec["requires_grad"] for spec in specs), specs)
        self.assertLess(sum(reduce._numel(spec["shape"]) for spec in specs), 20, specs)
        self.assertTrue(any(step.startswith("inputs: ") for step in self.lines[-1]["steps"]), self.lines[-1])

    def test_the_reduced_script_shows_the_problem_and_the_reference_agrees(self):
        text = plain_repro.render(self.after, "faulty:wrong_pow", "t")
        code, printed = reduce.run(text)
        self.assertEqual(code, 1, printed)
        self.assertIn("output: values differ from eager", printed)
        self.assertEqual(reduce.run(text, "aot_eager")[0], 0)
        self.assertLessEqual(len(text.splitlines()), 25, text)

    def test_a_record_that_does_not_say_which_inputs_were_views_is_tried_with_views(self):
        # An earlier version's record: its generic replay made every input a view.
        graph = _recorded(_first_row_squeezed, torch.arange(6.0).view(2, 3))
        graph["inputs"] = [{key: value for key, value in spec.items() if key != "view"} for spec in graph["inputs"]]
        lines = []
        reduce.Reduction({"id": "v", "graphs": [graph], "backend": "faulty:refuses_views", "outcome": "ERROR",
                          "signature": "AssertionError: sources must not be empty for symbol s96", "seconds": 20},
                         lines.append).reduce()
        self.assertTrue(lines and lines[-1]["graph"]["inputs"][0]["view"], lines)
        self.assertIn(").view(", plain_repro.render(lines[-1]["graph"], "faulty:refuses_views", "t"))

    def test_a_graph_that_does_not_show_it_is_not_kept(self):
        lines = []
        reduce.Reduction({"id": "q", "graphs": [self.before], "backend": "aot_eager", "outcome": "FAIL",
                          "signature": "output: values differ from eager", "seconds": 5}, lines.append).reduce()
        self.assertEqual(lines, [])


if __name__ == "__main__":
    unittest.main()
