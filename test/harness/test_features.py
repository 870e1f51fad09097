"""The feature catalogue (harness/features): each feature read where it is, and not where it
is not, from the graphs a backend receives and the calls it serves; per operator family;
reading never changing a test; the coverage the reports show (harness/report/coverage.py)."""

from __future__ import annotations

import math
import unittest
from pathlib import Path
from unittest import mock

import torch

from harness.features import catalogue, families, recorder, scope
from harness.measure.counters import CompileCounterWithBackend
from harness.report import console, coverage
from harness.report.formats import html_report, markdown
from harness.report.formats.format import RunReport
from harness.report.results import RunResults, TestResult

# Its own seconds (test/harness/budgets.py): 9 s measured 2026-12-02.
TIME_BUDGET_S = 30

DOCS = Path(__file__).resolve().parents[2] / "docs" / "coverage.md"


def seen(fn, *args, calls: int = 1, backward: int = 0, module=None, mode=None, **compile_kwargs) -> set[str]:
    """The features a compiled ``fn`` (or ``module``) showed over ``calls`` calls."""
    torch._dynamo.reset()
    counter = CompileCounterWithBackend("aot_eager")
    program = module if module is not None else fn
    counter.features.watch_module(module)
    compiled = torch.compile(program, backend=counter, **compile_kwargs)
    for _ in range(calls):
        with mode() if mode is not None else _nothing():
            out = compiled(*args)
        for index in range(backward):
            out.sum().backward(retain_graph=index + 1 < backward)
    torch._dynamo.reset()
    assert counter.frame_count, "no graph"
    return counter.features.seen


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *args):
        return False


def plain() -> torch.Tensor:
    return torch.randn(4, 5)


class SiteFeatureTests(unittest.TestCase):
    """Conditions of one operator call, each shown by a call that has it and absent from one
    that does not."""

    def check(self, feature: str, with_it, without_it, family: str | None = None) -> None:
        self.assertIn(feature, with_it, f"{feature} not read where it is")
        self.assertNotIn(feature, without_it, f"{feature} read where it is not")
        if family is not None:
            self.assertIn(f"{feature}@{family}", with_it)

    def test_broadcast_positions(self):
        base = seen(lambda x, y: x * y, torch.randn(4, 3, 5), torch.randn(4, 3, 5))
        self.check("broadcast-first", seen(lambda x, y: x * y, torch.randn(4, 3, 5), torch.randn(1, 3, 5)), base,
                   families.POINTWISE)
        self.check("broadcast-middle", seen(lambda x, y: x + y, torch.randn(4, 3, 5), torch.randn(4, 1, 5)), base)
        self.check("broadcast-last", seen(lambda x, y: x - y, torch.randn(4, 3, 5), torch.randn(4, 3, 1)), base)
        self.check("broadcast-rank", seen(lambda x, y: x / y, torch.randn(4, 3, 5), torch.randn(5)), base)
        # A product's shapes differ by its own rule, not by broadcasting.
        self.assertNotIn("broadcast-rank", seen(lambda x, w: x @ w, torch.randn(2, 4, 3), torch.randn(3, 5)))

    def test_operands_that_are_numbers_or_0_d(self):
        base = seen(lambda x, y: x * y, plain(), plain())
        self.check("scalar-operand", seen(lambda x: x * 2.5, plain()), base)
        self.check("zero-dim-operand", seen(lambda x, s: x * s, plain(), torch.tensor(2.0)), base)
        self.assertNotIn("scalar-operand", seen(lambda x: x.sum(1), plain()), "a dim argument is no operand")

    def test_sizes(self):
        base = seen(lambda x: x.sum(0), plain())
        self.check("empty", seen(lambda x: x * 2, torch.randn(0, 3)), base)
        self.check("size-one-dim", seen(lambda x: x.sin(), torch.randn(4, 1)), base)
        self.check("long-reduction", seen(lambda x: x.sum(), torch.randn(5000)), base, families.REDUCTION)
        self.check("long-reduction", seen(lambda x: x.softmax(-1), torch.randn(2, 4096)), base)
        self.check("large-tensor", seen(lambda x: x + 1, torch.randn(300, 300)), base)

    def test_dtypes_mixed_and_promoted(self):
        base = seen(lambda x: x * 2, plain())
        for dtype, name in ((torch.float64, "float64"), (torch.float16, "float16"), (torch.bfloat16, "bfloat16"),
                            (torch.int32, "int32"), (torch.uint8, "uint8"), (torch.bool, "bool"),
                            (torch.complex64, "complex")):
            with self.subTest(dtype=dtype):
                self.check(name, seen(lambda x: x.clone() + x, torch.ones(4, dtype=dtype)), base)
        self.check("mixed-dtypes", seen(lambda x, y: x + y, plain(), torch.ones(4, 5, dtype=torch.float64)), base)
        self.check("type-promotion", seen(lambda i: i * 2.5, torch.ones(4, dtype=torch.int64)), base)
        self.assertNotIn("type-promotion", seen(lambda x, y: x < y, plain(), plain()), "a comparison promotes nothing")

    def test_layouts_read_by_a_kernel(self):
        base = seen(lambda x: x.sin(), plain())
        self.check("transposed", seen(lambda x: x.sin(), torch.randn(5, 4).t()), base)
        self.check("non-contiguous", seen(lambda x: x.cos(), torch.randn(4, 10)[:, ::2]), base)
        self.check("storage-offset", seen(lambda x: x.exp(), torch.randn(6)[2:]), base)
        self.check("stride-zero", seen(lambda x: x.tanh(), torch.randn(1, 5).expand(4, 5)), base)
        self.check("channels-last", seen(lambda x: x.relu(),
                                         torch.randn(2, 3, 4, 4).to(memory_format=torch.channels_last)), base)
        # A view reads no memory: transposing is no transposed read.
        self.assertNotIn("transposed", seen(lambda x: x.t(), plain()))


