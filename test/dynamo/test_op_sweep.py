"""Every operator in PyTorch's OpInfo database, eager vs compiled by the backend under test
(CPU, float32, the op's own sample inputs), with ``harness.checks.opcheck.op_check``.

Two tiers, chosen by DYNAMO_SUITE_OP_SWEEP (``run_tests.py --op-sweep``):
* ``quick`` (default): the ops in QUICK_TIER, a spread over the op categories, first
  QUICK_SAMPLES samples each, gradients on the first, the others as inference -- part of
  the default run;
* ``full``: every op in op_db, up to FULL_SAMPLES samples each -- for nightly runs;
* ``none``: no sweep.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterator

import torch
from torch.utils import _pytree as pytree

from harness import BackendTestCase, capabilities, compat, device, dtypes, for_each_backend, settings, variants
from harness import OpCheckFailure, catalogue, op_check, opcheck, random_op_check, value_domains, value_semantics
from harness import tiers, variants_called

SWEEP_ENV = settings.OP_SWEEP
TIERS = settings.OP_SWEEP_TIERS
QUICK_SAMPLES = 2
# The quick tier checks gradients on the first sample only; later samples run with inputs
# that do not require grad, so the backend gets an inference graph. A later sample's backward
# is the same derivative formula at another size, yet on inductor a second fresh compile
# (about 1 s of gcc per op); its forward takes the op's other code paths (cross_entropy's
# probability targets, attention's fused kernel) that the first sample misses, and the
# inference graph is one the training samples never produce.
QUICK_GRADIENT_SAMPLES = 1
FULL_SAMPLES = 6

# By category; "reductions" is also what test_faulty_backends perturbs. Every op here passes
# all of the full tier's samples on the default backends: the expectations do not tell the
# tiers apart, so an op whose failing sample lies past the quick tier's two would XPASS here.
QUICK_TIER = {
    "unary pointwise": ["sin", "exp", "log", "abs", "neg", "sigmoid", "tanh", "sqrt", "rsqrt", "erf",
                        "nn.functional.relu", "nn.functional.gelu", "nn.functional.silu"],
    "binary pointwise": ["add", "mul", "sub", "pow", "maximum", "where", "clamp", "lerp", "atan2"],
    "reductions": ["sum", "mean", "amax", "amin", "prod", "std", "var", "logsumexp", "norm", "linalg.vector_norm"],
    "linear algebra": ["mm", "bmm", "matmul", "addmm", "einsum"],
    "shape and views": ["reshape", "transpose", "permute", "expand", "squeeze", "unsqueeze", "cat", "stack",
                        "split", "narrow", "flip", "roll", "repeat", "tril", "diagonal"],
    "indexing": ["index_select", "gather", "scatter", "masked_fill", "take_along_dim", "index_put"],
    "neural network": ["nn.functional.layer_norm", "nn.functional.conv2d", "nn.functional.linear",
                       "nn.functional.embedding",
                       "nn.functional.max_pool2d", "nn.functional.adaptive_avg_pool2d", "nn.functional.cross_entropy",
                       # The ops of real models a kernel can get wrong that no other default-tier
                       # test reaches (the torchvision and UNet models are nightly-only); batch_norm's
                       # first sample trains, so its running statistics are input mutations.
                       "nn.functional.group_norm", "nn.functional.conv_transpose2d", "nn.functional.batch_norm",
                       "nn.functional.upsample_nearest", "nn.functional.upsample_bilinear"],
    "sorting": ["sort", "topk", "cumsum"],
    # Called as a user calls them, not through OpInfo's seeding wrapper (random_op_check).
    "random": ["nn.functional.dropout", "nn.functional.scaled_dot_product_attention", "bernoulli", "normal",
               "randn_like", "multinomial", "nn.functional.rrelu"],
}


def tier() -> str:
    value = settings.current().get(SWEEP_ENV, "quick")
    if value not in TIERS:
        raise ValueError(f"{SWEEP_ENV}={value!r}: expected one of {', '.join(TIERS)}")
    return value


def _op_db():
    # Importing the database takes seconds (and needs NumPy); only when a sweep runs.
    return compat.opinfo_database()


def op_test_name(op) -> str:
    return op_test_name_of(op.name + (f"_{op.variant_test_name}" if op.variant_test_name else ""))


def op_label(op) -> str:
    """An OpInfo's name with its variant's (``max.reduction_with_dim``)."""
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def op_test_name_of(name: str) -> str:
    return "test_op_" + re.sub(r"\W", "_", name)


def selected_ops() -> list:
    """The full tier's ops (the quick tier's are looked up by name, when their tests run)."""
    if tier() != "full":
        return []
    # Jiterator ops claim CPU dtypes but run only on CUDA/ROCm.
    return [op for op in _op_db() if op.supports_dtype(torch.float32, device.selected_type())
            and not op.name.startswith("jiterator_")]


class _Handed(Exception):
    pass


def hands_to_seeding_wrapper(callable_) -> bool:
    code = getattr(callable_, "__code__", None)
    return code is not None and "wrapper_set_seed" in code.co_names


def one_of_each_rank_first(samples: list, count: int) -> list:
    """``count`` samples, in their order: the first of each input rank, then the earliest
    others. A random op's first samples are often all of one rank, and the rank can decide
    what the backend gets: 3-d attention inputs reach it decomposed, 4-d ones as the fused
    scaled_dot_product_attention kernel."""
    ranks: dict[int, int] = {}
    for index, sample in enumerate(samples):
        ranks.setdefault(sample.input.dim() if isinstance(sample.input, torch.Tensor) else -1, index)
    chosen = sorted(ranks.values())[:count]
    chosen += [index for index in range(len(samples)) if index not in chosen][:count - len(chosen)]
    return [samples[index] for index in sorted(chosen)]


def operator_inside_seeding_wrapper(callable_, args: tuple, kwargs: dict):
    """``(operator, args, kwargs)`` for an OpInfo callable that hands a random operator to
    torch.testing's seeding wrapper, else None.

    The wrapper seeds and restores the generator around the call; Dynamo skips torch.testing
    code, so through it no backend would ever see the operator. Replacing the wrapper with
    one that only records what it was handed gives the call a user makes.
    """
    import torch.testing._internal.common_methods_invocations as opinfo_module

    handed = []

    def record(operator, *call_args, **call_kwargs):
        handed.append((operator, call_args, call_kwargs))
        raise _Handed

    original = getattr(opinfo_module, "wrapper_set_seed", None)
    if original is None or not hands_to_seeding_wrapper(callable_):
        return None
    opinfo_module.wrapper_set_seed = record
    try:
        callable_(*args, **kwargs)
    except _Handed:
        pass
    except Exception:
        return None  # not a wrapped call; op_check will report what this raises
    finally:
        opinfo_module.wrapper_set_seed = original
    return handed[0] if handed else None


def _without_grad(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    return pytree.tree_map_only(torch.Tensor, lambda tensor: tensor.detach(), (args, kwargs))


SPECIAL_VALUES = (float("nan"), float("inf"), -float("inf"))
# The quick tier's test of an op on NaN and infinities: test_op_<name>_nan_and_inf. Apart
# from the op's own test, so that an expected failure on special values (a finding of its
# own) leaves the op's ordinary samples checked. Only for the categories whose kernels
# compare, reduce or normalize, where vectorized code drops NaN or mishandles infinities;
# the others pass a NaN through one arithmetic op or copy it, and each test costs about
# 0.4 s per backend warm, 2 s cold on inductor (docs/speed.md).
SPECIAL_SUFFIX = "_nan_and_inf"
SPECIAL_VALUE_CATEGORIES = ("binary pointwise", "reductions", "neural network", "sorting")


def with_special_values(sample) -> tuple[tuple, dict]:
    """``(args, kwargs)`` of an OpInfo sample as real data brings it: the first elements of its
    input (the data; of a list of tensors, the first) NaN, +inf and -inf, as many as it has.
    The other arguments (weights, bounds, indices, sizes) keep their values: real data carries
    special values in what flows through a model, not in its parameters. Nothing requires grad."""
    def spoil(tensor: torch.Tensor) -> torch.Tensor:
        tensor = tensor.detach().clone()
        if tensor.is_floating_point():
            for position, value in zip(range(tensor.numel()), SPECIAL_VALUES):
                tensor[torch.unravel_index(torch.tensor(position), tensor.shape)] = value
        return tensor

    data = sample.input
    if isinstance(data, (list, tuple)) and data and isinstance(data[0], torch.Tensor):
        data = type(data)([spoil(data[0]), *data[1:]])
    elif isinstance(data, torch.Tensor):
        data = spoil(data)
    args, kwargs = _without_grad((data, *sample.args), sample.kwargs)
    return args, kwargs


# The tests of the ops over the value domains of harness/checks/value_domains.py, the ops
# compiled together, one compile per test:
# * test_values_float32: every op of these categories, every domain but the subnormal
#   numbers, with gradients; the shape domains (empty and 0-d tensors through reductions and
#   indexing) are a compile each, so they run here alone, in either tier;
# * test_values_<dtype>, for the catalogue's other dtypes: in the quick tier each op in one of
#   them (taken in turn, among those it supports), so that every dtype meets ops of several
#   categories within the default run's budget; in the full tier every op in every one;
# * test_subnormals_float32 (and, in the full tier, of each floating dtype): subnormal inputs,
#   forward only. A test of its own, since flushing them is a choice some hardware makes (a
#   backend's expectations accept it as [[value_difference]] domain = "subnormal").
# Not the random ops, whose draws eager and a backend may make differently.
VALUE_DOMAIN_CATEGORIES = tuple(category for category in QUICK_TIER if category != "random")
SUBNORMAL = "subnormal"
# In the quick tier, the subnormal test's ops: the arithmetic, where a flush shows first.
QUICK_SUBNORMAL_CATEGORIES = ("unary pointwise", "binary pointwise", "reductions")


def _make_test(test_name: str, label: str, find_op, samples: int, gradient_samples: int,
               special_values: bool = False):
    """The test of the OpInfo ``find_op()`` returns (None: this torch has none by that name);
    with ``special_values``, its test on NaN and infinities."""
    def test(self):
        op = find_op()
        if op is None:
            self.skipTest(f"torch {torch.__version__} has no OpInfo {label}")
        if special_values:
            self.check_op_on_special_values(op)
        else:
            self.check_op(op, samples, gradient_samples)

    test.__name__ = test_name
    test.__doc__ = f"OpInfo {label}"
    return test


def _quick_op(name: str):
    """The quick tier's op named ``name`` (its plain variant), looked up when its test runs:
    importing the database takes seconds, which listing or collecting the tests then skips."""
    return next((op for op in _op_db() if op.name == name and not op.variant_test_name), None)


@variants.opt_out("automatic_dynamic", "each sample is compiled on its own with dynamic=False, so no size ever changes; "
                  "the dynamic variant runs the operators with symbolic sizes")
@variants.opt_out("compiled_autograd", "op_check resets Dynamo before each sample, which turns compiled autograd off")
@dtypes.numeric
class OpSweepTests(BackendTestCase):
    """One test per OpInfo operator: every sample checked by op_check."""

    def check_op(self, op, samples: int, gradient_samples: int) -> None:
        where = device.selected_type()
        if not op.supports_dtype(self.dtype, where):
            self.skipTest(f"OpInfo '{op.name}' does not support {self.dtype_name} on {where}")
        requires_grad = op.supports_autograd and self.dtype in op.supported_backward_dtypes(where)
        checked = 0
        chosen = op.sample_inputs(device.selected_name(), self.dtype, requires_grad=requires_grad)
        if hands_to_seeding_wrapper(op.op):
            chosen = one_of_each_rank_first(list(chosen), samples)
        for sample in chosen:
            if checked == samples:
                break
            args = (sample.input, *sample.args)
            seeded = operator_inside_seeding_wrapper(op.op, args, sample.kwargs)
            with self.subTest(sample=checked):
                # Both checks raise when the backend received no graph for the sample.
                if seeded is not None:
                    random_op_check(*seeded, self.counter, testcase=self)
                elif checked < gradient_samples:
                    op_check(op.op, args, sample.kwargs, self.counter, testcase=self,
                             check_gradients="auto" if requires_grad else False, check_data_specialization=True)
                else:
                    op_check(op.op, *_without_grad(args, sample.kwargs), self.counter, testcase=self,
                             check_gradients=False, check_data_specialization=True)
            checked += 1
        if checked == 0:
            self.skipTest(f"OpInfo '{op.name}' has no {self.dtype_name} samples on {device.selected_name()}")

    def check_op_on_special_values(self, op) -> None:
        """The op's first sample with NaN and infinities in its floating inputs, forward only."""
        where = device.selected_type()
        if not op.supports_dtype(self.dtype, where):
            self.skipTest(f"OpInfo '{op.name}' does not support {self.dtype_name} on {where}")
        first = next(iter(op.sample_inputs(device.selected_name(), self.dtype, requires_grad=False)), None)
        if first is None:
            self.skipTest(f"OpInfo '{op.name}' has no {self.dtype_name} samples on {device.selected_name()}")
        op_check(op.op, *with_special_values(first), self.counter, testcase=self, check_gradients=False)

    def check_reference_inputs(self, group: str, part: str | None = None) -> None:
        """The group's reference inputs (reference_calls; of the options group, those of one of
        OPTION_GROUPS), compiled together, laid out as given."""
        if self.dtype != torch.float32:
            self.skipTest("the reference-input tests choose their own dtypes: they run in the float32 classes")
        calls = reference_calls(group, part)
        if not calls:
            ops = "no op" if part is None else f"no {part} op"
            self.skipTest(f"{ops} of the tier has {group} reference inputs on {device.selected_type()}")
        domain = value_domains.Domain(f"reference {group}", REFERENCE_GROUPS[group],
                                      rewrite=lambda call, tensors: list(tensors))
        found = value_domains.batch_check(calls, self.counter, domains=(domain,), testcase=self, exact_layouts=True,
                                          gradients=group in REFERENCE_GRADIENTS)
        accepted = self.accepted_value_differences()
        found = [each for each in found if not any(entry.accepts(each.op, each.domain) for entry in accepted)]
        if found:
            failure = OpCheckFailure("; ".join(map(str, found)))
            raise capabilities.attach_caught(failure, [each.raised for each in found])

    def test_error_inputs(self):
        """PyTorch's error inputs of the ops (error_calls), each compiled alone: the compiled
        call raises what eager raises, not a result. An error in the data reaches the code the
        backend compiled (compiled on valid values first, OperatorChecker.raises_as_eager); one
        in the sizes, dtypes or arguments is rejected by Dynamo while tracing. Both counts go
        to results.json's metrics (``error_inputs_reached``, ``error_inputs_rejected_by_dynamo``)."""
        if self.dtype != torch.float32:
            self.skipTest("the error-input test chooses its own inputs: it runs in the float32 class")
        calls = error_calls()
        if not calls:
            self.skipTest(f"no op of the tier has error inputs eager rejects on {device.selected_type()}")
        checker = opcheck.OperatorChecker(self.counter, testcase=self)
        accepted = self.accepted_value_differences()  # domain "error inputs": a call's difference accepted
        problems, reached = [], 0
        for call in calls:
            verdict = checker.raises_as_eager(call)
            reached += verdict.reached
            if verdict.problem and not any(entry.accepts(call.name, ERROR_DOMAIN) for entry in accepted):
                problems.append(verdict.problem)
        self.record_metric(ERRORS_REACHED, reached)
        self.record_metric(ERRORS_REJECTED, len(calls) - reached)
        compat.reset_dynamo()
        self.compile(lambda x: x.sin() + 1)(torch.randn(3))  # a graph of its own, to show the backend ran
        if problems:
            raise OpCheckFailure("; ".join(problems))

    def test_documented_type_promotion(self):
        """The dtype pairs PyTorch's type promotion documents, through each promoting operator
        with the other operand at each position it takes (promotion_calls), compiled together."""
        if self.dtype != torch.float32:
            self.skipTest("the promotion pairs choose their own dtypes: they run in the float32 classes")
        domain = value_domains.Domain("documented type promotion", "operands of two dtypes, 0-d tensors and numbers",
                                      rewrite=lambda call, tensors: list(tensors))
        found = value_domains.batch_check(promotion_calls(), self.counter, domains=(domain,), testcase=self,
                                          exact_layouts=True, gradients=False)
        if found:
            failure = OpCheckFailure("; ".join(map(str, found)))
            raise capabilities.attach_caught(failure, [each.raised for each in found])

    def check_value_semantics(self, dtypes: tuple[torch.dtype, ...], gradients: bool) -> None:
        """The edges eager defines that no value domain holds (harness/checks/value_semantics.py:
        exact halves, crossed bounds, fully masked rows, float8's range, unsigned integers, an
        embedding's options), in ``dtypes``, compiled together."""
        if self.dtype != torch.float32:
            self.skipTest("the value-semantics tests choose their own dtypes: they run in the float32 classes")
        found = value_semantics.check(self.counter, dtypes, gradients=gradients, testcase=self)
        accepted = self.accepted_value_differences()
        kept = [each for each in found if not any(entry.accepts(each.op, each.domain) for entry in accepted)]
        if kept:
            failure = OpCheckFailure("; ".join(map(str, kept)))
            raise capabilities.attach_caught(failure, [each.raised for each in kept])

    def test_value_semantics(self):
        """Each value semantics in float32, forward and backward, and in uint32."""
        self.check_value_semantics(value_semantics.WITH_GRADIENTS, gradients=True)

    @tiers.nightly("the same semantics in four more dtypes, forward only: test_value_semantics carries each "
                   "of them in the default run (2-8 s more per backend, 20 s cold on inductor)")
    def test_value_semantics_in_other_dtypes(self):
        """Each value semantics in float64, float16, bfloat16, uint16 and uint64, forward only."""
        self.check_value_semantics(value_semantics.OTHER_DTYPES, gradients=False)

    def check_ops_on_value_domains(self, dtype: torch.dtype, subnormals: bool) -> None:
        """The ops the tier gives ``dtype`` (value_domain_ops), each on one sample in that
        dtype (value_domain_call), over the value domains (the subnormal numbers only, or all
        others; the shape domains in float32 alone), compiled together; gradients in float32
        outside the subnormal test, where an op has them."""
        if self.dtype != torch.float32:
            self.skipTest("the value-domain tests choose their own dtypes: they run in the float32 classes")
        where = device.selected_type()
        gradients = dtype == torch.float32 and not subnormals
        calls = []
        for category, op in value_domain_ops(dtype, subnormals):
            grad = gradients and op.supports_autograd and dtype in op.supported_backward_dtypes(where)
            call = value_domain_call(op, category, dtype, grad)
            if call is not None:
                calls.append(call)
        if not calls:
            self.skipTest(f"no op of the tier has {dtype} samples on {where}")
        domains = tuple(domain for domain in value_domains.DOMAINS if (domain.name == SUBNORMAL) == subnormals
                        and (dtype == torch.float32 or not domain.changes_shapes))
        found = value_domains.batch_check(calls, self.counter, domains=domains, gradients=gradients, testcase=self)
        accepted = self.accepted_value_differences()
        kept = [each for each in found if not any(entry.accepts(each.op, each.domain) for entry in accepted)]
        if kept:
            failure = OpCheckFailure(f"{str(dtype).removeprefix('torch.')}: " + "; ".join(map(str, kept)))
            raise capabilities.attach_caught(failure, [each.raised for each in kept])


