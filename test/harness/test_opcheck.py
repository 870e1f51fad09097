"""harness.checks.opcheck.op_check: passes correct backends, names what a faulty one got wrong."""

from __future__ import annotations

import ast
import tempfile
import unittest
import warnings
from pathlib import Path

import torch

from harness import compat
from harness.checks import clauses, opcheck, value_domains
from harness.checks.opcheck import (
    Call, Difference, EagerError, ErrorVerdict, NoGraphCaptured, OpCheckFailure, OperatorChecker, op_check, random_op_check)
from test.harness.faulty_backends import (
    bernoulli_ignores_p, dropout_ignores_p, half_outputs_12_percent_off, keeps_its_own_generator, loses_negative_zero,
    memoizes_on_shapes, normal_ignores_std, replays_random_draws, wrong_gradient_free_ops, wrong_gradients,
    wrong_half_indices, wrong_softmax_backward, wrong_values)

# Its own seconds (test/harness/budgets.py): 6 s measured 2026-11-29.
TIME_BUDGET_S = 20


class OpCheckTests(unittest.TestCase):
    def setUp(self):
        compat.reset_dynamo()
        self.addCleanup(compat.reset_dynamo)
        self.x = torch.randn(3, 4, requires_grad=True)

    def test_correct_backends_pass_with_pytree_args(self):
        for backend in ("eager", "aot_eager"):
            with self.subTest(backend=backend):
                graphs = op_check(torch.sum, (self.x,), {"dim": [1], "keepdim": True}, backend)
                self.assertEqual(graphs, 1)
                op_check(torch.cat, ([self.x, self.x.detach()],), {"dim": 0}, backend, check_data_specialization=True)

    def test_wrong_outputs_are_named(self):
        with self.assertRaisesRegex(OpCheckFailure, r"^outputs differ between eager and the compiled call: "
                                                    r"the operator would give wrong outputs under torch.compile"):
            op_check(torch.sin, (self.x,), {}, wrong_values)

    def test_wrong_gradients_are_named(self):
        with self.assertRaisesRegex(OpCheckFailure, r"^gradients differ"):
            op_check(torch.sin, (self.x,), {}, wrong_gradients, check_gradients=True)
        op_check(torch.sin, (self.x,), {}, wrong_gradients, check_gradients=False)

    def test_no_gradient_in_eager_must_be_no_gradient_compiled(self):
        # argmax has no gradient: eager autograd refuses, and so must the compiled call.
        op_check(torch.argmax, (self.x,), {"dim": 1}, "aot_eager", check_gradients=True)

    def test_a_normalizing_op_s_gradient_is_seen(self):
        # Σ|softmax| is 1 per row: a loss of absolute values gave both gradients 0.
        op_check(torch.softmax, (self.x, -1), {}, "aot_eager", check_gradients=True)
        with self.assertRaisesRegex(OpCheckFailure, r"^gradients differ"):
            op_check(torch.softmax, (self.x, -1), {}, wrong_softmax_backward, check_gradients=True)

    def test_half_precision_is_judged_against_float64_leaf_by_leaf(self):
        x = torch.randn(4, 6, dtype=torch.bfloat16)
        op_check(torch.topk, (x, 3), {}, "aot_eager")
        op_check(torch.sin, (x,), {}, "aot_eager")
        with self.assertRaisesRegex(OpCheckFailure, r"outputs\[1\]: values differ"):  # right values, wrong indices
            op_check(torch.topk, (x, 3), {}, wrong_half_indices)
        with self.assertRaisesRegex(OpCheckFailure, r"against the float64 reference"):  # 12% off
            op_check(torch.sin, (x,), {}, half_outputs_12_percent_off)

    def test_data_specialization_is_caught(self):
        op_check(torch.exp, (self.x,), {}, memoizes_on_shapes)  # one call: nothing to see
        compat.reset_dynamo()
        with self.assertRaisesRegex(OpCheckFailure, r"specialized on the example's values"):
            op_check(torch.exp, (self.x,), {}, memoizes_on_shapes, check_data_specialization=True)

    def test_eager_fallback_is_not_a_pass(self):
        with self.assertRaisesRegex(NoGraphCaptured, "captured no graph"):
            op_check(torch._dynamo.disable(torch.cos), (self.x,), {}, "aot_eager")