class ArgumentVariantTests(unittest.TestCase):
    """The options of an ATen call as the kernel variants it asks for (views.argument_variants)."""

    def variants(self, fn, *args) -> dict[str, list[str]]:
        from torch.fx.experimental.proxy_tensor import make_fx

        from harness.features.views import argument_variants

        graph = make_fx(fn)(*args).graph
        return {node.target._opname: argument_variants(node.target, node.args, node.kwargs)
                for node in graph.nodes if node.op == "call_function" and hasattr(node.target, "_opname")}

    def test_options_as_set_or_as_their_default_leaves_them(self):
        found = self.variants(lambda x: (torch.nn.functional.gelu(x, approximate="tanh"),
                                         torch.var(x, 1, correction=0, keepdim=True),
                                         torch.nn.functional.avg_pool2d(x[None], 2, padding=1, count_include_pad=False),
                                         torch.nn.functional.leaky_relu(x, 0.2), x.sum(1, dtype=torch.float64)),
                              plain())
        self.assertEqual(found["gelu"], ["approximate=tanh"])
        self.assertEqual(found["var"], ["correction=0", "keepdim=True"])
        self.assertIn("count_include_pad=False", found["avg_pool2d"])
        self.assertIn("divisor_override=None", found["avg_pool2d"])  # its default, not given
        self.assertEqual(found["leaky_relu"], ["negative_slope=other"])  # numbers past 0, 1, -1: other
        self.assertEqual(found["sum"], ["keepdim=False", "dtype=float64"])

    def test_tensors_and_lists_are_no_options(self):
        found = self.variants(lambda x, y: (torch.addmm(x, y, y) + x.permute(1, 0), torch.full_like(x, True),
                                            torch.nn.functional.group_norm(x[None], 2)),
                              torch.randn(4, 4), torch.randn(4, 4))
        self.assertEqual(found["addmm"], ["beta=1", "alpha=1"])
        self.assertEqual(found["add"], ["alpha=1"])
        self.assertEqual(found["permute"], [])  # views, copies and new tensors compute nothing to vary
        self.assertEqual(found["full_like"], [])
        self.assertEqual(found["native_group_norm"], [])  # sizes a decomposition passes on, no defaults