def value_domain_ops(dtype: torch.dtype, subnormals: bool) -> list[tuple[str, object]]:
    """(category, OpInfo) of the ops a value-domain test of ``dtype`` checks in this tier."""
    where = device.selected_type()
    categories = QUICK_SUBNORMAL_CATEGORIES if subnormals and tier() == "quick" else VALUE_DOMAIN_CATEGORIES
    chosen = []
    others = [other for other in value_domains.SWEPT_DTYPES if other != torch.float32]
    for index, (category, name) in enumerate((category, name) for category in categories
                                             for name in QUICK_TIER[category]):
        op = _quick_op(name)
        if op is None or hands_to_seeding_wrapper(op.op) or not op.supports_dtype(dtype, where):
            continue
        if tier() == "quick" and dtype != torch.float32:
            supported = [other for other in others if op.supports_dtype(other, where)]
            if supported[index % len(supported)] != dtype:  # this op's turn is another dtype's
                continue
        chosen.append((category, op))
    return chosen


# Of an op whose first sample takes index tensors, the samples searched for one that repeated
# indices reach (an index of one entry cannot repeat: index_select's, index_put's and the
# embedding's first samples have one).
INDEX_SAMPLES_SEARCHED = 4
REPEATED_INDICES, = (domain for domain in value_domains.DOMAINS if domain.name == "repeated indices")


