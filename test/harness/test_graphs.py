"""harness.checks.graphs: the renamed graph text and the graph queries the transform scenarios use."""

from __future__ import annotations

import unittest

import torch
import torch.fx

from harness.checks.graphs import GraphRecorder, graph_text, in_place_nodes, outputs, placeholders, writes_into_inputs

# Its own seconds (test/harness/budgets.py): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10


def _graph(build) -> torch.fx.GraphModule:
    graph = torch.fx.Graph()
    build(graph)
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def _scale_then_write_back(names: tuple[str, str]):
    def build(graph: torch.fx.Graph) -> None:
        x = graph.placeholder(names[0])
        tangent = graph.placeholder(names[1])
        doubled = graph.call_function(torch.ops.aten.mul.Tensor, (x, 2))
        graph.call_function(torch.ops.aten.copy_.default, (x, doubled))
        graph.call_function(torch.ops.aten.relu_.default, (doubled,))
        summed = graph.call_function(torch.ops.aten.sum.dim_IntList, (doubled, [0]), {"keepdim": True})
        graph.output(((summed, tangent), None))

    return build


class GraphTextTests(unittest.TestCase):
    def test_names_do_not_matter(self):
        first = _graph(_scale_then_write_back(("primals_1", "tangents_1")))
        second = _graph(_scale_then_write_back(("arg0_1", "tangents_7")))
        self.assertEqual(graph_text(first), graph_text(second))

    def test_text(self):
        self.assertEqual(graph_text(_graph(_scale_then_write_back(("x", "tangents_1")))), "\n".join([
            "in0 = input",
            "tangent0 = input",
            "v0 = aten.mul.Tensor(in0, 2)",
            "v1 = aten.copy_.default(in0, v0)",
            "v2 = aten.relu_.default(v0)",
            "v3 = aten.sum.dim_IntList(v0, [0], keepdim=True)",
            "return ((v3, tangent0), None)",
        ]))

    def test_a_different_computation_reads_differently(self):
        def build(graph: torch.fx.Graph) -> None:
            x = graph.placeholder("x")
            graph.output((graph.call_function(torch.ops.aten.add.Tensor, (x, 2)),))

        def build_mul(graph: torch.fx.Graph) -> None:
            x = graph.placeholder("x")
            graph.output((graph.call_function(torch.ops.aten.mul.Tensor, (x, 2)),))

        self.assertNotEqual(graph_text(_graph(build)), graph_text(_graph(build_mul)))


class GraphQueryTests(unittest.TestCase):
    def setUp(self) -> None:
        self.gm = _graph(_scale_then_write_back(("x", "tangents_1")))

    def test_outputs_are_flat_and_keep_none(self):
        self.assertEqual([getattr(out, "name", out) for out in outputs(self.gm)], ["sum_dim_int_list", "tangents_1", None])

    def test_in_place_nodes_and_writes_into_inputs(self):
        self.assertEqual([str(node.target) for node in in_place_nodes(self.gm)],
                         ["aten.copy_.default", "aten.relu_.default"])
        self.assertEqual([str(node.target) for node in writes_into_inputs(self.gm)], ["aten.copy_.default"])
        self.assertEqual([node.name for node in placeholders(self.gm)], ["x", "tangents_1"])

    def test_recorder_keeps_graphs_and_runs_them(self):
        from functorch.compile import aot_function

        recorder = GraphRecorder()
        x = torch.randn(3, requires_grad=True)
        out = aot_function(torch.sin, recorder, recorder)(x)
        out.sum().backward()
        self.assertEqual(len(recorder.graphs), 2)
        torch.testing.assert_close(x.grad, x.detach().cos())
        self.assertIs(recorder.forward, recorder.graphs[0])
        self.assertIs(recorder.backward, recorder.graphs[1])


if __name__ == "__main__":
    unittest.main()