class GraphAndCallFeatureTests(unittest.TestCase):
    def test_graph_features(self):
        def chain(x):
            for _ in range(40):
                x = x.sin() * 2 + 1
            return x

        base = seen(lambda x: x.sin(), plain())
        self.assertIn("large-graph", seen(chain, plain()))
        self.assertNotIn("very-large-graph", seen(chain, plain()))  # 120 calls
        self.assertNotIn("large-graph", base)

        def longer(x):
            for _ in range(50):
                x = x.sin() * 2 + 1
            return x

        self.assertIn("very-large-graph", seen(longer, plain()))
        self.assertIn("fan-out", seen(lambda x: (y := x.sin()) + y.cos() + y.exp() * y, plain()))
        self.assertIn("fan-in", seen(lambda x: torch.cat([x.sin(), x.cos(), x.exp()]), plain()))
        self.assertIn("several-outputs", seen(lambda x: (x + 1, x * 2), plain()))
        self.assertIn("output-aliases-input", seen(lambda x: x.view(-1), plain()))
        self.assertIn("outputs-alias", seen(lambda x: ((y := x * 2), y.view(-1)), plain()))
        self.assertNotIn("several-outputs", base)

    def test_modes_and_indices_of_calls(self):
        def fn(x):
            return (x @ x).sum(0)

        self.assertIn("later-call", seen(fn, torch.randn(3, 3), calls=2))
        self.assertNotIn("later-call", seen(fn, torch.randn(3, 3)))
        self.assertIn("grad-disabled", seen(fn, torch.randn(3, 3), mode=torch.no_grad))
        self.assertIn("inference-mode", seen(fn, torch.randn(3, 3), mode=torch.inference_mode))
        self.assertIn("autocast", seen(fn, torch.randn(3, 3), mode=lambda: torch.autocast("cpu", torch.bfloat16)))

        class Deterministic:
            def __enter__(self):
                self.before = torch.are_deterministic_algorithms_enabled()
                torch.use_deterministic_algorithms(True)

            def __exit__(self, *args):
                torch.use_deterministic_algorithms(self.before)

        self.assertIn("deterministic", seen(fn, torch.randn(3, 3), mode=Deterministic))
        plain_call = seen(fn, torch.randn(3, 3))
        for name in ("grad-disabled", "inference-mode", "autocast", "deterministic"):
            self.assertNotIn(name, plain_call)

    def test_backward_passes(self):
        def fn(x):
            return x.sin() * 2

        self.assertIn("backward", seen(fn, torch.randn(3, requires_grad=True), backward=1))
        self.assertNotIn("backward-twice", seen(fn, torch.randn(3, requires_grad=True), backward=1))
        self.assertIn("backward-twice", seen(fn, torch.randn(3, requires_grad=True), backward=2))
        self.assertNotIn("backward", seen(fn, torch.randn(3, requires_grad=True)))

    def test_modules(self):
        norm = torch.nn.BatchNorm1d(3)
        norm.register_forward_hook(lambda *args: None)
        found = seen(None, torch.randn(4, 3), module=norm)
        self.assertTrue({"module-training", "buffers", "parameters", "hooks"} <= found, found)
        self.assertIn("module-eval", seen(None, torch.randn(4, 3), module=torch.nn.BatchNorm1d(3).eval()))
        self.assertNotIn("hooks", seen(None, torch.randn(4, 3), module=torch.nn.Linear(3, 3)))

    def test_values_and_indices_of_calls(self):
        base = seen(lambda x: x * 2, torch.tensor([1.0, 2.0, 3.0]))
        special = seen(lambda x: x * 2, torch.tensor([math.nan, math.inf, -0.0, 1e-40, 1e6, 3.0, 3.0, 3.0]))
        for name in ("nan", "infinity", "negative-zero", "subnormal", "large-values", "ties"):
            self.assertIn(name, special)
            self.assertNotIn(name, base)
        self.assertIn("large-values", seen(lambda i: i + 1, torch.tensor([2 ** 40, 1])))
        found = seen(lambda x, i: x[i] * 2, torch.randn(5), torch.tensor([-1, 2, 2]))
        self.assertTrue({"negative-indices", "repeated-indices"} <= found, found)
        self.assertIn("indexing", {catalogue.split(entry)[1] for entry in found})
        self.assertNotIn("repeated-indices", seen(lambda x, i: x[i] * 2, torch.randn(5), torch.tensor([0, 1])))
        # A module's state is what it holds, not data it is fed: its constant buffers tie.
        self.assertNotIn("ties", seen(None, torch.randn(4, 3), module=torch.nn.BatchNorm1d(3)))

    def test_a_rule_that_fails_is_a_feature_not_seen(self):
        self.assertFalse(recorder.holds(lambda site: 1 / 0, None))