def _dropout(x):
    return torch.nn.functional.dropout(x, p=0.5, training=True)


class QuickTierTests(unittest.TestCase):
    def test_every_quick_tier_name_is_an_opinfo_without_variants(self):
        # The quick tier's tests are generated from its names alone (listing them needs no
        # OpInfo database), so a name that matches none would only ever skip.
        from test.dynamo.test_op_sweep import QUICK_TIER, _quick_op

        missing = [name for names in QUICK_TIER.values() for name in names if _quick_op(name) is None]
        self.assertEqual(missing, [])

    def test_the_full_tier_gives_every_op_a_category_its_quick_one_first(self):
        from test.dynamo.test_op_sweep import _op_db, op_category

        ops = {op.name: op for op in _op_db() if not op.variant_test_name}
        self.assertEqual([op_category(ops[name]) for name in ("sin", "cos", "hypot", "amax", "nansum", "linalg.det",
                                                              "index_select", "nn.functional.mse_loss",
                                                              "cumsum", "diag")],
                         ["unary pointwise", "unary pointwise", "binary pointwise", "reductions", "reductions",
                          "linear algebra", "indexing", "neural network", "sorting", "other"])

    def test_each_options_test_holds_the_ops_of_its_category_or_subgroup(self):
        from test.dynamo.test_op_sweep import OPTION_GROUPS, _op_db, op_label, option_group

        ops = {op_label(op): op for op in _op_db()}
        expected = {
            "nn.functional.hardtanh": "unary pointwise", "div.floor_rounding": "binary pointwise", "sum": "reductions",
            "norm": "norms", "linalg.vector_norm": "norms", "argmax": "index and logical reductions",
            "any": "index and logical reductions", "einsum": "linear algebra", "index_put": "indexing",
            "nn.functional.avg_pool2d": "pooling and padding", "nn.functional.pad.constant": "pooling and padding",
            "nn.functional.mse_loss": "losses", "nn.functional.cross_entropy": "losses",
            "nn.functional.leaky_relu": "activations", "nn.functional.grid_sample": "neural network",
            "sort": "sorting", "scatter_reduce.sum": "scatters", "var_mean": "statistics", "log_softmax": "softmax",
            "searchsorted": "other", "max.reduction_with_dim": "other"}
        self.assertEqual({name: option_group(ops[name]) for name in expected}, expected)
        self.assertLessEqual(set(expected.values()), set(OPTION_GROUPS))