def value_domain_call(op, category: str, dtype: torch.dtype, grad: bool) -> opcheck.Call | None:
    """The op's first sample in ``dtype`` as a call of the value-domain tests; where that
    sample takes index tensors, the first of its first INDEX_SAMPLES_SEARCHED samples that the
    repeated indices reach (two entries or more, eager defined on repeats:
    value_domains.OVERWRITING), if one does. None: no sample."""
    first = None
    for count, sample in enumerate(op.sample_inputs(device.selected_name(), dtype, requires_grad=grad)):
        args, kwargs = (sample.input, *sample.args), sample.kwargs
        call = opcheck.Call(op.name, op.op, *((args, kwargs) if grad else _without_grad(args, kwargs)),
                            every_operand=category in value_domains.OPERAND_CATEGORIES, category=category)
        tensors = call.tensors()
        if first is None:
            first = call
            if not value_domains.index_positions(call, tensors):
                break
        if REPEATED_INDICES.inputs(call, tensors) is not None:
            return call
        if count + 1 == INDEX_SAMPLES_SEARCHED:
            break
    return first


# PyTorch's reference inputs (OpInfo.reference_inputs) of the sweep's ops: beyond an op's
# samples, the inputs PyTorch's own tests vary one thing at a time with (every broadcasting
# pair, strided and expanded copies, Python numbers and 0-d operands, sizes of 812 and
# 1029x917, extremal values). Grouped by what they vary, a test per group, so that a failure
# names the kind; in a group, each op's first input and then each that shows its kernel a
# feature of the catalogue the op's earlier ones did not (a broadcast along another position,
# a stride of 0, a NaN: harness/features), REFERENCE_PER_OP at most, compiled together and
# called once (harness/checks/value_domains.batch_check), each tensor laid out as given.
# Inputs that vary nothing of these are the ops' own tests' business. The tensor-dtype pairs
# PyTorch's type promotion documents are a test of their own (test_documented_type_promotion).
REFERENCE_GROUPS = {
    "broadcasting": "operands of different shapes broadcast against each other",
    "scalars and promotion": "Python numbers and 0-d tensors as operands, operands of different dtypes",
    "layouts": "non-contiguous, transposed, offset and expanded tensors",
    "sizes": "empty tensors and tensors of 2^16 elements or more",
    "values": "infinities, NaN and values past 10^4",
    "options": "each op's flags and modes set each way its samples set them (keepdim, approximate, include_self...)",
    "first samples": "each op's first sample, with gradients",
}
POINTWISE_CATEGORIES = ("unary pointwise", "binary pointwise")
# The categories whose kernels each group's inputs reach (the other categories' reference
# inputs vary their own arguments: a pooling's kernel sizes, a norm's weights).
REFERENCE_CATEGORIES = {
    "broadcasting": ("binary pointwise",),
    "scalars and promotion": ("binary pointwise",),
    "layouts": (*POINTWISE_CATEGORIES, "reductions", "linear algebra", "shape and views"),
    "sizes": (*POINTWISE_CATEGORIES, "reductions"),
    "values": (*POINTWISE_CATEGORIES, "reductions"),
}
REFERENCE_PER_OP = {"quick": 3, "full": 12}
# The features of the catalogue that make a further input of a group worth its call: what
# the group varies.
REFERENCE_FEATURES = {
    "broadcasting": {"broadcast-first", "broadcast-middle", "broadcast-last", "broadcast-rank"},
    "scalars and promotion": {feature.name for feature in catalogue.in_group(catalogue.DTYPE)}
                             | {"zero-dim-operand", "scalar-operand"},
    "layouts": {feature.name for feature in catalogue.in_group(catalogue.LAYOUT)},
    "sizes": {"empty", "long-reduction", "large-tensor"},
    "values": {feature.name for feature in catalogue.in_group(catalogue.VALUES)},
}
# Gradients where the group's kernels' backward differs from the ordinary one: a broadcast
# operand's gradient is summed over the broadcast dimensions, a strided input's is strided.
REFERENCE_GRADIENTS = ("broadcasting", "layouts", "options", "first samples")
# Kernel variants: an op's samples (OpInfo.sample_inputs) that set its options (keepdim,
# approximate, include_self, count_include_pad, correction, rounding_mode) another way than
# its earlier ones did, read off the ATen calls eager makes (recorder.variants_called; which
# dimension a call reduces is no variant). A backend implements each variant of a kernel
# apart and gets one wrong alone; the sweep's first two samples set most flags one way. The
# ops: the quick tier's, and OPTION_OPS: those whose flags the pool set one way only
# (docs/coverage.md, kernel variants: argmax's keepdim, scatter_reduce's include_self, topk's
# largest, softmax's half_to_float) and the pooling, loss and activation functions models
# call with their flags set (two samples each: 80-odd calls, 24 s on aot_eager, two minutes
# of inductor compiling with gradients); in the full tier, every op of op_db.
OPTION_OPS = ("argmax", "argmin", "max", "min", "topk", "any", "nansum", "prod", "var_mean", "std_mean", "softmax",
              "log_softmax", "scatter_reduce", "div", "nn.functional.avg_pool2d", "nn.functional.max_pool2d",
              "nn.functional.pad", "nn.functional.nll_loss", "nn.functional.mse_loss",
              "nn.functional.smooth_l1_loss", "nn.functional.binary_cross_entropy",
              "nn.functional.leaky_relu", "nn.functional.softplus", "nn.functional.hardtanh", "cumsum", "searchsorted")