class CoverageReportTests(unittest.TestCase):
    def results(self) -> RunResults:
        def test(name, backend, covers):
            return TestResult(id=f"test.dynamo.test_x.F_{backend}.{name}", scenario=f"test_x.F.{name}",
                              backend=backend, backend_spec=backend, outcome="PASS", covers=covers)

        return RunResults(run={"backends": [{"name": "aot_eager", "spec": "aot_eager"}, {"name": "mine", "spec": "mine"}]}, tests=[
            test("test_a", "aot_eager", ["nan", "broadcast-middle", "broadcast-middle@pointwise"]),
            test("test_b", "aot_eager", ["nan", "later-call"]),
            test("test_a", "mine", ["nan", "broadcast-middle", "broadcast-middle@pointwise"]),
            test("test_b", "mine", None),
        ])

    def test_per_column_counts_families_and_what_none_showed(self):
        columns = coverage.per_column(self.results())
        self.assertEqual(list(columns), ["aot_eager", "mine"])
        self.assertEqual(columns["aot_eager"].conditions, {"broadcast-middle": 1, "nan": 2, "later-call": 1})
        self.assertEqual(columns["aot_eager"].by_family, {families.POINTWISE: {"broadcast-middle": 1}})
        self.assertEqual(columns["mine"].tests, 1)
        missing = coverage.none_exercised(columns)
        self.assertNotIn("nan", missing)
        self.assertIn("channels-last", missing)
        self.assertEqual(len(missing), len(catalogue.CATALOGUE) - 3)

    def test_every_report_shows_it(self):
        results = self.results()
        data = results.to_json()["coverage"]
        self.assertEqual(data["columns"]["aot_eager"]["conditions"]["nan"], 2)
        self.assertIn("channels-last", data["none_exercised"])
        self.assertRegex(console.summary(results), r"coverage: features of \d+ shown on aot_eager 3, mine 2; "
                                                   r"none shown: broadcast-first, ")
        self.assertIn("coverage: features of", markdown.render(RunReport(results)))
        page = html_report.render(RunReport(results))
        self.assertIn('id="coverage"', page)
        self.assertIn("<code>channels-last</code>", page)

    def test_the_docs_show_the_catalogue(self):
        self.assertIn(coverage.table(), DOCS.read_text(),
                      "docs/coverage.md's table is out of date: paste python -c \"from harness.report import coverage; "
                      "print(coverage.table())\"")


class ToyFeatureTests(unittest.TestCase):
    """A feature is one catalogue entry with its rule: the recorder reads it off graphs, the
    coverage counts it and, with refusal words, a project may declare it unsupported."""

    TOY = catalogue.Feature("toy-cosine", catalogue.GRAPH, "a cosine", site=lambda site: site.name == "cos",
                            named_by=r"cosines?")

    def test_one_entry_is_all_a_feature_takes(self):
        with mock.patch.dict(catalogue.CATALOGUE, {self.TOY.name: self.TOY}):
            shown = seen(torch.cos, plain())
            self.assertIn("toy-cosine", shown)
            self.assertIn(f"toy-cosine@{families.POINTWISE}", shown)
            self.assertNotIn("toy-cosine", seen(torch.sin, plain()))
            self.assertEqual(scope.declared("toy cosine"), ("toy-cosine",))
            self.assertTrue(scope.named_in("toy-cosine", "Backend says: COSINES are not supported here"))
            self.assertIn("`toy-cosine`", scope.table())
            self.assertIn("`toy-cosine`", coverage.table())
            result = TestResult(id="test.dynamo.test_x.F_mine.test_a", scenario="test_x.F.test_a", backend="mine",
                                backend_spec="mine", outcome="PASS", covers=sorted(shown))
            columns = coverage.per_column(RunResults(run={"backends": [{"name": "mine", "spec": "mine"}]},
                                                     tests=[result]))
            self.assertEqual(columns["mine"].conditions["toy-cosine"], 1)
        self.assertNotIn("toy-cosine", seen(torch.cos, plain()))
        with self.assertRaises(scope.ScopeError):
            scope.declared("toy-cosine")


if __name__ == "__main__":
    unittest.main()