class RandomOpCheckTests(unittest.TestCase):
    def setUp(self):
        compat.reset_dynamo()
        self.addCleanup(compat.reset_dynamo)
        self.x = torch.randn(8, 8, requires_grad=True)

    def test_correct_backends_pass(self):
        for backend in ("eager", "aot_eager"):
            for op, args in ((_dropout, (self.x,)), (torch.bernoulli, (torch.rand(16).requires_grad_(),)),
                             (torch.nn.functional.rrelu, (self.x, 0.1, 0.3, True))):
                with self.subTest(backend=backend, op=op.__name__):
                    self.assertEqual(random_op_check(op, args, {}, backend), 1)

    def test_nothing_left_random_is_compared_value_for_value(self):
        # p = 0 draws nothing that matters: eager's values and gradients must come out.
        no_drop = {"p": 0.0, "training": True}
        random_op_check(torch.nn.functional.dropout, (self.x,), no_drop, "aot_eager")
        with self.assertRaisesRegex(OpCheckFailure, r"^outputs differ"):
            random_op_check(torch.nn.functional.dropout, (self.x,), no_drop, wrong_values)

    def test_a_generator_of_its_own_is_caught(self):
        with self.assertRaisesRegex(OpCheckFailure, r"same torch.manual_seed drew different numbers"):
            random_op_check(_dropout, (self.x,), {}, keeps_its_own_generator)

    def test_draws_that_ignore_the_seed_are_caught(self):
        with self.assertRaisesRegex(OpCheckFailure, r"8 different seeds drew the same numbers"):
            random_op_check(_dropout, (self.x,), {}, replays_random_draws)

    def test_gradients_not_through_the_forward_draws_are_caught(self):
        with self.assertRaisesRegex(OpCheckFailure, r"the gradient does not follow the forward's draws"):
            random_op_check(_dropout, (self.x,), {}, wrong_gradients)

    def test_draws_from_another_law_are_caught(self):
        # Seeded, fresh per call, shaped and differentiable as eager's: only the law is wrong.
        p, mean, std = torch.full((16,), 0.08, requires_grad=True), torch.randn(4), torch.full((4,), 5.1)
        for backend, op, args, kwargs in (
                (bernoulli_ignores_p, torch.bernoulli, (p,), {}),
                (normal_ignores_std, torch.normal, (mean, std), {}),
                (dropout_ignores_p, torch.nn.functional.dropout, (self.x,), {"p": 0.1, "training": True}),
                (dropout_ignores_p, torch.nn.functional.dropout, (self.x,), {"p": 0.9, "training": True})):
            with self.subTest(backend=backend.__name__, kwargs=kwargs):
                compat.reset_dynamo()
                with self.assertRaisesRegex(OpCheckFailure, r"^the draws do not follow eager's law: output 0"):
                    random_op_check(op, args, kwargs, backend)

    def test_the_law_is_judged_element_by_element(self):
        # Half the elements at p = 0.1, half at 0.9: pooled, the draws of a backend that swaps
        # the halves have eager's law; element by element they do not.
        p = torch.tensor([0.1, 0.9] * 4)

        def swapped(gm, example_inputs):
            return lambda p: gm(p.flip(0))

        random_op_check(torch.bernoulli, (p,), {}, "aot_eager")
        with self.assertRaisesRegex(OpCheckFailure, r"do not follow eager's law"):
            random_op_check(torch.bernoulli, (p,), {}, swapped)


class KolmogorovSmirnovTests(unittest.TestCase):
    def test_the_critical_count_bounds_the_false_alarm_rate(self):
        import math

        def first_term(n: int, c: int) -> float:
            return 2 * math.exp(2 * math.lgamma(n + 1) - math.lgamma(n - c + 1) - math.lgamma(n + c + 1))

        for n, rate in ((500, 1e-6), (500, 1e-8), (100, 1e-3)):
            c = opcheck.ks_critical(n, rate)
            self.assertLessEqual(first_term(n, c), rate)
            self.assertGreater(first_term(n, c - 1), rate)
            # About Smirnov's asymptotic sqrt(ln(2 / rate) / n), in draws.
            self.assertAlmostEqual(c / n, math.sqrt(math.log(2 / rate) / n), delta=0.02)

    def test_distances_count_draws_and_allow_the_tolerance(self):
        draws = torch.rand(3, 200, dtype=torch.float64)
        self.assertEqual(opcheck.ks_distances(draws, draws.flip(1), 0.0, 0.0).tolist(), [0, 0, 0])
        rounded = draws * (1 + 1e-7)
        self.assertEqual(opcheck.ks_distances(draws, rounded, 1e-6, 0.0).tolist(), [0, 0, 0])
        self.assertEqual(opcheck.ks_distances(draws, draws + 2, 1e-6, 0.0).tolist(), [200] * 3)
        coins = torch.tensor([[0.0] * 150 + [1.0] * 50])
        self.assertEqual(opcheck.ks_distances(coins, coins.roll(7, 1), 0.0, 0.0).tolist(), [0])
        self.assertEqual(opcheck.ks_distances(coins, 1 - coins, 0.0, 0.0).tolist(), [100])