OPTIONS_PER_OP = {"quick": 2, "full": 12}
# The samples of an op searched for those: max_pool2d has 1440 (every kernel size, stride,
# padding and dilation), its options all set by its first 13, and reading the ATen calls of
# the rest was most of the group's cost (building the quick tier's calls took 26 s on two
# loaded cores, 11 s with this bound, the same 75 calls). Of op_db's other ops with more
# samples, those read through (cdist, linspace, logspace, unfold, max_pool1d,
# linear_cross_entropy; torch 2.13.0, CPU) set none first past their 100th.
OPTION_SAMPLES_SEARCHED = 128
# The options group's tests: one per op category (op_category), so that each compiles the
# calls of a few ops (all of them in one graph took 14 s on aot_eager and 46 s of inductor
# compiling), a failure names the kind of op, and the default tier can keep one for the
# operators only it calls. The reductions, the neural-network functions and the ops of no
# category (scatter_reduce's five reductions, var_mean's corrections, softmax) are split
# further by what they are (OPTION_SUBGROUPS, by name), a category's others kept under its
# own name.
OPTION_SUBGROUPS = {
    "reductions": {
        "norms": ("norm",),
        "index and logical reductions": ("argmax", "argmin", "any", "all"),
    },
    "neural network": {
        "pooling and padding": ("pool", "pad"),
        "losses": ("loss", "cross_entropy"),
        "activations": ("relu", "elu", "gelu", "silu", "mish", "softplus", "softsign", "softshrink", "hardshrink",
                        "tanhshrink", "hardtanh", "hardswish", "hardsigmoid", "logsigmoid", "threshold", "glu"),
    },
    "other": {
        "scatters": ("scatter",),
        "statistics": ("var_mean", "std_mean"),
        "softmax": ("softmax",),
    },
}
OPTION_GROUPS = ("unary pointwise", "binary pointwise", *OPTION_SUBGROUPS["reductions"], "reductions",
                 "linear algebra", "shape and views", "indexing", *OPTION_SUBGROUPS["neural network"], "neural network",
                 "sorting", *OPTION_SUBGROUPS["other"], "other")
