"""The operator checker: operators' calls, eager vs compiled by a backend (OperatorChecker).
Every operator check of the suite goes through it: the op sweep's samples (``op_check``,
``random_op_check``), the value domains and the reference inputs (``together``: calls compiled
as one function, judged call by call), and the error inputs (``raises_as_eager``). What it
checks: outputs, the inputs after the call, gradients, whether the compiled code specialized
on the example's data, and whether a random operator's draws behave as torch's generator's.

In the spirit of PyTorch's ``aot_autograd_check`` (which runs AOTAutograd with no-op
compilers), but through ``torch.compile`` with any backend, so the verdict is about what a
user of that backend would get. The catalogues of what to check (harness/checks/value_domains.py,
the sweep's reference and error inputs) are data the checker is given: ``Call``s, and rounds of
inputs (``Inputs``); it gives back ``Difference``s or raises OpCheckFailure.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
import unittest
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

import torch
import torch.utils._pytree as pytree

from harness import compat
from harness.checks import accuracy
from harness.checks.compare import assert_close, identical, tolerance, weighted_loss

class OpCheckFailure(AssertionError):
    """The compiled operator is observably different from eager."""


class NoGraphCaptured(AssertionError):
    """Dynamo ran the call eagerly: nothing about the backend was checked."""


class _Slot:
    """Where the ``index``-th tensor goes back into a call's arguments."""

    def __init__(self, index: int) -> None:
        self.index = index


_CONTAINERS = (tuple, list, dict)


def _template(value: Any, tensors: list[torch.Tensor]) -> Any:
    """``value`` with each tensor replaced by a _Slot (appended to ``tensors``); a container
    holding no tensor stays the object it was (a torch.Size, a tuple of sizes)."""
    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return _Slot(len(tensors) - 1)
    if type(value) not in _CONTAINERS:
        return value
    found = len(tensors)
    items = value.items() if isinstance(value, dict) else enumerate(value)
    filled = {key: _template(item, tensors) for key, item in items}
    if len(tensors) == found:
        return value
    return filled if isinstance(value, dict) else type(value)(filled.values())


def _filled(template: Any, tensors: tuple) -> Any:
    if isinstance(template, _Slot):
        return tensors[template.index]
    if type(template) is dict:
        return {key: _filled(item, tensors) for key, item in template.items()}
    if type(template) in (tuple, list):
        return type(template)([_filled(item, tensors) for item in template])
    return template


def _split(args: tuple, kwargs: dict) -> tuple[list[Any], Callable[[list[Any]], tuple[tuple, dict]]]:
    """The tensors of (args, kwargs), and how to put new tensors in their places.

    Tensors inside other containers than tuples, lists and dicts (a namedtuple, a custom
    pytree node) are found with torch's pytree; otherwise the rebuild is a few lines of plain
    Python, which Dynamo traces in a fraction of the time pytree's unflattening costs it
    (2 s against 13 s for the quick tier's 73 ops compiled as one function)."""
    leaves = pytree.tree_leaves((args, kwargs))
    tensors: list[torch.Tensor] = []
    template = _template((args, kwargs), tensors)
    if len(tensors) == sum(isinstance(leaf, torch.Tensor) for leaf in leaves):
        return tensors, lambda values: _filled(template, tuple(values))
    leaves, spec = pytree.tree_flatten((args, kwargs))
    positions = [index for index, leaf in enumerate(leaves) if isinstance(leaf, torch.Tensor)]

    def rebuild(values: list[Any]) -> tuple[tuple, dict]:
        filled = list(leaves)
        for position, tensor in zip(positions, values):
            filled[position] = tensor
        return pytree.tree_unflatten(filled, spec)

    return [leaves[position] for position in positions], rebuild


_FLAT_FNS = itertools.count()


def _flattened(func: Callable, args: tuple, kwargs: dict) -> tuple[list[torch.Tensor], Callable]:
    """The call's tensors, and ``func`` as a function of just those tensors."""
    tensors, rebuild = _split(tuple(args), dict(kwargs))

    def flat_fn(*values):
        call_args, call_kwargs = rebuild(list(values))
        return func(*call_args, **call_kwargs)

    # A code object of its own: where Dynamo compiles each call's flat_fn as a frame apart (a
    # graph break in a batch's loop), calls sharing one code object share its cache, and
    # torch 2.13 does not guard on a torch.Tensor method held in a closure (pytorch#197811):
    # rsub would run the graph __radd__ compiled.
    flat_fn.__code__ = flat_fn.__code__.replace(co_name=f"flat_fn_{next(_FLAT_FNS)}")
    return tensors, flat_fn