class ValueDomainTests(unittest.TestCase):
    """harness.checks.value_domains: the catalogue laid over a call, the exact judging, and
    the ops compiled together."""

    def setUp(self):
        compat.reset_dynamo()
        self.addCleanup(compat.reset_dynamo)

    def test_values_are_laid_in_turn_keeping_layout_and_requires_grad(self):
        base = torch.zeros(4, 3).t().requires_grad_()
        filled = value_domains.filled(base, (1.0, -0.0, 2.5), shift=1)
        self.assertEqual((filled.shape, filled.stride(), filled.requires_grad), (base.shape, base.stride(), True))
        self.assertEqual(filled.detach().reshape(-1).tolist()[:4], [-0.0, 2.5, 1.0, -0.0])
        self.assertTrue(torch.signbit(filled.detach().reshape(-1)[0]))

    def test_only_pointwise_operands_beyond_the_data_and_one_sign_of_large_values_elsewhere(self):
        data, weight, index = torch.ones(6), torch.ones(6), torch.arange(6)
        large, = [domain for domain in value_domains.DOMAINS if domain.name == "large"]
        pointwise = value_domains.with_domain([data, weight, index], large, every_operand=True)
        other = value_domains.with_domain([data, weight, index], large, every_operand=False)
        self.assertTrue(bool((pointwise[1] != 1).all()) and bool((pointwise[0] < 0).any()))
        self.assertTrue(torch.equal(other[1], weight) and torch.equal(other[2], index))
        self.assertTrue(bool((other[0] > 0).all()))

    def test_the_sign_of_zero_and_flushed_subnormals_are_named(self):
        tiny = torch.finfo(torch.float32).smallest_normal / 4
        self.assertRegex(value_domains.exact_mismatch(torch.tensor([-0.0, 1.0]), torch.tensor([0.0, 1.0])),
                         r"^output\[0\]: the sign of zero differs from eager at 1 of 2 positions")
        self.assertRegex(value_domains.exact_mismatch([torch.tensor([tiny])], [torch.tensor([0.0])]),
                         r"subnormal values flushed to zero at 1 of 1 positions")
        self.assertIsNone(value_domains.exact_mismatch(torch.tensor([tiny, -0.0]), torch.tensor([tiny, -0.0])))

    def test_ops_checked_together_pass_on_aot_eager_and_each_fault_is_named_by_op_and_domain(self):
        calls = [Call("neg", torch.neg, (torch.randn(8),), {}, every_operand=True),
                 Call("add", torch.add, (torch.randn(8), torch.randn(8)), {}, every_operand=True),
                 Call("sum", torch.sum, (torch.randn(2, 4),), {"dim": 1})]
        self.assertEqual(value_domains.batch_check(calls, "aot_eager"), [])
        found = value_domains.batch_check(calls, loses_negative_zero)
        self.assertIn(("neg", "small"), {(each.op, each.domain) for each in found})
        self.assertTrue(all("sign of zero" in each.what for each in found), found)
        with self.assertRaises(NoGraphCaptured):  # no domain called the compiled ops
            value_domains.batch_check(calls, "aot_eager", domains=())

    def test_each_call_of_a_batch_dynamo_compiles_call_by_call_runs_its_own_operator(self):
        # A graph break in the batch's loop (a warning) makes Dynamo compile each call's
        # flat_fn as a frame of its own; sharing one code object, rsub ran __radd__'s graph
        # (torch 2.13, pytorch#197811: no guard on a torch.Tensor method).
        def warns(x):
            warnings.warn("a graph break")
            return x * 2

        pair = (torch.tensor(5.0), torch.tensor(3.0))
        calls = [Call("warns", warns, (torch.randn(3),), {}),
                 Call("__radd__", torch.Tensor.__radd__, pair, {}, every_operand=True),
                 Call("rsub", torch.rsub, pair, {}, every_operand=True)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.assertEqual(value_domains.batch_check(calls, "eager", domains=value_domains.DOMAINS[:1]), [])

    def test_calls_without_gradients_are_judged_on_their_values_beside_ones_with(self):
        # Eager's backward has nothing to differentiate for argmax and any: they were compiled
        # and never compared when the batch computed gradients.
        x = torch.randn(4, 5, requires_grad=True)
        calls = [Call("argmax", torch.argmax, (x.detach(),), {"dim": 1, "keepdim": True}),
                 Call("any", torch.any, (x.detach() > 0,), {"dim": 0}),
                 Call("softmax", torch.softmax, (x, -1), {})]
        domains = value_domains.DOMAINS[:1]
        self.assertEqual(value_domains.batch_check(calls, "aot_eager", domains=domains, gradients=True), [])
        found = value_domains.batch_check(calls, wrong_gradient_free_ops, domains=domains, gradients=True)
        self.assertEqual(sorted(each.op for each in found), ["any", "argmax"])
        found = value_domains.batch_check(calls, wrong_softmax_backward, domains=domains, gradients=True)
        self.assertEqual([each.op for each in found], ["softmax"])
        self.assertRegex(found[0].what, r"^gradients differ")

    def test_an_op_whose_compile_fails_is_named_and_the_others_still_judged(self):
        def refuses_sub(gm, example_inputs):
            if any(node.target in (torch.sub, torch.ops.aten.sub.Tensor) for node in gm.graph.nodes):
                raise RuntimeError("no kernel for sub")
            return gm.forward

        calls = [Call("sub", torch.sub, (torch.randn(4), torch.randn(4)), {}, every_operand=True),
                 Call("neg", torch.neg, (torch.randn(4),), {}, every_operand=True)]
        found = value_domains.batch_check(calls, refuses_sub, domains=value_domains.DOMAINS[:1])
        self.assertEqual([(each.op, each.domain) for each in found], [("sub", "small")])
        self.assertRegex(found[0].what, r"^compiled call raised \w+: .*no kernel for sub")

    def test_the_names_and_categories_of_the_catalogue(self):
        from test.dynamo.test_op_sweep import QUICK_TIER

        named = {*value_domains.OPERAND_CATEGORIES, *value_domains.SHAPE_CATEGORIES,
                 *(category for domain in value_domains.DOMAINS for category in domain.categories)}
        self.assertLessEqual(named, set(QUICK_TIER))
        for domain in value_domains.DOMAINS:  # how a difference is told to be one (clauses.py)
            difference = Difference("sum", domain.name, "outputs differ")
            self.assertEqual(clauses.of_check(str(difference)), clauses.VALUE_DOMAINS, domain.name)

    def test_shape_domains_reshape_every_tensor_of_reductions_and_indexing(self):
        data, source = torch.randn(4, 3, requires_grad=True), torch.randn(2, 3)
        index = torch.tensor([[0, 2, 1], [3, 1, 0]])
        call = Call("scatter", torch.scatter, (data, 0, index, source), {}, category="indexing")
        empty = _domain("empty").inputs(call, call.tensors())
        self.assertEqual([(tuple(each.shape), each.dtype, each.requires_grad) for each in empty],
                         [((0, 3), torch.float32, True), ((0, 3), torch.int64, False), ((0, 3), torch.float32, False)])
        scalars = _domain("scalar").inputs(call, call.tensors())
        self.assertEqual([each.dim() for each in scalars], [0, 0, 0])
        # The data and values keep their first elements; an index is 0, the one place a scalar has.
        self.assertEqual([each.item() for each in scalars], [data[0, 0].item(), 0, source[0, 0].item()])
        self.assertTrue(scalars[0].requires_grad)
        sum_of_scalar = Call("sum", torch.sum, (torch.randn(()),), {}, category="reductions")
        self.assertEqual(_domain("empty").inputs(sum_of_scalar, sum_of_scalar.tensors())[0].shape, (0,))
        self.assertIsNone(_domain("scalar").inputs(sum_of_scalar, sum_of_scalar.tensors()))  # its sample is 0-d
        neg = Call("neg", torch.neg, (data,), {}, every_operand=True, category="unary pointwise")
        self.assertIsNone(_domain("empty").inputs(neg, neg.tensors()))  # not a reduction nor indexing

    def test_repeated_indices_repeat_each_index_tensors_own_entries_where_eager_defines_them(self):
        repeated, data, index = _domain("repeated indices"), torch.randn(6, 2), torch.tensor([4, 1, 2, 5])
        select = Call("index_select", torch.index_select, (data, 0, index), {}, category="indexing")
        rewritten = repeated.inputs(select, select.tensors())
        self.assertIs(rewritten[0], data)
        self.assertEqual(rewritten[1].tolist(), [1, 1, 5, 1])

        def put(accumulate: bool) -> Call:
            return Call("index_put", torch.index_put, (data, (index,), torch.randn(4, 2)),
                        {"accumulate": accumulate}, category="indexing")

        # Without accumulate, which duplicate lands is undefined (value_domains.OVERWRITING).
        self.assertIsNone(repeated.inputs(put(False), put(False).tensors()))
        accumulating = put(True)
        rewritten = repeated.inputs(accumulating, accumulating.tensors())
        self.assertEqual(rewritten[1].tolist(), [1, 1, 5, 1])
        self.assertIs(rewritten[2], accumulating.args[2])
        single = Call("index_select", torch.index_select, (data, 0, index[:1]), {}, category="indexing")
        self.assertIsNone(repeated.inputs(single, single.tensors()))  # one entry cannot repeat
        add = Call("add", torch.add, (torch.arange(4), index), {}, every_operand=True)
        self.assertIsNone(repeated.inputs(add, add.tensors()))  # operands, not indices

    def test_a_shape_eager_refuses_is_passed_over_for_that_op_alone(self):
        def refuses_amax(gm, example_inputs):
            if any(node.target is torch.amax for node in gm.graph.nodes):
                raise RuntimeError("no kernel for amax")
            return gm.forward

        calls = [Call("amax", torch.amax, (torch.randn(3),), {}, category="reductions"),
                 Call("sum", torch.sum, (torch.randn(3),), {}, category="reductions")]
        # The amax of nothing: eager refuses (no identity), so the empty batch is the sum alone.
        self.assertEqual(value_domains.batch_check(calls, refuses_amax, domains=(_domain("empty"),)), [])
        found = value_domains.batch_check(calls, refuses_amax, domains=(_domain("empty"), _domain("scalar")))
        self.assertEqual([(each.op, each.domain) for each in found], [("amax", "scalar")])

    def test_a_wrong_mean_of_nothing_is_caught_on_empty_tensors_alone(self):
        calls = [Call("mean", torch.mean, (torch.randn(2, 3, requires_grad=True),), {}, category="reductions")]
        found = value_domains.batch_check(calls, _replacing(torch.mean, _mean_of_nothing_is_zero), gradients=True)
        self.assertEqual([(each.op, each.domain) for each in found], [("mean", "empty")])
        self.assertRegex(str(found[0]), r"^mean on empty values: outputs differ")

    def test_lost_duplicate_writes_are_caught_with_repeated_indices_alone(self):
        calls = [Call("index_put", torch.index_put, (torch.randn(5, 3), (torch.tensor([4, 0, 2]),), torch.randn(3, 3)),
                      {"accumulate": True}, category="indexing")]
        found = value_domains.batch_check(calls, _replacing(torch.index_put, _index_put_racing))
        self.assertEqual([(each.op, each.domain) for each in found], [("index_put", "repeated indices")])
        self.assertRegex(str(found[0]), r"^index_put on repeated indices values: outputs differ")


class ToyEntryTests(unittest.TestCase):
    """A new operator-check entry is data alone: a domain, a call and an error input written
    here, and nowhere else, are checked by the one checker (opcheck.OperatorChecker), judged and
    named as the catalogue's own are."""

    def setUp(self):
        compat.reset_dynamo()
        self.addCleanup(compat.reset_dynamo)

    def test_a_toy_domain_call_and_error_input_are_data_the_one_checker_runs(self):
        halves = value_domains.Domain("toy halves", "one half everywhere",
                                      lambda dtype: (0.5, -0.5) if dtype.is_floating_point else None)
        calls = [Call("exp", torch.exp, (torch.randn(4),), {}, every_operand=True, category="unary pointwise")]
        self.assertEqual(value_domains.batch_check(calls, "aot_eager", domains=(halves,)), [])
        found = OperatorChecker(wrong_values).together(calls, (halves,), beyond_tolerance=value_domains.exact_mismatch)
        self.assertEqual([(each.op, each.domain) for each in found], [("exp", "toy halves")])
        self.assertRegex(str(found[0]), r"^exp on toy halves values: outputs differ")
        self.assertEqual(clauses.of_check(str(found[0])), clauses.VALUE_DOMAINS)

        data, past_the_end = torch.randn(3, 2), torch.tensor([7])
        try:
            torch.index_select(data, 0, past_the_end)
        except (IndexError, RuntimeError) as error:
            eager = EagerError(type(error), "out of range", str(error))
        else:
            self.fail("eager index_select took an index past the end")
        rejected = Call("index_select (toy error input)", torch.index_select, (data, 0, past_the_end), {},
                        raises=eager)
        self.assertEqual(OperatorChecker("aot_eager").raises_as_eager(rejected), ErrorVerdict(None, reached=True))
        verdict = OperatorChecker(_replacing(torch.index_select, _index_select_clamped)).raises_as_eager(rejected)
        self.assertRegex(verdict.problem, r"^index_select \(toy error input\): gave a result where eager raises \w+Error")


REPOSITORY = Path(__file__).resolve().parents[2]
OPCHECK = "harness.checks.opcheck"


def private_opcheck_uses(path: Path) -> list[tuple[int, str]]:
    """Each use in ``path`` of a private name of harness/checks/opcheck.py, with its line:
    imported (``from harness.checks.opcheck import _x``) or read off the module under any name
    it is imported by (``opcheck._x``, ``harness.checks.opcheck._x``)."""
    tree = ast.parse(path.read_text(), str(path))
    names = set()  # the names the module goes by in this file
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.asname or alias.name for alias in node.names if alias.name == OPCHECK}
        elif isinstance(node, ast.ImportFrom) and node.module in ("harness", "harness.checks"):
            names |= {alias.asname or alias.name for alias in node.names if alias.name == "opcheck"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == OPCHECK:
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("_")]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and ast.unparse(node.value) in names:
            found.append((node.lineno, node.attr))
    return found