# Pairs PyTorch's type promotion documents (test/test_binary_ufuncs.py's test_type_promotion
# and the torch.result_type rules): a tensor-dtype pair, a 0-d operand of another dtype
# (which does not widen a dimensioned one of the same category), a Python number.
PROMOTION_PAIRS = (
    (torch.int16, (3,), torch.int32, (3,)), (torch.float32, (3,), torch.float64, (3,)),
    (torch.int64, (3,), torch.float32, (3,)), (torch.float64, (3,), torch.complex64, (3,)),
    (torch.uint8, (3,), torch.int8, (3,)), (torch.bool, (3,), torch.int8, (3,)),
    (torch.float16, (3,), torch.bfloat16, (3,)), (torch.float32, (2, 3), torch.float64, ()),
    (torch.int32, (2, 3), torch.float32, ()), (torch.float16, (2, 3), torch.float32, ()),
    (torch.int8, (2, 3), torch.int64, ()), (torch.int64, (2, 3), 2.5, None), (torch.float16, (2, 3), 0.1, None),
)


def _metas(args: tuple, kwargs: dict) -> list:
    from harness import meta_of

    return [meta for value in pytree.tree_leaves((args, kwargs)) if (meta := meta_of(value)) is not None]


def reference_group(category: str, args: tuple, kwargs: dict) -> str | None:
    """The group of REFERENCE_GROUPS a reference input belongs to (the first it fits), or None."""
    metas = _metas(args, kwargs)
    if any(meta.numel == 0 or (meta.numel or 0) >= 2 ** 16 for meta in metas):
        return "sizes"
    if any(meta.contiguous() is False or (meta.offset or 0) > 0 for meta in metas):
        return "layouts"
    if category in POINTWISE_CATEGORIES and (
            any(type(value) in (int, float, complex) for value in args[1:]) or len({meta.dtype for meta in metas}) > 1
            or any(meta.ndim == 0 for meta in metas) and any(meta.ndim > 0 for meta in metas)):
        return "scalars and promotion"
    if len({meta.shape for meta in metas if meta.ndim}) > 1 and category in POINTWISE_CATEGORIES + ("neural network",):
        return "broadcasting"
    values = [value for value in pytree.tree_leaves((args, kwargs))
              if isinstance(value, torch.Tensor) and value.is_floating_point() and value.numel()]
    if any(bool((~value.isfinite()).any() or (value.abs() > 1e4).any()) for value in values):
        return "values"
    return None


