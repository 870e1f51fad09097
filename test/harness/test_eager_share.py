"""harness/measure/eager_share.py: what counts, that measuring changes nothing, and the limit."""

from __future__ import annotations

import os
import unittest
from unittest import mock

import torch

from harness.measure import eager_share, share_limit
from harness.testcase import expectations
from harness.measure.counters import CompileCounterWithBackend
from test.harness.cli import run_cli

# Its own seconds (test/harness/budgets.py): 6 s measured 2026-11-29.
TIME_BUDGET_S = 20


def _count(fn, *args) -> dict[str, int]:
    counter = eager_share.OpCounter()
    with counter:
        fn(*args)
    return dict(counter.ops)


@torch.library.custom_op("suite_share_test::double", mutates_args=())
def _double(x: torch.Tensor) -> torch.Tensor:
    return torch.mul(x, 2)


@_double.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


class CountingTests(unittest.TestCase):
    def test_compute_ops_count_and_views_allocation_and_copies_do_not(self):
        def program(x):
            y = torch.empty(4)
            y.copy_(x.view(4).t() if x.dim() == 1 else x.reshape(4))
            return torch.sin(y).sum(), y.zero_(), x.detach()

        self.assertEqual(_count(program, torch.randn(2, 2)), {"aten.sin": 1, "aten.sum": 1})

    def test_a_custom_op_is_looked_into(self):
        self.assertEqual(_count(torch.ops.suite_share_test.double, torch.randn(3)), {"aten.mul": 1})

    def test_a_higher_order_op_runs_under_the_counter(self):
        from torch._higher_order_ops.wrap import wrap

        x = torch.randn(3)
        counter = eager_share.OpCounter()
        with counter:
            result = wrap(lambda t: t.cos(), x)
        torch.testing.assert_close(result, x.cos())
        self.assertLessEqual(set(counter.ops), {"aten.cos"})  # seen where it runs its body in Python

    def test_the_graphs_own_ops_leave_inputs_rng_and_grad_mode_alone(self):
        def graph(x):
            torch._C._set_grad_enabled(False)
            x.add_(torch.randn(3))
            return (x * 2,)

        x = torch.zeros(3)
        torch.manual_seed(0)
        ops = eager_share.graph_ops(graph, [x]).forward
        self.assertEqual(dict(ops), {"aten.randn": 1, "aten.add_": 1, "aten.mul": 1})
        self.assertTrue(torch.is_grad_enabled())
        self.assertEqual(x.tolist(), [0.0, 0.0, 0.0])
        drawn = torch.randn(2)
        torch.manual_seed(0)
        torch.testing.assert_close(drawn, torch.randn(2))

    def test_an_input_written_in_place_is_copied_as_a_non_leaf(self):
        x = torch.randn(3, requires_grad=True).clone()
        self.assertEqual(dict(eager_share.graph_ops(lambda t: (t.trunc_(),), [x]).forward), {"aten.trunc_": 1})

    def test_a_graph_that_raises_is_not_measured(self):
        self.assertIsNone(eager_share.graph_ops(lambda x: x.view(5), [torch.zeros(3)]))

    def test_a_boxed_callable_stays_boxed(self):
        def boxed(args):
            return [args[0] + 1]

        boxed._boxed_call = True
        record = eager_share.GraphRecord(eager_share.graph_ops(lambda x: (x + 1,), [torch.zeros(2)]))
        probed = eager_share.probe(boxed, record)
        self.assertTrue(probed._boxed_call)
        self.assertEqual(probed([torch.zeros(2)])[0].tolist(), [1.0, 1.0])
        self.assertEqual([(one.label, one.share) for one in record.passes()], [("call 1", 1.0)])

    def test_the_graphs_own_backward_is_counted_without_touching_the_inputs(self):
        x, w = torch.randn(3), torch.randn(3, requires_grad=True)
        reference = eager_share.graph_ops(lambda a, b: ((a.sin() * b).sum(),), [x, w])
        self.assertEqual(dict(reference.forward), {"aten.sin": 1, "aten.mul": 1, "aten.sum": 1})
        self.assertEqual(reference.backward["aten.mul"], 1)  # d/dw: sin(x) times the expanded seed
        self.assertIsNone(w.grad)
        self.assertIsNone(eager_share.graph_ops(lambda a: (a.sin(),), [x]).backward)  # nothing needs a gradient

    def test_a_backward_node_that_raises_leaves_no_counter_on(self):
        class Fails(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                raise RuntimeError("no backward here")

        x = torch.randn(3, requires_grad=True)
        y = Fails.apply(x)
        counter = eager_share.count_backward(y, set())
        with self.assertRaisesRegex(RuntimeError, "no backward here"):
            y.sum().backward()
        self.assertFalse(torch._C._len_torch_dispatch_stack())
        eager_share.end_left_on()
        self.assertEqual(counter.runs, {})  # a run that did not finish is not one


class CompiledShareTests(unittest.TestCase):
    def measure(self, backend: str, backward: bool = False) -> dict:
        torch._dynamo.reset()
        counter = CompileCounterWithBackend(backend, measure_eager_share=True)
        compiled = torch.compile(lambda x, w: (torch.sin(x) @ w).relu(), backend=counter)
        x, w = torch.randn(4, 4), torch.randn(4, 4, requires_grad=True)
        # (Buffers donated to the backward would refuse retain_graph.)
        with torch.set_grad_enabled(backward), torch._functorch.config.patch(donated_buffer=False):
            out = compiled(x, w)
            torch.testing.assert_close(out, (torch.sin(x) @ w).relu())
            if backward:
                out.sum().backward(retain_graph=True)
                out.sum().backward()
        torch._dynamo.reset()
        return eager_share.summarize(counter.eager_share)

    def test_eager_runs_everything_eagerly(self):
        self.assertEqual(self.measure("eager")["share"], 1.0)

    def test_inductor_runs_only_its_extern_matmul_eagerly(self):
        measured = self.measure("inductor")
        self.assertEqual(measured["eager_op_counts"], {"aten.mm": 1})
        self.assertAlmostEqual(measured["share"], 1 / 3, places=3)

    def test_the_backward_is_measured_per_run(self):
        # Its backward: threshold_backward and one mm (only w needs a gradient), run twice.
        for backend, share in (("eager", 1.0), ("aot_eager", 1.0), ("inductor", 0.5)):
            with self.subTest(backend=backend):
                measured = self.measure(backend, backward=True)["backward"]
                self.assertEqual((measured["calls"], measured["graph_ops"], measured["share"]), (1, 2 * 2, share))

    def test_a_counter_that_does_not_measure_records_nothing(self):
        counter = CompileCounterWithBackend("eager")
        torch.compile(lambda x: x.sin(), backend=counter)(torch.randn(2))
        torch._dynamo.reset()
        self.assertEqual(counter.eager_share, [])

    def test_measuring_can_be_turned_off(self):
        with mock.patch.dict(os.environ, {share_limit.MEASURE_ENV: "0"}):
            self.assertFalse(CompileCounterWithBackend("eager", measure_eager_share=True).measure_eager_share)


class ReportTests(unittest.TestCase):
    def results(self):
        from harness.report.results import RunResults, TestResult

        def test(name: str, backend: str, share: float, ops: dict, **backward: float) -> TestResult:
            return TestResult(id=f"test.dynamo.{name}_{backend}", scenario=name, backend=backend, backend_spec=backend,
                              outcome="PASS", eager_share={"calls": 1, "graph_ops": 4, "eager_ops": sum(ops.values()),
                                                           "share": share, "max_call_share": share,
                                                           "worst_call_ops": ops, "eager_op_counts": ops,
                                                           **backward})

        return RunResults(run={"backends": [{"name": "mine", "spec": "mine"}]}, tests=[
            test("test_op_sweep.OpSweepTests.test_op_mm", "mine", 1.0, {"aten.mm": 4}),
            test("test_op_sweep.OpSweepTests.test_op_add", "mine", 0.0, {}),
            test("test_x.Family.test_a", "mine", 0.25, {"aten.mm": 1},
                 backward={"calls": 1, "graph_ops": 2, "eager_ops": 1, "share": 0.5})])

    def test_console_line_per_backend_with_the_sweeps_split(self):
        from harness.report import console

        text = console.summary(self.results())
        self.assertIn("eager share on mine: 3 tests measured, median 25%, 90th percentile 100%, 1 ran mostly eagerly; "
                      "most run eagerly: aten.mm x5; backward: 1 tests measured, median 50%, 0 ran mostly eagerly; "
                      "op sweep: 1 ops executed by the backend, 1 ran eagerly", text)

    def test_every_run_names_the_tests_whose_graphs_ran_wholly_eagerly(self):
        from harness.report import console, eager_share_table
        from harness.report.formats import markdown
        from harness.report.formats.format import RunReport

        line = ("silent fallback to eager on mine: 1 of 3 tests' graphs ran wholly on PyTorch's kernels in a compiled "
                "call: test_op_sweep.OpSweepTests.test_op_mm (aten.mm x4)")
        self.assertIn(line, console.summary(self.results()))
        self.assertIn(line.replace("_", "\\_").replace("(", "\\(").replace(")", "\\)"),
                      markdown.render(RunReport(self.results())))
        self.assertEqual(eager_share_table.fallback_json(self.results())["mine"]["wholly_eager"], 1)

    def test_a_backend_eager_throughout_is_not_cried_wolf_over(self):
        from harness.report import eager_share_table
        from harness.report.results import RunResults, TestResult

        tests = [TestResult(id=f"test.dynamo.t{index}_ref", scenario=f"t{index}", backend="ref", backend_spec="ref",
                            outcome="PASS", eager_share={"share": 1.0, "max_call_share": 1.0, "worst_call_ops": {}})
                 for index in range(3)]
        [line] = eager_share_table.fallback_lines(RunResults(run={"backends": [{"name": "ref", "spec": "ref"}]},
                                                             tests=tests))
        self.assertRegex(line, r"^silent fallback to eager on ref: not told apart: 3 of 3 tests' graphs ran wholly on "
                               r"PyTorch's kernels, and its median test ran 100% eagerly: .* as eager and aot_eager do")

    def test_html_shows_the_share_per_cell_and_per_swept_op(self):
        from harness.report.formats import html_report
        from harness.report.formats.format import RunReport

        page = html_report.render(RunReport(self.results()))
        self.assertIn('<small class="share">25%</small>', page)
        self.assertIn("executed by the backend (1): add; ran eagerly (1): mm", page)
        self.assertIn("eager share 25% (1 of 4 ops: aten.mm x1), backward 50%", page)


class FallbackDeclarationTests(unittest.TestCase):
    """--eager-fallback fail: a compiled call that ran wholly on PyTorch's kernels fails its test."""

    def test_a_graph_run_as_handed_over_is_named(self):
        counter = CompileCounterWithBackend(lambda gm, example_inputs: gm.forward, measure_eager_share=True)
        torch.compile(lambda x: (x * 2).sin(), backend=counter)(torch.randn(4))
        self.assertRegex(eager_share.ran_wholly_eagerly(counter.eager_share),
                         r"^graph 1, call 1 ran all 2 of its compute ops through PyTorch's kernels: aten\.mul x1, aten\.sin x1$")

    def test_a_compiled_graph_is_not(self):
        counter = CompileCounterWithBackend("inductor", measure_eager_share=True)
        torch.compile(lambda x: (x * 2).sin(), backend=counter)(torch.randn(4))
        self.assertIsNone(eager_share.ran_wholly_eagerly(counter.eager_share))

    def test_the_setting(self):
        from harness import settings

        self.assertFalse(share_limit.fallback_fails())
        with settings.using(settings.Settings({settings.EAGER_FALLBACK: "fail"})):
            self.assertTrue(share_limit.fallback_fails())


class LimitTests(unittest.TestCase):
    def test_shares_and_percentages(self):
        self.assertEqual(share_limit.parse_limit("0.25"), 0.25)
        self.assertEqual(share_limit.parse_limit("20%"), 0.2)
        for bad in ("abc", "1.5", "-1%"):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                share_limit.parse_limit(bad)

    def test_the_message_names_the_call_and_its_eager_ops(self):
        record = eager_share.GraphRecord(eager_share.Reference(eager_share.Counter({"aten.mm": 1, "aten.sin": 1, "aten.add": 2})))
        record.calls.append(eager_share.Counter({"aten.mm": 1, "aten.sin": 1}))
        self.assertIsNone(eager_share.over_limit([record], 0.5))
        message = eager_share.over_limit([record], 0.25)
        self.assertRegex(message, r"graph 1, call 1 ran 50% of its 4 compute ops eagerly \(limit 25%\).*aten\.mm x1")

    def test_eager_share_entries_are_checked_on_load(self):
        text = '[[eager_share]]\nbackend = "mine"\nmax = 0.1\nreason = "own runtime"\n'
        [limit] = expectations.parse_share_limits(text, "e.toml")
        self.assertEqual((limit.test, limit.pattern("backend"), limit.max, limit.source), ("*", "mine", 0.1, "e.toml:1"))
        with self.assertRaisesRegex(expectations.ExpectationError, r"^e\.toml:3: max 2 is outside 0\.\.1"):
            expectations.parse_share_limits(text.replace("0.1", "2"), "e.toml")
        with self.assertRaisesRegex(expectations.ExpectationError, r"^e\.toml:2: unknown key 'status'"):
            expectations.parse_share_limits('[[eager_share]]\nstatus = "xfail"\nmax = 0\nreason = "r"\n', "e.toml")

    def test_a_bad_limit_is_a_usage_error(self):
        done = run_cli("--max-eager-share", "150%", "--list", timeout=300)
        self.assertEqual(done.returncode, 2, done.stderr)
        self.assertRegex(done.stderr.strip(), r"^[^\n]*--max-eager-share / DYNAMO_SUITE_MAX_EAGER_SHARE: '150%' is outside")


if __name__ == "__main__":
    unittest.main()