def _fresh_copies(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    copies = []
    for tensor in tensors:
        copy = tensor.detach().clone()
        copies.append(copy.requires_grad_(tensor.requires_grad))
    return copies


def layout_copies(tensors: list[Any]) -> list[Any]:
    """Copies of ``tensors`` laid out as they are, to the element: the same sizes, strides and
    storage offset over a storage of their own holding the original storage's values (so an
    expanded or overlapping input stays one); requires_grad kept."""
    copies = []
    for tensor in tensors:
        if not isinstance(tensor, torch.Tensor) or type(tensor) is not torch.Tensor or tensor.is_contiguous() \
                and tensor.storage_offset() == 0:
            copies.append(_fresh_copies([tensor])[0] if isinstance(tensor, torch.Tensor) else tensor)
            continue
        elements = tensor.untyped_storage().nbytes() // tensor.element_size()
        with torch.no_grad():
            storage = torch.empty(0, dtype=tensor.dtype, device=tensor.device).set_(
                tensor.untyped_storage(), 0, (elements,), (1,)).clone()
            copy = storage.as_strided(tensor.shape, tensor.stride(), tensor.storage_offset())
        copies.append(copy.detach().requires_grad_(tensor.requires_grad))
    return copies


def _gradients(outputs: Any, tensors: list[Any]) -> tuple | None:
    """The gradients of the weighted loss of ``outputs`` (compare.weighted_loss: signed
    weights, so that no normalizing op makes it constant) w.r.t. the inputs that require
    grad; None where there is nothing to differentiate (no input requires grad, or no output
    does): such a call is judged on its values alone."""
    wrt = [tensor for tensor in tensors if isinstance(tensor, torch.Tensor) and tensor.requires_grad]
    loss = weighted_loss(outputs)
    if not wrt or loss is None or not loss.requires_grad:
        return None
    return torch.autograd.grad(loss, wrt, allow_unused=True)


def _forward_backward(fn: Callable, tensors: list[torch.Tensor], check_gradients: bool) -> tuple[Any, Any]:
    """Outputs, and gradients w.r.t. the inputs that require grad (None when not checked, or
    none to compare: _gradients)."""
    outputs = fn(*tensors)
    return outputs, _gradients(outputs, tensors) if check_gradients else None


def _in_float64(fn: Callable, tensors: list[Any], gradients: bool) -> tuple[Any, Any, list[Any]]:
    """The reference run: outputs, gradients and the inputs after the call, of ``fn`` on
    float64 copies of ``tensors`` (accuracy.in_float64)."""
    inputs = accuracy.in_float64(tensors)
    return (*_forward_backward(fn, inputs, gradients), inputs)


def _compare_gradients(compare: Callable[..., None], want: Any, got: Any, reference: Callable[[], Any]) -> None:
    """Gradients (None: none to compare, _gradients) eager vs compiled, a missing one a failure."""
    if (want is None) != (got is None):
        raise OpCheckFailure(
            f"gradients differ between eager and the compiled call: {'eager' if got is None else 'the compiled call'} "
            f"has gradients, {'the compiled call' if got is None else 'eager'} none (requires_grad of the outputs "
            "differs, or a gradient is missing)")
    if want is not None:
        compare("gradients", _defined(want), _defined(got), reference=lambda: _defined(reference() or ()))


def _randomized(tensors: list[torch.Tensor]) -> list[torch.Tensor]:
    """Same shapes, strides and dtypes, new values."""
    result = []
    for tensor in tensors:
        with torch.no_grad():
            if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
                values = torch.randn_like(tensor)
            elif tensor.dtype == torch.bool:
                values = torch.randint_like(tensor, 0, 2)
            else:
                values = tensor.clone()  # integer arguments are indices and sizes: keep them valid
        result.append(values.requires_grad_(tensor.requires_grad))
    return result


def _comparer(testcase, tolerance_scale: float) -> Callable[..., None]:
    def compare(label: str, want: Any, got: Any, reference: Callable[[], Any] | None = None) -> None:
        # Each leaf by its own rule (compare.assert_close): floating values within their
        # dtype's tolerance or no further than eager from ``reference``, the same call in float64.
        try:
            assert_close(testcase or unittest.TestCase(), want, got, scale=tolerance_scale, what=label,
                         reference=reference)
        except AssertionError as error:
            raise OpCheckFailure(
                f"{label} differ between eager and the compiled call: the operator would give wrong "
                f"{label} under torch.compile with this backend. {error}") from None

    return compare


def _compile_kwargs(testcase) -> dict:
    """Static sizes, never recompiled as dynamic, unless the test runs with sizes symbolic
    from the first compile (the ``dynamic`` variant, which then applies); and the run's
    compile options, when a test case is at hand."""
    dynamic = False if compat.dynamo_config_value("assume_static_by_default") else None
    return testcase.compile_kwargs(dynamic=dynamic) if hasattr(testcase, "compile_kwargs") else {"dynamic": dynamic}


# -- what the checker is given and what it finds --------------------------------------------


@dataclass
class Call:
    """One operator's call, as a catalogue gives it to the checker: its name in the report,
    the operator, its arguments, and what the catalogues say of it: whether every tensor of the
    data's dtype is an operand (value_domains.with_domain), its category in the sweep
    (value_domains.Domain.categories), and, for an error input, what eager raises on it."""

    name: str
    func: Callable
    args: tuple
    kwargs: dict
    every_operand: bool = False
    category: str = ""
    raises: EagerError | None = None

    def tensors(self) -> list[Any]:
        """The tensors of its arguments, in the order the domains see them (the data first)."""
        return _flattened(self.func, self.args, self.kwargs)[0]


@dataclass(frozen=True)
class EagerError:
    """What eager raised on an error input: the exception's type, the pattern its catalogue
    gives for the message, and eager's message."""

    error_type: type
    pattern: str
    message: str

    def raised_like(self, error: BaseException) -> bool:
        """Whether ``error``, or an exception it wraps, is eager's, its message matching the
        pattern where eager's does."""
        matches = re.search(self.pattern, self.message) is not None
        for cause in compat.exception_chain(error):
            if isinstance(cause, self.error_type) and (not matches or re.search(self.pattern, str(cause))):
                return True
        return False


@dataclass(frozen=True)
class Difference:
    """How one call's compiled result differed from eager on one set of inputs (a domain)."""

    op: str
    domain: str
    what: str
    # The compiled call's own error, where it raised instead of answering (for the refusal
    # contract: harness.features.scope.attach_caught).
    raised: BaseException | None = field(default=None, compare=False)

    def __str__(self) -> str:
        # "<op> on <domain> values: ...": how harness/checks/clauses.py knows a difference.
        return f"{self.op} on {self.domain} values: {self.what}"


class Inputs(Protocol):
    """What the calls checked together are fed, round by round (value_domains.Domain is one):
    ``inputs(call, tensors)`` the tensors to call ``call`` with (``tensors``: its own), or None
    where the round passes it over; ``changes_shapes``: they have other shapes than the call's
    own, so the round is a compile of its own."""

    name: str
    changes_shapes: bool

    def inputs(self, call: Call, tensors: list[Any]) -> list[Any] | None: ...


# -- the checker ---------------------------------------------------------------------------


class OperatorChecker:
    """Operators eager vs compiled by ``backend``: every operator check of the suite goes
    through one. A call alone (``sample``), a random operator (``random_sample``), calls
    compiled together over rounds of inputs (``together``: the value domains, PyTorch's
    reference inputs, the documented type promotion), and an error input the compiled call
    must reject as eager does (``raises_as_eager``). Each check counts the graphs the backend
    receives behind a counter of its own, and compiles as the test case compiles (its
    compile options; sizes static unless its variant makes them dynamic); values are judged
    leaf by leaf (docs/checks.md, "How values and gradients are judged"): integers and
    structure exactly, floating values within ``tolerance_scale`` times the dtype's
    tolerance or no further than eager from the same call in float64."""

    def __init__(self, backend: Callable, *, testcase=None, tolerance_scale: float = 1.0) -> None:
        self.backend = backend
        self.testcase = testcase
        self.tolerance_scale = tolerance_scale

    def _counter(self):
        from harness.measure.counters import CompileCounterWithBackend  # lazily: the counters import the features

        return CompileCounterWithBackend(self.backend)

    def _compiled(self, fn: Callable, counter) -> Callable:
        return torch.compile(fn, backend=counter, **_compile_kwargs(self.testcase))

    def sample(self, call: Call, *, gradients: bool | str = "auto", data_specialization: bool = False) -> int:
        """``call`` eager vs compiled: outputs, the inputs after the call and, with
        ``gradients`` (True, False, or "auto": when an input and an output require grad), the
        gradients of a weighted loss (compare.weighted_loss) w.r.t. the inputs that require
        grad; where eager has none (no output requires grad), the compiled call must have
        none either. Floating values that miss their tolerance are judged against the call in
        float64 (compare.assert_close). With ``data_specialization``, the compiled function is called again on new
        random values and compared with eager; when eager itself rejects those values (the
        operator has preconditions), that part is skipped. Raises OpCheckFailure at the first
        difference; returns the number of graphs the backend received, and raises
        NoGraphCaptured when it received none."""
        tensors, flat_fn = _flattened(call.func, call.args, call.kwargs)

        if gradients == "auto":
            gradients = any(t.requires_grad for t in tensors) and _eager_needs_grad(flat_fn, tensors)
        compat.reset_dynamo()  # each call is its own compilation, never a recompile
        counter = self._counter()
        compiled = self._compiled(flat_fn, counter)

        compare = _comparer(self.testcase, self.tolerance_scale)
        eager_inputs, compiled_inputs = _fresh_copies(tensors), _fresh_copies(tensors)
        expected, expected_grads = _forward_backward(flat_fn, eager_inputs, gradients)
        actual, actual_grads = _forward_backward(compiled, compiled_inputs, gradients)
        truth = functools.cache(lambda: _in_float64(flat_fn, tensors, gradients))
        compare("outputs", expected, actual, reference=lambda: truth()[0])
        compare("inputs after the call", eager_inputs, compiled_inputs, reference=lambda: truth()[2])
        if gradients:
            _compare_gradients(compare, expected_grads, actual_grads, lambda: truth()[1])
        if data_specialization:
            _check_new_data(flat_fn, compiled, tensors, compare)
        return _graphs(counter)

    def random_sample(self, call: Call) -> int:
        """``call`` of an operator that draws random numbers.

        Where eager draws no random numbers for the sample (dropout with p = 0, or not
        training), ``sample`` compares values and gradients with eager. Otherwise a backend
        may draw other numbers than eager, but the compiled call must give eager's shapes and
        dtypes, repeat itself under the same ``torch.manual_seed``, draw anew under other
        seeds (where eager's results differ between them), draw from eager's law (_check_law:
        each output element's draws over LAW_CALLS calls against eager's, a two-sample
        Kolmogorov-Smirnov test at a false-alarm rate of LAW_FALSE_ALARM), and compute
        gradients through the draws its forward made: the gradient of a weighted sum of the
        outputs, along a random direction, must match the finite difference of two compiled
        calls under the same seed.
        """
        tensors, flat_fn = _flattened(call.func, call.args, call.kwargs)

        if not _draws_random_numbers(flat_fn, tensors):
            return self.sample(call, gradients="auto", data_specialization=True)
        eager = [_seeded(flat_fn, seed, _fresh_copies(tensors)) for seed in SEEDS]
        compat.reset_dynamo()
        counter = self._counter()
        compiled = self._compiled(flat_fn, counter)
        compare = _comparer(self.testcase, self.tolerance_scale)

        first = _seeded(compiled, SEEDS[0], _fresh_copies(tensors))
        if _layout(first) != _layout(eager[0]):
            raise OpCheckFailure(f"shapes or dtypes differ from eager: compiled {_layout(first)}, "
                                 f"eager {_layout(eager[0])}")
        if not identical(first, _seeded(compiled, SEEDS[0], _fresh_copies(tensors))):
            raise OpCheckFailure("two compiled calls after the same torch.manual_seed drew different numbers: "
                                 "the seed does not reproduce the operator under this backend")
        eager_varies = not all(identical(eager[0], other) for other in eager[1:])  # a rare event may never occur
        if eager_varies and all(identical(first, _seeded(compiled, seed, _fresh_copies(tensors)))
                                for seed in SEEDS[1:]):
            raise OpCheckFailure(f"compiled calls under {len(SEEDS)} different seeds drew the same numbers (eager's "
                                 "differ): the operator does not draw from torch's generator under this backend")
        _check_law(flat_fn, compiled, tensors, self.tolerance_scale)
        _check_gradients_of_draws(flat_fn, compiled, tensors, compare)
        return _graphs(counter)

    def together(self, calls: list[Call], domains: Sequence[Inputs], *, gradients: bool = False,
                 exact_layouts: bool = False,
                 beyond_tolerance: Callable[[Any, Any], str | None] | None = None) -> list[Difference]:
        """Every call, over every domain, compared with eager: outputs, inputs after the call
        and, with ``gradients``, the gradients of each call's weighted loss
        (compare.weighted_loss) where eager has them (a call with no input or output that
        requires grad is judged on its values); with
        ``exact_layouts``, each call's tensors laid out as given (layout_copies: strides,
        offsets, expanded dimensions), else fresh dense copies of them; ``beyond_tolerance``
        judges the outputs further (value_domains.exact_mismatch: what eager gives exactly).
        The calls are compiled together, one graph for all of them (a compile per operator
        would cost a backend's whole compile pipeline dozens of times); where the compiled
        batch raises, each half is compiled apart, down to single calls, to say which
        (_bisected). A domain that keeps the calls' shapes is a call of that graph, the calls
        it passes over given their own tensors (and not judged); one that changes them
        (``changes_shapes``) compiles the calls it reaches, together. A domain whose inputs
        eager rejects (an index out of range) is passed over for that call, since there is
        nothing to compare. Returns what differed; raises NoGraphCaptured when the backend
        received no graph."""
        flattened = [_flattened(call.func, call.args, call.kwargs) for call in calls]
        copies = layout_copies if exact_layouts else _fresh_copies
        counter = self._counter()
        compiled_for: dict[tuple[int, ...], Callable] = {}

        def compiled(chosen: tuple[int, ...]) -> Callable:
            if chosen not in compiled_for:
                sizes = [len(flattened[index][0]) for index in chosen]

                def together(*tensors):
                    outputs, start = [], 0
                    for index, size in zip(chosen, sizes):
                        outputs.append(flattened[index][1](*tensors[start:start + size]))
                        start += size
                    return outputs

                compiled_for[chosen] = self._compiled(together, counter)
            return compiled_for[chosen]

        checked = tuple(index for index, (tensors, _) in enumerate(flattened)
                        if tensors and isinstance(tensors[0], torch.Tensor))
        # Every compile here is of one function (together), so Dynamo counts them as its
        # recompiles; past its limit it would run the calls eagerly, and they would pass unchecked.
        compiles = 2 * (1 + len(calls)) * (1 + sum(domain.changes_shapes for domain in domains))
        compat.reset_dynamo()
        problems = []
        with compat.recompiles_allowed(compiles):
            for domain in domains:
                inputs, expected = {}, {}
                for index in checked:
                    tensors, flat_fn = flattened[index]
                    domain_inputs = domain.inputs(calls[index], tensors)
                    if domain_inputs is None:
                        continue
                    eager_inputs = copies(domain_inputs)
                    try:
                        outputs = flat_fn(*eager_inputs)
                    except Exception:  # eager rejects these values (an index out of range): nothing to compare
                        continue
                    try:
                        grads = _gradients(outputs, eager_inputs) if gradients else None
                    except Exception:  # a derivative eager does not implement: the values are judged still
                        grads = None
                    expected[index] = (outputs, grads, eager_inputs)
                    inputs[index] = domain_inputs
                judged = tuple(inputs)
                if not judged:
                    continue
                chosen = judged if domain.changes_shapes else checked
                # Differentiated where eager's gradients are compared, so that a call with none
                # (argmax, a comparison) neither fails the batch's backward nor goes unjudged.
                differentiated = {index for index in judged if expected[index][1] is not None}
                try:
                    results = _call_together(compiled(chosen),
                                             [inputs.get(index, flattened[index][0]) for index in chosen],
                                             [index in differentiated for index in chosen], copies)
                    actual = dict(zip(chosen, results))
                except Exception:  # halves compiled apart, to say which raised
                    actual = _bisected(judged, lambda part: _call_together(
                        compiled(part), [inputs[index] for index in part], [index in differentiated for index in part],
                        copies), tried=judged == chosen)
                for index in judged:
                    problem = self._judge(expected[index], actual[index], inputs[index], flattened[index][1],
                                          gradients, beyond_tolerance)
                    if problem:
                        raised = actual[index] if isinstance(actual[index], Exception) else None
                        problems.append(Difference(calls[index].name, domain.name, problem, raised))
        _graphs(counter)
        return problems

    def _judge(self, expected: tuple, got: Any, inputs: list[Any], flat_fn: Callable, gradients: bool,
               beyond_tolerance: Callable[[Any, Any], str | None] | None) -> str | None:
        """How one call's compiled results differ from eager's, in words, or None."""
        if isinstance(got, Exception):
            lines = [line.strip() for line in str(got).strip().splitlines() if line.strip()]
            return f"compiled call raised {type(got).__name__}: {' '.join(lines[:2])}"
        want_out, want_grads, eager_inputs = expected
        got_out, got_grads, compiled_inputs = got
        compare = _comparer(self.testcase, self.tolerance_scale)
        try:
            truth = functools.cache(lambda: _in_float64(flat_fn, inputs, want_grads is not None))
            compare("outputs", want_out, got_out, reference=lambda: truth()[0])
            compare("inputs after the call", eager_inputs, compiled_inputs, reference=lambda: truth()[2])
            if gradients and want_grads is not None:
                compare("gradients", _defined(want_grads), _defined(got_grads or ()), reference=lambda: _defined(
                    truth()[1] or ()))
            # Outputs only: a derivative formula's sign of zero is its own choice (prod's, where an
            # input is zero, differs between eager's kernel and its decomposition).
            exact = beyond_tolerance(want_out, got_out) if beyond_tolerance else None
            if exact:
                return exact
        except AssertionError as error:
            lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
            return " ".join(lines[:3])
        return None

    def raises_as_eager(self, call: Call) -> "ErrorVerdict":
        """An error input (``call.raises``: what eager raises on it), compiled alone since a
        call that raises ends its graph: the compiled call must raise an exception of eager's
        type whose message matches where eager's does (through Dynamo's wrapping: its cause).

        Where eager accepts the error input's tensors with other values (valid_values: the
        error is in the data, an index past the end), the function is compiled on those first
        and the error input's own values are then passed to that compiled code, recompiles
        refused: the code the backend compiled must make eager's check on every call. Where
        no values make eager accept (the error is in the sizes, dtypes, layouts or Python
        arguments: Dynamo guards on all of those), the error input is compiled as it is, and
        Dynamo's tracing (fake tensors, meta functions) usually rejects it before any backend
        runs: those are not the backend's to judge. The verdict says which it was."""
        eager = call.raises
        tensors, flat_fn = _flattened(call.func, call.args, call.kwargs)
        compat.reset_dynamo()
        counter = self._counter()
        compiled = self._compiled(flat_fn, counter)
        valid = valid_values(call)
        if valid is not None:
            try:
                compiled(*valid)
            except Exception as error:  # noqa: BLE001 -- the backend fails where eager computes
                return ErrorVerdict(f"{call.name}: raised on values eager accepts (the error input's tensors with valid "
                                    f"values), so its error could not be tried: {_first_line(error)}", reached=True)
            if counter.frame_count:
                try:
                    with compat.recompiles_refused():
                        result = compiled(*tensors)
                except Exception as error:  # noqa: BLE001 -- what eager raises, or something else
                    if not compat.refused_recompile(error):
                        return ErrorVerdict(_unlike_eager(call, error), reached=True)
                    # Dynamo guards on these values: they are a compile of their own, below.
                else:
                    del result
                    return ErrorVerdict(_result_where_eager_raises(call), reached=True)
            compat.reset_dynamo()
            counter = self._counter()
            compiled = self._compiled(flat_fn, counter)
        try:
            result = compiled(*tensors)
        except Exception as error:  # noqa: BLE001 -- what eager raises, or something else
            # With no graph the backend received, Dynamo rejected the call while tracing: torch's
            # meta functions raise their own exceptions (aminmax's RuntimeError for eager's
            # IndexError), the same for every backend; only the backend's are judged.
            if not counter.frame_count:
                return ErrorVerdict(None, reached=False)
            return ErrorVerdict(_unlike_eager(call, error), reached=True)
        del result
        return ErrorVerdict(_result_where_eager_raises(call), reached=counter.frame_count > 0)


@dataclass(frozen=True)
class ErrorVerdict:
    """How a compiled call met an error input (OperatorChecker.raises_as_eager): ``problem``,
    what it did instead of raising eager's error, in words (None: it raised it, or Dynamo
    rejected the input first); ``reached``, whether the input reached code the backend
    compiled (False: Dynamo rejected it while tracing, before any backend ran)."""

    problem: str | None
    reached: bool


# Values that make an error input's tensors valid for most operators whose check is on the
# data: an integer tensor of zeros indexes the first element of any non-empty dimension; a
# floating one drawn from [0, 1) is a probability or a binary target.
# (From a generator of their own: the global one's state is the test's to keep.)
_VALID_REWRITES = (
    lambda tensor, generator: tensor if tensor.is_floating_point() or tensor.is_complex() else tensor.zero_(),
    lambda tensor, generator: tensor.uniform_(generator=generator) if tensor.is_floating_point() else
    tensor if tensor.is_complex() else tensor.zero_(),
)


def valid_values(call: Call) -> list[torch.Tensor] | None:
    """The error input's tensors, laid out as they are (layout_copies: sizes, strides,
    overlaps, dtypes, so Dynamo's guards hold for both), with values eager accepts (the
    first of _VALID_REWRITES that works), or None: no such values, the error is not in the
    data."""
    tensors, flat_fn = _flattened(call.func, call.args, call.kwargs)
    if not tensors or not all(isinstance(tensor, torch.Tensor) and type(tensor) is torch.Tensor for tensor in tensors):
        return None
    storages = {tensor.untyped_storage().data_ptr() for tensor in tensors if tensor.untyped_storage().nbytes()}
    if len(storages) < sum(bool(tensor.untyped_storage().nbytes()) for tensor in tensors):
        return None  # tensors sharing memory (an out= overlapping an input): copies would not share it
    generator = torch.Generator(device=tensors[0].device).manual_seed(0)
    for rewrite in _VALID_REWRITES:
        try:
            with torch.no_grad():
                candidate = [rewrite(copy, generator) for copy in layout_copies(tensors)]
        except RuntimeError:  # an overlapping tensor cannot be drawn into
            continue
        try:
            with torch.no_grad():
                flat_fn(*layout_copies(candidate))
        except Exception:  # noqa: BLE001 -- eager rejects these values too
            continue
        return candidate
    return None


def _first_line(error: BaseException) -> str:
    return f"{type(error).__name__}: {str(error).strip().splitlines()[0][:160] if str(error).strip() else ''}"


def _unlike_eager(call: Call, error: BaseException) -> str | None:
    eager = call.raises
    if eager.raised_like(error):
        return None
    return (f"{call.name}: raised something else than eager's {eager.error_type.__name__} "
            f"({eager.message[:100]}): {type(error).__name__}: {str(error)[:160]}")


def _result_where_eager_raises(call: Call) -> str:
    eager = call.raises
    return f"{call.name}: gave a result where eager raises {eager.error_type.__name__}: {eager.message[:160]}"


def op_check(func: Callable, args: tuple, kwargs: dict, backend: Callable, *, check_gradients: bool | str = "auto",
             check_data_specialization: bool = False, testcase=None, tolerance_scale: float = 1.0) -> int:
    """Compare ``func(*args, **kwargs)`` eager vs compiled with ``backend``
    (OperatorChecker.sample: ``check_gradients`` its ``gradients``, ``check_data_specialization``
    its ``data_specialization``). Returns the number of graphs the backend received; raises
    NoGraphCaptured when it received none."""
    return OperatorChecker(backend, testcase=testcase, tolerance_scale=tolerance_scale).sample(
        _named_call(func, args, kwargs), gradients=check_gradients, data_specialization=check_data_specialization)


def random_op_check(func: Callable, args: tuple, kwargs: dict, backend: Callable, *, testcase=None,
                    tolerance_scale: float = 1.0) -> int:
    """Check an operator that draws random numbers, compiled with ``backend``
    (OperatorChecker.random_sample)."""
    return OperatorChecker(backend, testcase=testcase, tolerance_scale=tolerance_scale).random_sample(
        _named_call(func, args, kwargs))


def _named_call(func: Callable, args: tuple, kwargs: dict) -> Call:
    return Call(getattr(func, "__name__", repr(func)), func, args, kwargs)

def _eager_needs_grad(fn: Callable, tensors: list[torch.Tensor]) -> bool:
    outputs = fn(*_fresh_copies(tensors))
    return any(isinstance(out, torch.Tensor) and out.requires_grad for out in pytree.tree_leaves(outputs))


def _defined(grads: Any) -> list[Any]:
    # allow_unused gives None for inputs that do not influence the loss; keep the positions.
    return [grad if grad is not None else "no gradient" for grad in grads]


def _check_new_data(flat_fn: Callable, compiled: Callable, tensors: list[torch.Tensor], compare) -> None:
    new_values = _randomized(tensors)
    try:
        expected = flat_fn(*_fresh_copies(new_values))
    except Exception:
        return  # the operator's preconditions reject random values; nothing to compare
    compare("outputs on new data (the compiled code specialized on the example's values)",
            expected, compiled(*_fresh_copies(new_values)), reference=lambda: _in_float64(flat_fn, new_values, False)[0])


def _graphs(counter) -> int:
    if counter.frame_count == 0:
        breaks = [reason.strip().splitlines()[0] for reason in compat.dynamo_counters()["graph_break"]]
        why = f" (graph break: {breaks[-1]})" if breaks else ""
        raise NoGraphCaptured(f"Dynamo captured no graph for this call, so the backend was not exercised{why}")
    return counter.frame_count



# -- random operators --------------------------------------------------------------------

SEEDS = (1234, 5678, 91, 2024, 7, 31337, 4242, 100)
_STEP = 1e-3  # of the finite difference that checks gradients through the drawn values


def _seeded(fn: Callable, seed: int, tensors: list[torch.Tensor]) -> Any:
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return fn(*tensors)


def _draws_random_numbers(fn: Callable, tensors: list[torch.Tensor]) -> bool:
    """Whether an eager call advances torch's generator (dropout with p = 0 does not)."""
    with torch.random.fork_rng(devices=[]):
        before = torch.get_rng_state()
        fn(*_fresh_copies(tensors))
        return not torch.equal(before, torch.get_rng_state())


def _layout(value: Any) -> list[Any]:
    return [(tuple(leaf.shape), leaf.dtype) if isinstance(leaf, torch.Tensor) else type(leaf).__name__
            for leaf in pytree.tree_leaves(value)]


def _directional(fn: Callable, tensors: list[torch.Tensor], seed: int) -> tuple[float, float, list[Any]] | None:
    """For a weighted sum of ``fn``'s floating outputs under ``seed``: the gradients, the
    derivative along a random direction they predict, and the one two calls under the same
    seed measure by finite difference. None when no output is differentiable."""
    wrt = [index for index, tensor in enumerate(tensors) if tensor.requires_grad and tensor.is_floating_point()]
    inputs = _fresh_copies(tensors)
    loss = weighted_loss(_seeded(fn, seed, inputs))  # the same weights on every call
    if not wrt or loss is None:
        return None
    generator = torch.Generator().manual_seed(SEEDS[0])
    directions = [torch.randn(tensors[index].shape, generator=generator, device="cpu").to(tensors[index].device)
                  for index in wrt]
    grads = torch.autograd.grad(loss, [inputs[index] for index in wrt], allow_unused=True)
    predicted = sum(float((grad.double() * direction).sum()) for grad, direction in zip(grads, directions)
                    if grad is not None)

    def shifted(step: float) -> float:
        moved = _fresh_copies(tensors)  # still requiring grad, so the outputs are weighted as above
        with torch.no_grad():
            for index, direction in zip(wrt, directions):
                moved[index].add_(step * direction)
        return float(weighted_loss(_seeded(fn, seed, moved)).detach())

    measured = (shifted(_STEP) - shifted(-_STEP)) / (2 * _STEP)
    return predicted, measured, _defined(grads)


def _agree(predicted: float, measured: float) -> bool:
    # 5% of the derivative, plus the finite difference's own float32 error (about 1e-4 here).
    return abs(predicted - measured) <= 0.05 * max(abs(measured), abs(predicted)) + 1e-3


# The law of the draws: LAW_CALLS successive calls after one torch.manual_seed(LAW_SEED),
# eager's and the compiled call's, each output element's draws compared by a two-sample
# Kolmogorov-Smirnov test. Element by element, not pooled over a call's elements: an element
# has a law of its own (bernoulli's p, normal's mean and std are tensors), and a call's
# elements may share their draws (dropout2d drops whole channels), which a pooled sample's
# size would overstate. 500 calls cost about 0.05 s on aot_eager for a small sample, and tell
# laws apart whose distribution functions differ by about 0.19 somewhere (bernoulli at p =
# 0.08 against 0.5 differs by 0.42; normal with std 0.26 against 1 by 0.28).
LAW_CALLS = 500
LAW_SEED = 20260
LAW_FALSE_ALARM = 1e-6  # for all of a check's elements together: each is tested at its share


def ks_critical(calls: int, false_alarm: float) -> int:
    """The least count c such that two samples of ``calls`` draws each from one continuous
    law have distribution functions c / calls apart somewhere (the two-sample KS statistic)
    with probability at most ``false_alarm``: the first term of the Gnedenko-Korolyuk series,
    2 C(2n, n-c) / C(2n, n), bounds that probability for equal sizes, since the series
    alternates and its terms shrink. Draws from a discrete law (ties) only make large
    distances rarer."""
    log_central = 2 * math.lgamma(calls + 1)
    for c in range(1, calls + 1):
        log_term = log_central - math.lgamma(calls - c + 1) - math.lgamma(calls + c + 1)
        if math.log(2) + log_term <= math.log(false_alarm):
            return c
    return calls + 1  # no sample this small can tell laws apart at that rate


def _draws(fn: Callable, tensors: list[torch.Tensor]) -> list[tuple[torch.dtype, torch.Tensor]]:
    """Each tensor output's dtype and draws over LAW_CALLS calls: (elements, calls) in
    float64, NaN as +inf (a NaN sorts nowhere)."""
    calls = []
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(LAW_SEED)
        for _ in range(LAW_CALLS):
            calls.append([leaf.detach() for leaf in pytree.tree_leaves(fn(*_fresh_copies(tensors)))
                          if isinstance(leaf, torch.Tensor)])
    draws = []
    for leaves in zip(*calls):
        stacked = torch.stack([torch.view_as_real(leaf) if leaf.is_complex() else leaf for leaf in leaves])
        values = stacked.reshape(LAW_CALLS, stacked[0].numel()).to("cpu", torch.float64).t().contiguous()
        draws.append((leaves[0].dtype, values.nan_to_num(nan=math.inf, posinf=math.inf, neginf=-math.inf)))
    return draws


def ks_distances(eager: torch.Tensor, compiled: torch.Tensor, rtol: float, atol: float) -> torch.Tensor:
    """Per row (an element's draws): how far apart the two samples' distribution functions
    are, in draws, where each value may move by the tolerance: a backend computing the drawn
    values with other roundings (dropout's 1 / (1 - p) scale, inductor) draws from the same law."""
    eager, compiled = eager.sort(dim=1).values, compiled.sort(dim=1).values

    def excess(low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
        # Most draws of ``low`` at or below a value t, less those of ``high`` at or below t
        # plus its tolerance: where ``low``'s law puts more weight below t than ``high``'s.
        below = torch.searchsorted(low, low, right=True)
        moved = torch.where(low.isinf(), low, low + atol + rtol * low.abs())
        return (below - torch.searchsorted(high, moved, right=True)).amax(dim=1)

    return torch.maximum(excess(eager, compiled), excess(compiled, eager)).clamp(min=0)


def _check_law(flat_fn: Callable, compiled: Callable, tensors: list[torch.Tensor], tolerance_scale: float) -> None:
    """The compiled call's draws follow eager's law, element by element (LAW_CALLS)."""
    eager_draws, compiled_draws = _draws(flat_fn, tensors), _draws(compiled, tensors)
    elements = sum(draws.shape[0] for _, draws in eager_draws)
    if not elements:
        return
    critical = ks_critical(LAW_CALLS, LAW_FALSE_ALARM / elements)
    for index, ((dtype, want), (_, got)) in enumerate(zip(eager_draws, compiled_draws)):
        if not want.numel():
            continue
        rtol, atol = tolerance(dtype, tolerance_scale) if dtype.is_floating_point or dtype.is_complex else (0.0, 0.0)
        distances = ks_distances(want, got, rtol, atol)
        worst = int(distances.argmax())
        if distances[worst] >= critical:
            e, c = want[worst], got[worst]
            raise OpCheckFailure(
                f"the draws do not follow eager's law: output {index}, element {worst}, over {LAW_CALLS} calls each: "
                f"the distribution functions differ by {int(distances[worst]) / LAW_CALLS:.3f} (Kolmogorov-Smirnov; "
                f"{critical / LAW_CALLS:.3f} at a false-alarm rate of {LAW_FALSE_ALARM:g}); eager's draws have mean "
                f"{float(e.mean()):.4g} and std {float(e.std()):.4g}, the compiled call's {float(c.mean()):.4g} and "
                f"{float(c.std()):.4g}")


def _check_gradients_of_draws(flat_fn: Callable, compiled: Callable, tensors: list[torch.Tensor], compare) -> None:
    eager = _directional(flat_fn, tensors, SEEDS[0])
    if eager is None:
        return
    compiled_result = _directional(compiled, tensors, SEEDS[0])
    if compiled_result is None:
        raise OpCheckFailure("eager's outputs are differentiable, the compiled call's are not")
    predicted, measured, grads = compiled_result
    if _agree(*eager[:2]):
        # Eager's gradient is the derivative of what its forward drew (dropout's mask): so must be the backend's.
        if not _agree(predicted, measured):
            raise OpCheckFailure(
                f"the gradient does not follow the forward's draws: along a random direction it predicts "
                f"{predicted:.4g}, while two compiled calls under the same seed change by {measured:.4g} "
                f"(the backward used other random numbers than the forward, or wrong gradients)")
        return
    # A sampling operator's gradient is defined otherwise (bernoulli's and normal's are zero); where it
    # does not depend on the draws, the backend's must be eager's.
    other = _directional(flat_fn, tensors, SEEDS[1])
    if other is not None and identical(eager[2], other[2]):
        compare("gradients", eager[2], grads)


# -- calls compiled together ------------------------------------------------------------


def _bisected(indices: tuple[int, ...], call: Callable[[tuple[int, ...]], list[tuple]],
              tried: bool = False) -> dict[int, Any]:
    """Each call's result, or the error of the call that raised alone: the calls compiled
    together (unless ``tried``: they raised so), each half apart where they raise, down to
    single calls. A backend that rejects one operator of a batch of a hundred pays about 14
    compiles, not a hundred."""
    if not tried or len(indices) == 1:
        try:
            return dict(zip(indices, call(indices)))
        except Exception as error:
            if len(indices) == 1:
                return {indices[0]: error}
    half = len(indices) // 2
    return {**_bisected(indices[:half], call), **_bisected(indices[half:], call)}


def _call_together(function: Callable, inputs: list[list[Any]], differentiated: Sequence[bool],
                   copy: Callable[[list[Any]], list[Any]] = _fresh_copies) -> list[tuple]:
    """(outputs, gradients, inputs after the call) of each call, from one call of the batch:
    the gradients of the differentiated calls' weighted losses (compare.weighted_loss, each
    call's drawn as eager's is), None for the others."""
    copies = [copy(each) for each in inputs]
    outputs = function(*(tensor for each in copies for tensor in each))
    if not any(differentiated):
        return [(output, None, each) for output, each in zip(outputs, copies)]
    losses = [weighted_loss(output) if wanted else None for output, wanted in zip(outputs, differentiated)]
    wrt = [tensor for each, wanted in zip(copies, differentiated) if wanted for tensor in each if tensor.requires_grad]
    total = sum((loss for loss in losses if loss is not None), torch.zeros(()))
    grads = dict(zip(map(id, wrt), torch.autograd.grad(total, wrt, allow_unused=True))) if wrt and \
        total.requires_grad else {}
    return [(output, tuple(grads.get(id(tensor)) for tensor in each if tensor.requires_grad) if wanted else None, each)
            for output, each, wanted in zip(outputs, copies, differentiated)]