def reference_calls(group: str, part: str | None = None) -> list[opcheck.Call]:
    """The calls of one group: each op's first inputs of that group, in float32, with gradients
    where the op has them; of the options group, those of the ops of one of OPTION_GROUPS."""
    if group == "options":
        return option_calls(part)
    if group == "first samples":
        return first_sample_calls(part)
    where, calls = device.selected_type(), []
    for category, op in reference_ops(group):
        if not op.supports_dtype(torch.float32, where):
            continue
        found, shown = 0, set()
        for sample in _reference_inputs(op, where):
            args, kwargs = (sample.input, *sample.args), sample.kwargs
            if reference_group(category, args, kwargs) != group:
                continue
            features = _features_shown(op, args, kwargs) & REFERENCE_FEATURES[group]
            if found and features <= shown:
                continue
            shown |= features
            calls.append(opcheck.Call(f"{op_label(op)} (reference input {found})", op.op, args, kwargs,
                                      every_operand=category in value_domains.OPERAND_CATEGORIES, category=category))
            found += 1
            if found == REFERENCE_PER_OP[tier()]:
                break
    return calls


def reference_ops(group: str) -> list[tuple[str, object]]:
    """(category, OpInfo) of the ops whose reference inputs a group draws from: the quick
    tier's of the group's categories; in the full tier, every op of op_db in them (op_category)."""
    if tier() == "full":
        return [(category, op) for op in selected_ops()
                if (category := op_category(op)) in REFERENCE_CATEGORIES[group] and not hands_to_seeding_wrapper(op.op)]
    ops = ((category, _quick_op(name)) for category in REFERENCE_CATEGORIES[group] for name in QUICK_TIER[category])
    return [(category, op) for category, op in ops if op is not None]


def op_category(op) -> str:
    """The sweep's category of an OpInfo: its quick-tier one, else what its OpInfo class says
    (a unary or binary ufunc, a reduction) or its name's namespace (linalg, nn.functional)."""
    from torch.testing._internal.opinfo.core import BinaryUfuncInfo, ReductionOpInfo, UnaryUfuncInfo

    if not op.variant_test_name:
        for category, names in QUICK_TIER.items():
            if op.name in names:
                return category
    kinds = ((UnaryUfuncInfo, "unary pointwise"), (BinaryUfuncInfo, "binary pointwise"), (ReductionOpInfo, "reductions"))
    for kind, category in kinds:
        if isinstance(op, kind):
            return category
    if op.name.startswith("linalg."):
        return "linear algebra"
    return "neural network" if op.name.startswith("nn.functional.") else "other"


def option_ops() -> list:
    """The ops of the options group: every variant of each (``max``'s reduction and binary)."""
    if tier() == "full":
        return [op for op in selected_ops() if not hands_to_seeding_wrapper(op.op)]
    names = {*(name for category, names in QUICK_TIER.items() if category != "random" for name in names), *OPTION_OPS}
    return [op for op in _op_db() if op.name in names and not hands_to_seeding_wrapper(op.op)]


def option_group(op) -> str:
    """The one of OPTION_GROUPS whose test checks an op's options: its category (op_category),
    or the subgroup of it (OPTION_SUBGROUPS) whose words its name holds."""
    category = op_category(op)
    for group, words in OPTION_SUBGROUPS.get(category, {}).items():
        if any(word in op.name.removeprefix("nn.functional.") for word in words):
            return group
    return category if category in OPTION_GROUPS else "other"


def option_calls(part: str | None = None) -> list[opcheck.Call]:
    """Of each op (of OPTION_GROUPS' ``part``, if given), each sample that asks its kernels
    for an option's value the op's earlier samples did not (a quick-tier op's first
    QUICK_SAMPLES, its own test's, only count as asked), OPTIONS_PER_OP at most; not an op
    whose eager calls disagree with each other."""
    where, calls = device.selected_type(), []
    quick = {name for names in QUICK_TIER.values() for name in names}
    for op in option_ops():
        if part is not None and option_group(op) != part:
            continue
        if not op.supports_dtype(torch.float32, where):
            continue
        label = op_label(op)
        asked: set[str] = set()
        found = 0
        for index, sample in enumerate(_inputs(op, where, op.sample_inputs)):
            if index == OPTION_SAMPLES_SEARCHED:
                break
            args, kwargs = (sample.input, *sample.args), sample.kwargs
            # Which dimension a call reduces or moves is no variant of its kernel.
            new = {name for name in variants_called(op.op, args, kwargs)
                   if not name.split(": ", 1)[1].startswith("dim")} - asked
            asked |= new
            if tier() == "quick" and op.name in quick and index < QUICK_SAMPLES or not new:
                continue
            if not _agrees_with_itself(op.op, args, kwargs):
                break
            calls.append(opcheck.Call(f"{label} (sample {index}: {', '.join(sorted(new))})", op.op, args, kwargs,
                                      category="options"))
            found += 1
            if found == OPTIONS_PER_OP[tier()]:
                break
    return calls