class PrivateHelpersTests(unittest.TestCase):
    """opcheck's private helpers are its own: every other module checks an operator through
    its public checker, so that the checker is one and can change inside."""

    def test_no_module_outside_opcheck_uses_its_private_names(self):
        paths = [path for folder in ("harness", "test", "scripts", "bench", "examples")
                 for path in (REPOSITORY / folder).rglob("*.py")]
        self.assertGreater(len(paths), 100)
        found = [f"{path.relative_to(REPOSITORY)}:{line}: {name}" for path in paths
                 if path != REPOSITORY / "harness" / "checks" / "opcheck.py"
                 for line, name in private_opcheck_uses(path)]
        self.assertEqual([], found, "use the checker (harness.checks.opcheck.OperatorChecker) or give it what you need")

    def test_the_check_sees_each_form(self):
        with tempfile.TemporaryDirectory() as folder:
            probe = Path(folder) / "probe.py"
            probe.write_text("from harness import opcheck\nimport harness.checks.opcheck\n"
                             "from harness.checks import opcheck as oc\n"
                             "from harness.checks.opcheck import Call, _flattened\n"
                             "opcheck._fresh_copies([])\nharness.checks.opcheck._loss(1)\noc._graphs(2)\n"
                             "opcheck.Call\nother._private\n")
            self.assertEqual([(4, "_flattened"), (5, "_fresh_copies"), (6, "_loss"), (7, "_graphs")],
                             sorted(private_opcheck_uses(probe)))


def _domain(name: str) -> value_domains.Domain:
    return next(domain for domain in value_domains.DOMAINS if domain.name == name)


def _replacing(target, replacement):
    """A backend that runs Dynamo's graph with ``replacement`` called wherever it calls ``target``."""
    def backend(gm, example_inputs):
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target is target:
                node.target = replacement
        gm.recompile()
        return gm.forward

    return backend


def _mean_of_nothing_is_zero(x):
    # A kernel that guards its division: the mean of no element 0, where eager's is NaN.
    return x.sum() / max(x.numel(), 1)


def _index_select_clamped(data, dim, index):
    # A kernel that skips eager's bounds check: an index past the end reads the last row.
    return torch.index_select(data, dim, index.clamp(max=data.shape[dim] - 1))


def _index_put_racing(base, indices, values, accumulate=False):
    # Read, add, store without atomics: of writes to one place, the last lands.
    if not accumulate:
        return torch.index_put(base, indices, values)
    return torch.index_put(base, indices, base[indices] + values)


if __name__ == "__main__":
    unittest.main()