# Every ATen operator the sweep's ops call, in a few graphs: each op's first sample (with
# gradients where it has them) of the options group's ops, those of a category (op_category)
# compiled together. An op's own test compiles each of its samples apart, and the default
# tier, which keeps a test for every operator the pool calls, paid that per operator: the
# backward of a loss, a pooling or an activation was called only by its op's test or by an
# options test of a dozen calls.
FIRST_SAMPLE_GROUPS = (*(category for category in QUICK_TIER if category != "random"), "other")
# And ops outside the options group whose ATen operators the pool called only in a generated
# program's graph or a model's (ceil, floor, take, nan_to_num, the complex views...), which
# the default tier kept for that one operator at 5 to 25 s of inductor compiling each
# (2026-12-07); here each costs its share of a category's graph.
FIRST_SAMPLE_OPS = ("ceil", "floor", "isinf", "nan_to_num", "fmax", "minimum", "take", "complex", "view_as_complex",
                    "dot", "mv")


def first_sample_calls(part: str | None = None) -> list[opcheck.Call]:
    """Of each op of the options group and FIRST_SAMPLE_OPS (of category ``part``, if given),
    its first sample."""
    where, calls = device.selected_type(), []
    ops = option_ops()
    ops += [op for op in _op_db() if op.name in FIRST_SAMPLE_OPS and not op.variant_test_name and op not in ops]
    for op in ops:
        if part is not None and op_category(op) != part or not op.supports_dtype(torch.float32, where):
            continue
        sample = next(iter(_inputs(op, where, op.sample_inputs)), None)
        if sample is not None:
            calls.append(opcheck.Call(f"{op_label(op)} (sample 0)", op.op, (sample.input, *sample.args),
                                      sample.kwargs, category=op_category(op)))
    return calls


# PyTorch's error inputs (OpInfo.error_inputs): arguments eager rejects, each with the
# exception it raises and a pattern of its message. The compiled call must raise too, an
# exception of that type (Dynamo raising it during tracing wraps it: its cause then) whose
# message matches where eager's does. A kernel that skips eager's check returns garbage or
# crashes instead: "validation lost", pytorch#197554 (binary_cross_entropy's targets outside
# [0, 1], smooth_l1_loss's negative beta, index_add's negative index). Each is compiled alone,
# since a call that raises ends its graph; the ops are the options group's (every op of
# op_db in the full tier), ERRORS_PER_OP each at most.
ERRORS_PER_OP = {"quick": 4, "full": 100}
# The ops of op_db with error inputs in the data, beside the options group's, in the quick
# tier: the only ones whose error can reach the code a backend compiled (the rest are sizes,
# dtypes and arguments, rejected by Dynamo while tracing). Surveyed on torch 2.13.0 CPU: 18 of
# op_db's 691 error inputs eager rejects have values it accepts (opcheck.valid_values), in
# gather, scatter, scatter_add, cov and multinomial; the last two check their data outside any
# graph (Dynamo breaks the graph there), so three ops reach a backend. The full tier takes
# every op anyway.
DATA_ERROR_OPS = ("gather", "scatter", "scatter_add")
# An error input's difference accepted in the expectations: [[value_difference]] with this domain.
ERROR_DOMAIN = "error inputs"
# test_error_inputs' counts in results.json's metrics: the error inputs that reached the code
# the backend compiled, and those Dynamo rejected while tracing (sizes, dtypes, arguments).
ERRORS_REACHED, ERRORS_REJECTED = "error_inputs_reached", "error_inputs_rejected_by_dynamo"


def error_calls() -> list[opcheck.Call]:
    """Each op's error inputs on which eager raises the exception the OpInfo names, those
    whose error is in the data first (opcheck.valid_values: they reach the code the backend
    compiled; the others Dynamo rejects while tracing)."""
    calls = []
    ops = option_ops()
    if tier() == "quick":
        ops += [op for op in _op_db() if op.name in DATA_ERROR_OPS and op not in ops]
    for op in ops:
        label = op_label(op)
        try:
            errors = list(op.error_inputs(device.selected_name()))
        except Exception:  # noqa: BLE001 -- a generator this device or torch cannot run
            continue
        found = []
        for index, error in enumerate(errors):
            sample = error.sample_input
            args, kwargs = (sample.input, *sample.args), sample.kwargs
            message = _eager_error(op.op, args, kwargs, error.error_type)
            if message is not None:
                found.append(opcheck.Call(f"{label} (error input {index})", op.op, args, kwargs,
                                          raises=opcheck.EagerError(error.error_type, error.error_regex, message)))
        if len(found) > ERRORS_PER_OP[tier()]:  # stable: the catalogue's order otherwise
            found.sort(key=lambda call: opcheck.valid_values(call) is None)
        calls += found[:ERRORS_PER_OP[tier()]]
    return calls


def _eager_error(func, args: tuple, kwargs: dict, error_type: type) -> str | None:
    """The message eager raises of ``error_type`` on this call; None if it raises no such
    error here (an error input written for another device or torch)."""
    try:
        with torch.no_grad():
            func(*args, **kwargs)
    except error_type as error:
        return str(error)
    except Exception:  # noqa: BLE001
        return None
    return None


def _agrees_with_itself(func, args: tuple, kwargs: dict) -> bool:
    try:
        with torch.no_grad():
            first, second = func(*args, **kwargs), func(*args, **kwargs)
        torch.testing.assert_close(first, second, rtol=0, atol=0, equal_nan=True)
        return True
    except Exception:
        return False


def _features_shown(op, args: tuple, kwargs: dict) -> set[str]:
    """The catalogue's features the op's eager call on an input shows (none if it raises)."""
    from harness import of_values

    try:
        with torch.no_grad():
            return of_values(op.op, args, kwargs, op.op(*args, **kwargs))
    except Exception:
        return set()


def _reference_inputs(op, where: str) -> Iterator:
    return _inputs(op, where, op.reference_inputs)


def _inputs(op, where: str, source: Callable) -> Iterator:
    """The op's float32 inputs from ``source`` (its reference or sample inputs), one at a
    time, requiring grad where the op has gradients and the OpInfo can make such inputs (some
    generators ask for integer tensors that require grad: from there on, none does)."""
    grad = op.supports_autograd and torch.float32 in op.supported_backward_dtypes(where)
    given = 0
    try:
        for sample in source(device.selected_name(), torch.float32, requires_grad=grad):
            given += 1
            if _strided(sample):
                yield sample
    except (ValueError, RuntimeError):
        if not grad:
            return
        for index, sample in enumerate(source(device.selected_name(), torch.float32)):
            if index >= given and _strided(sample):
                yield sample


def _strided(sample) -> bool:
    """Whether every tensor of a sample is dense (sparse layouts are the sparse tests' business:
    the checks compare and lay out strided tensors)."""
    values = pytree.tree_leaves((sample.input, sample.args, sample.kwargs))
    return all(value.layout == torch.strided for value in values if isinstance(value, torch.Tensor))


def promotion_calls() -> list[opcheck.Call]:
    calls = []
    for left, left_shape, right, right_shape in PROMOTION_PAIRS:
        a = (torch.arange(1, 7).reshape(2, 3)[:, :] if left_shape == (2, 3) else torch.tensor([1, 2, 3])).to(left)
        b = right if right_shape is None else (torch.tensor(2) if right_shape == () else torch.tensor([3, 1, 2])).to(right)
        label = f"{str(left).removeprefix('torch.')}{list(left_shape)} with " + (
            repr(b) if right_shape is None else f"{str(right).removeprefix('torch.')}{list(right_shape)}")
        for name, func, args in _promoting_calls(a, b):
            calls.append(opcheck.Call(f"{name} of {label} (type promotion)", func, args, {},
                                      every_operand=True, category="binary pointwise"))
    return calls


def _promoting_calls(a: torch.Tensor, b: Any) -> list[tuple[str, Callable, tuple]]:
    """Each operator that promotes its operands to one dtype, with ``b`` at each position it
    can take where ``b`` is a 0-d tensor or a number: a kernel may promote its first two
    operands right and not its third (``where`` widening to a 0-d value's dtype)."""
    calls = [(func.__name__, func, (a, b)) for func in (torch.add, torch.mul, torch.div)]
    if isinstance(b, torch.Tensor) and b.dim():
        return calls  # two dimensioned tensors: the binary kernels' business
    condition = torch.arange(a.numel()).reshape(a.shape) % 2 == 0
    calls += [("where, other", torch.where, (condition, a, b)), ("where, self", torch.where, (condition, b, a))]
    if not a.is_complex() and a.dtype != torch.bool:
        calls += [("maximum", torch.maximum, (a, b))] if isinstance(b, torch.Tensor) else []
        calls.append(("clamp, min", torch.clamp, (a, b)))
    return calls


def _reference_test(group: str, part: str | None = None):
    def test(self):
        self.check_reference_inputs(group, part)

    test.__name__ = "test_reference_" + " ".join(filter(None, (group, part))).replace(" ", "_")
    test.__doc__ = f"the ops over PyTorch's reference inputs: {REFERENCE_GROUPS[group]}"
    if part is not None:
        test.__doc__ += f"; the {part} ops"
    return test


def _values_test(dtype: torch.dtype, subnormals: bool):
    def test(self):
        self.check_ops_on_value_domains(dtype, subnormals)

    name = str(dtype).removeprefix("torch.")
    test.__name__ = f"test_{'subnormals' if subnormals else 'values'}_{name}"
    test.__doc__ = (f"the ops on subnormal {name} numbers" if subnormals
                    else f"the ops over the value domains in {name}")
    return test


def _populate() -> None:
    if tier() == "none":
        return
    full = tier() == "full"
    samples = FULL_SAMPLES if full else QUICK_SAMPLES
    gradient_samples = FULL_SAMPLES if full else QUICK_GRADIENT_SAMPLES
    if tier() == "quick":
        for name in (name for names in QUICK_TIER.values() for name in names):
            setattr(OpSweepTests, op_test_name_of(name), _make_test(
                op_test_name_of(name), f"'{name}'", lambda name=name: _quick_op(name), samples, gradient_samples))
        for name in (name for category in SPECIAL_VALUE_CATEGORIES for name in QUICK_TIER[category]):
            special = op_test_name_of(name) + SPECIAL_SUFFIX
            setattr(OpSweepTests, special, _make_test(special, f"'{name}' on NaN and infinities",
                                                      lambda name=name: _quick_op(name), samples, gradient_samples,
                                                      special_values=True))
    for group, part in ((group, part) for group in REFERENCE_GROUPS
                        for part in {"options": OPTION_GROUPS, "first samples": FIRST_SAMPLE_GROUPS}.get(group, (None,))):
        test = _reference_test(group, part)
        setattr(OpSweepTests, test.__name__, test)
    for dtype in value_domains.SWEPT_DTYPES:
        subnormal_tests = dtype.is_floating_point and (full or dtype == torch.float32)
        for subnormals in (False, True) if subnormal_tests else (False,):
            test = _values_test(dtype, subnormals)
            setattr(OpSweepTests, test.__name__, test)
    if tier() == "quick":
        return
    for op in selected_ops():
        label = f"'{op.name}'" + (f" ({op.variant_test_name})" if op.variant_test_name else "")
        setattr(OpSweepTests, op_test_name(op), _make_test(op_test_name(op), label, lambda op=op: op, samples,
                                                           gradient_samples))


_populate()
for_each_backend(OpSweepTests)
