"""Generated compute programs: seeded functions over the operator vocabulary the sweep knows.

Where ``harness.fuzz.programs`` writes programs of views, writes and aliasing, these
(``Kind.COMPUTE``, built by the shared ``harness.fuzz.generator.Builder``) compute:
pointwise math, reductions, indexing and scatter (repeated indices included), matrix
products and convolutions, normalization, shape operations and type conversions, chosen
from ``VOCABULARY`` (one declaration: add an entry to widen the search). Inputs
are float32, float64, half precision, integer or boolean tensors, of ordinary shapes, 0-d
or empty, each carrying the values of one domain of ``harness.checks.value_domains.DOMAINS``
(NaN and infinities, subnormal numbers, negative zero, ties, large values...) among
ordinary ones, written into the program's source as literals; about half of the floating
inputs require grad, and the program is then also run backward.

The program is judged as the operator sweep judges one operator (``judge``):

* **exact values bit for bit.** A value is *exact* when every correct implementation must
  produce the same bits: the inputs, and what an operation that does not round (``max``,
  ``floor``, a comparison, ``gather``, ``flip``, a correctly rounded conversion...) makes of
  exact values. Such outputs, integers and booleans compare bit for bit: NaN where eager
  has NaN, the sign of every zero, no subnormal flushed.
* **the other floats within tolerance, or no further from the truth than eager.** The
  truth is the same program run on the inputs in float64; a compiled value may sit a
  small multiple of eager's own error away from it (``harness.checks.accuracy``), with
  NaN and infinities where eager has them.

The search, not only sampling: each statement is kept only if eager runs it, and, when it
rounds, only if its float32 result agrees with the same program in float64 to 1e-3 (no
overflow, no cancellation, nothing ill-conditioned whose every correct reordering gives
a different answer); an operation that jumps (``floor``, ``argmax``, ``remainder``...) is
only applied to exact values, so that a correct backend cannot land on the other side of
the jump. So a disagreement is the backend's, and values mostly stay finite where the
inputs are.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

import torch

from harness.checks import accuracy, value_domains
from harness.checks.compare import tolerance, weighted_loss
from harness.fuzz.generator import Builder, Kind, Program, Run, Statement, defined_name, names_in, run_capturing_locals

# The agreement a rounding statement's float32 result must have with float64 to be kept.
CONDITIONING = 1e-3

# Where the frontend that every backend shares (Dynamo, AOTAutograd) disagrees with eager on
# compute programs, measured on torch 2.13.0: kept out of the vocabulary, as the view
# generator's FRONTEND_LIMITS are.
FRONTEND_LIMITS: dict[str, str] = {}


@dataclass(frozen=True)
class Op:
    """One entry of the vocabulary.

    ``code`` is a template: ``{x}`` the operand, ``{y}`` a second operand of its dtype that
    broadcasts to it (or a number), ``{d}`` a dimension of ``{x}``, ``{n}`` its size there,
    ``{idx}`` an index tensor along ``{d}`` (repeated entries likely), ``{idx_like}`` such
    an index with ``{x}``'s shape, ``{k}`` a count up to ``{n}``, ``{perm}`` a permutation of
    the dimensions. ``takes`` says which operands it accepts (floating, integer, bool or
    any); ``exact`` whether it rounds (see the module's docstring); ``jumps`` whether a
    tiny change of the operand can change the result wholesale (then only exact operands).
    """

    family: str
    code: str
    takes: str = "floating"
    exact: bool = False
    jumps: bool = False
    min_dim: int = 0


def _ops(family: str, takes: str, codes: str, **flags: Any) -> list[Op]:
    return [Op(family, code.strip(), takes, **flags) for code in codes.split(";") if code.strip()]


VOCABULARY: tuple[Op, ...] = (
    # pointwise that rounds
    *_ops("pointwise", "floating", """torch.sin({x}); torch.cos({x}); {x}.exp(); torch.log({x}); {x}.tanh();
          {x}.sigmoid(); torch.sqrt({x}); torch.rsqrt({x}); torch.erf({x}); torch.expm1({x}); torch.log1p({x});
          {x}.reciprocal(); torch.nn.functional.gelu({x}); torch.nn.functional.silu({x});
          torch.nn.functional.softplus({x}); torch.atan({x}); {x} ** 2; {x} + {y}; {x} - {y}; {x} * {y};
          {x} / {y}; torch.atan2({x}, {y}); torch.hypot({x}, {y}); torch.lerp({x}, {y}, 0.3);
          torch.addcmul({x}, {x}, {y}, value=0.5); torch.pow({x}.abs(), 1.5); torch.logaddexp({x}, {y});
          torch.nn.functional.elu({x}); 1 / {x}"""),
    # pointwise that does not round
    *_ops("pointwise", "floating", """-{x}; {x}.abs(); {x}.relu(); torch.maximum({x}, {y}); torch.minimum({x}, {y});
          {x}.clamp(-0.5, 0.5); torch.where({x} > {y}, {x}, {y}); {x} * 2; {x}.nan_to_num(0.0, 1000.0, -1000.0);
          torch.fmax({x}, {y}); torch.clamp({x}, min={y}); {x} + torch.zeros_like({x}); {x}.clamp(min=0.0)""",
          exact=True),
    *_ops("pointwise", "floating", """{x}.floor(); {x}.ceil(); {x}.round(); {x}.trunc(); {x}.sign(); {x}.frac();
          torch.remainder({x}, 0.75); torch.fmod({x}, 0.75); torch.floor_divide({x}, 0.5); {x} > {y};
          {x} == {y}; {x}.signbit(); {x}.isnan(); {x}.isinf(); {x}.isfinite(); {x} <= 0; torch.remainder({x}, {y});
          {x} // 0.1; torch.div({x}, {y}, rounding_mode='floor'); torch.where({x} > 0, {x}, {y});
          torch.copysign({x}, {y})""", exact=True, jumps=True),
    *_ops("pointwise", "integer", """{x} + {y}; {x} - {y}; {x} * 3; {x} // 3; {x} % 5; {x} & {y}; {x} ^ 3; {x} | {y};
          torch.maximum({x}, {y}); {x}.abs(); -{x}; {x} > {y}; {x} >> 1; torch.where({x} > 0, {x}, {y})""",
          exact=True),
    *_ops("pointwise", "bool", """{x} & {y}; {x} | {y}; ~{x}; {x} ^ {y}; torch.where({x}, 1.5, -0.0)""", exact=True),
    # reductions
    *_ops("reduction", "floating", """{x}.sum({d}); {x}.mean({d}); {x}.sum({d}, keepdim=True); {x}.var({d});
          {x}.std({d}); {x}.logsumexp({d}); {x}.softmax({d}); {x}.log_softmax({d}); {x}.norm(dim={d});
          {x}.cumsum({d}); {x}.prod({d}); torch.linalg.vector_norm({x}, 3, dim={d}); {x}.sum(); {x}.nanmean({d});
          torch.var_mean({x}, {d})[1]; torch.var_mean({x}, {d})[0]""", min_dim=1),
    *_ops("reduction", "floating", """{x}.amax({d}); {x}.amin({d}); {x}.max({d}).values; {x}.sort({d}).values;
          {x}.cummax({d}).values; {x}.topk({k}, {d}).values; {x}.amax()""", exact=True, min_dim=1),
    *_ops("reduction", "floating", """{x}.argmax({d}); {x}.argmin({d}); {x}.sort({d}, stable=True).indices;
          {x}.max({d}).indices""", exact=True, jumps=True, min_dim=1),
    *_ops("reduction", "integer", """{x}.sum({d}); {x}.amax({d}); {x}.argmax({d}); {x}.cumsum({d});
          {x}.sort({d}, stable=True).values; {x}.min(); {x}.max(); {x}.argmin(); {x}.argmax();
          torch.full_like({x}, 1000000000, dtype=torch.int64).cumsum({d}) + {x}; {x}.cumsum({d}, dtype=torch.float64);
          torch.ones_like({x}).cumsum({d}, dtype=torch.float16)""", exact=True, min_dim=1),
    *_ops("reduction", "bool", """{x}.any({d}); {x}.all({d}); {x}.sum({d})""", exact=True, min_dim=1),
    # indexing and scatter; repeated indices where the result stays defined
    *_ops("indexing", "any", """{x}.index_select({d}, {idx}); {x}.gather({d}, {idx_like}); {x}.flip({d});
          torch.take({x}, {idx})""", exact=True, min_dim=1),
    *_ops("indexing", "any", """{x}.masked_fill({x} != {x}.flip({d}), 0)""", exact=True, jumps=True, min_dim=1),
    *_ops("indexing", "floating", """torch.zeros_like({x}).scatter_add({d}, {idx_like}, {x});
          {x}.index_add({d}, {idx}, {x}.index_select({d}, {idx}), alpha=0.5);
          {x}.index_put(({idx},), torch.tensor(1.5), accumulate=True);
          {x}.scatter_reduce({d}, {idx_like}, {x}.flip({d}), 'sum')""", min_dim=1),
    *_ops("indexing", "floating", """{x}.scatter_reduce({d}, {idx_like}, {x}.flip({d}), 'amax');
          {x}.scatter_reduce({d}, {idx_like}, {x}.flip({d}), 'amin', include_self=False)""", exact=True, min_dim=1),
    # matrix products and convolutions
    *_ops("matmul", "floating", """{x} @ {x}.transpose(-2, -1); torch.nn.functional.linear({x}, {x});
          torch.einsum('...ij,...kj->...ik', {x}, {x}.flip(-1))""", min_dim=2),
    *_ops("matmul", "floating", """torch.nn.functional.conv1d({x}, {x}[:, :, :2]);
          torch.nn.functional.conv2d({x}, {x}[:1, :, :2].unsqueeze(0))""", min_dim=3),
    *_ops("matmul", "floating", """torch.nn.functional.conv1d({x}[None], {x}[None, :, :2], padding=1)""", min_dim=2),
    *_ops("matmul", "integer", """{x} @ {x}.transpose(-2, -1); {x}[..., :1, :] @ {x}.transpose(-2, -1)""", exact=True,
          min_dim=2),
    # normalization
    *_ops("normalization", "floating", """torch.nn.functional.layer_norm({x}, {x}.shape[-1:]);
          torch.nn.functional.normalize({x}, dim={d}); torch.nn.functional.rms_norm({x}, {x}.shape[-1:]);
          torch.nn.functional.batch_norm({x}, None, None, training=True);
          torch.nn.functional.group_norm({x}, 1)""", min_dim=2),
    # shape
    *_ops("shape", "any", """{x}.reshape(-1); {x}.permute({perm}); {x}.transpose(0, -1).contiguous();
          torch.cat([{x}, {x}.flip({d})], {d}); torch.stack([{x}, {x}], {d}); {x}.roll(1, {d});
          {x}.repeat(2, *[1] * ({x}.dim() - 1)); {x}.unsqueeze({d}).expand(-1, 2, *[-1] * ({x}.dim() - 1)).clone();
          {x}.narrow({d}, 0, {k}); {x}.tril(); {x}.diagonal(0, 0, -1)""", exact=True, min_dim=1),
    *_ops("shape", "floating", """torch.nn.functional.pad({x}, (1, 2), value=-0.0);
          torch.nn.functional.pad({x}, (2, 1), mode='reflect'); {x}.triu(1)""", exact=True, min_dim=2),
    # type conversions, each correctly rounded (so exact) and defined for every value. Not
    # into half precision: a compiler may keep the wider value instead (inductor elides a
    # downcast followed by an upcast by design, config.emulate_precision_casts), and the
    # float64 reference would round where the compiled program need not. Half-precision
    # inputs stay: the reference widens them.
    *_ops("conversion", "floating", """{x}.double(); {x}.float(); {x}.nan_to_num(0.0).clamp(-1000, 1000).to(torch.int32);
          {x}.nan_to_num(0.0).clamp(0, 255).to(torch.uint8); {x}.to(torch.bool)""", exact=True),
    *_ops("conversion", "integer", """{x}.to(torch.float32); {x}.to(torch.float64); {x}.clamp(-128, 127).to(torch.int8);
          {x}.to(torch.bool); {x}.to(torch.int64)""", exact=True),
    *_ops("conversion", "bool", """{x}.to(torch.float32); {x}.to(torch.int64); {x}.float() * -0.0""", exact=True),
    *_ops("conversion", "floating", """(torch.complex({x}, {x}.flip(-1)) * torch.complex({x}.flip(-1), {x})).imag;
          torch.view_as_real(torch.complex({x}, {x}.flip(-1)).exp()).sum(-1)""", min_dim=1),
)
FAMILY_WEIGHTS = {"pointwise": 34, "reduction": 16, "indexing": 14, "matmul": 6, "normalization": 6, "shape": 12,
                  "conversion": 12}

# Inputs: dtype and shape by weight; the domain each carries (None: ordinary values only).
INPUT_DTYPES = {torch.float32: 60, torch.float64: 6, torch.float16: 4, torch.bfloat16: 4, torch.int64: 12,
                torch.int32: 4, torch.int8: 3, torch.uint8: 3, torch.bool: 4}
INPUT_SHAPES = {(4, 4): 10, (3, 4): 10, (4,): 8, (2, 3, 4): 10, (4, 2): 6, (6,): 6, (): 3, (0, 4): 2, (2, 1, 5): 4}
DOMAIN_WEIGHTS = {None: 20, "small": 12, "large": 10, "extremal": 14, "subnormal": 14, "negative zero": 14,
                  "ties": 10}
GRAD_SHARE = 0.5
# Wide signed integers take the large domain's values below 2^50 only: a sum of the type's
# edges overflows, which C++ leaves undefined, so eager's answer there is nobody's contract.
# 8-bit values are promoted to int before arithmetic and wrap when stored, in eager and in
# any C++ kernel alike: their edges stay.
_BELOW_2_TO_THE_50 = (torch.int64, torch.int32)


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return repr(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "float('nan')"
        if math.isinf(value):
            return "float('inf')" if value > 0 else "-float('inf')"
        return repr(value)
    return repr(int(value))


def _input_values(rng: random.Random, dtype: torch.dtype, numel: int, domains: tuple[str | None, ...]) -> list:
    if dtype == torch.bool:
        ordinary = [rng.random() < 0.5 for _ in range(numel)]
    elif dtype.is_floating_point:
        ordinary = [round(rng.gauss(0.0, 1.0), 4) for _ in range(numel)]
    elif dtype == torch.uint8:
        ordinary = [rng.randrange(0, 10) for _ in range(numel)]
    elif dtype == torch.int8:
        ordinary = [rng.randrange(-100, 100) for _ in range(numel)]
    else:
        ordinary = [rng.randrange(-6, 7) for _ in range(numel)]
    for domain in domains:
        if domain is None or numel == 0:
            continue
        entry = next(entry for entry in value_domains.DOMAINS if entry.name == domain)
        special = entry.values(dtype)
        if special and dtype in _BELOW_2_TO_THE_50:
            special = tuple(value for value in special if abs(value) < 2**50)
        if not special:
            continue
        # Each domain's values in a run at a random place, the rest ordinary.
        count = min(numel, max(len(special), numel // (2 * len(domains))))
        start = rng.randrange(numel - count + 1)
        shift = rng.randrange(len(special))
        for offset in range(count):
            ordinary[start + offset] = special[(offset + shift) % len(special)]
    return ordinary


def _tensor_source(values: list, dtype: torch.dtype, shape: tuple[int, ...]) -> str:
    body = ", ".join(_literal(value) for value in values)
    if dtype.is_floating_point:
        # Written as float64 numbers, rounded to the input's dtype once, as a loader would.
        made = f"torch.tensor([{body}], dtype=torch.float64).to({dtype})"
    else:
        made = f"torch.tensor([{body}], dtype={dtype})"
    return f"{made}.reshape({shape})"


class ComputeBuilder(Builder):
    """The vocabulary of ``VOCABULARY``, on inputs carrying the value domains."""

    kind = Kind.COMPUTE
    attempts = 50
    fewest_wanted = 3
    draws_per_statement = 6
    operand_share = 0.8
    numbers = ("2.0", "-1.5", "0.5", "-0.0")

    @staticmethod
    def stream(seed: int) -> random.Random:
        return random.Random(f"compute {seed}")

    def choose_inputs(self) -> bool:
        rng = self.rng
        for index in range(rng.choice((1, 2, 2, 3))):
            dtype = rng.choices(list(INPUT_DTYPES), list(INPUT_DTYPES.values()))[0]
            shape = rng.choices(list(INPUT_SHAPES), list(INPUT_SHAPES.values()))[0]
            if index and rng.random() < 0.5:  # often the shape of an earlier input, so they combine
                shape = tuple(self.values[self.params[0]].shape)
            domain = rng.choices(list(DOMAIN_WEIGHTS), list(DOMAIN_WEIGHTS.values()))[0]
            values = _input_values(rng, dtype, math.prod(shape), (domain,))
            base, param = f"base{index}", "abc"[index]
            grad = dtype.is_floating_point and rng.random() < GRAD_SHARE
            self.setup.append(f"{base} = {_tensor_source(values, dtype, shape)}"
                              + (".requires_grad_()" if grad else ""))
            self.setup.append(f"{param} = {base}")
            self.bases.append(base)
            self.params.append(param)
            self.exact.add(param)
            self.values[param] = torch.tensor(values, dtype=torch.float64 if dtype.is_floating_point else dtype
                                              ).to(dtype).reshape(shape)
        return True

    # choosing a statement

    def candidate(self) -> tuple[Statement, bool] | None:
        rng = self.rng
        family = rng.choices(list(FAMILY_WEIGHTS), list(FAMILY_WEIGHTS.values()))[0]
        op = rng.choice([op for op in VOCABULARY if op.family == family])
        name = self.pick(lambda name: _accepts(op, self.values[name]) and self.values[name].dim() >= op.min_dim
                         and (name in self.exact or not op.jumps))
        if name is None:
            return None
        code = self._filled(op.code, name)
        if code is None:
            return None
        operands = set(names_in(code)) & set(self.values)
        exact = op.exact and operands <= self.exact
        return Statement(f"{self.fresh()} = {code}"), exact

    def _filled(self, template: str, name: str) -> str | None:
        rng, x = self.rng, self.values[name]
        fields: dict[str, str] = {"x": name}
        if x.dim():
            d = rng.randrange(-x.dim(), x.dim())
            n = x.shape[d]
            fields.update(d=str(d), n=str(n), k=str(rng.randint(1, n) if n else 0),
                          perm=", ".join(map(str, rng.sample(range(x.dim()), x.dim()))))
            if "{idx" in template:
                if n == 0:
                    return None
                count = rng.randint(1, n + 2)
                fields["idx"] = f"torch.tensor({[rng.randrange(n) for _ in range(count)]})"
                picks = [rng.randrange(n) for _ in range(x.numel())]
                fields["idx_like"] = f"torch.tensor({picks}).reshape({tuple(x.shape)})"
        if "{y}" in template:
            fields["y"] = self.other_operand(x.shape, x.dtype)
        try:
            return template.format(**fields)
        except (KeyError, IndexError):
            return None

    # trying it

    def accepts(self, statement: Statement, program: Program, frame: dict[str, Any], exact: bool) -> bool:
        """Whether the value ``statement`` computed is a good one (see the module's docstring)."""
        try:
            _, wide = run_capturing_locals(program, _widened)
        except Exception:
            return False
        name = defined_name(statement.code)
        value = frame.get(name)
        if not isinstance(value, torch.Tensor) or value.is_complex():
            return False
        operands = [self.values[other] for other in names_in(statement.code) if other in self.values]
        if value.numel() and value.is_floating_point() and not value.isfinite().any() and all(
                bool(operand.isfinite().any()) for operand in operands if operand.is_floating_point()):
            return False  # every value lost to NaN or infinity: nothing left to compare
        return exact or (_agrees(value, wide.get(name)) and _stable(statement.code, frame))

    def choose_outputs(self) -> tuple[str, ...] | None:
        defined = [defined_name(statement.code) for statement in self.statements]
        read = {name for statement in self.statements for name in names_in(statement.code.split(" = ", 1)[1])}
        # The values nothing reads, the last among them: then every statement reaches an output.
        sinks = [name for name in defined if name not in read]
        return tuple(dict.fromkeys([defined[-1], *self.rng.sample(sinks, min(len(sinks), 3))]))[:4]

    def check_backward(self, program: Program) -> None:
        reference(program)  # the float64 truth that rounded values (gradients too) are judged by


def _accepts(op: Op, value: torch.Tensor) -> bool:
    if op.takes == "any":
        return True
    if op.takes == "floating":
        return value.is_floating_point()
    if op.takes == "bool":
        return value.dtype == torch.bool
    return not value.is_floating_point() and value.dtype != torch.bool and not value.is_complex()


def _agrees(value: torch.Tensor, wide: Any) -> bool:
    """Whether a rounding statement's float32 value is the float64 program's, to CONDITIONING:
    the same shape, NaN and infinities in the same places, the rest close."""
    if not value.is_floating_point():
        return True
    if not isinstance(wide, torch.Tensor) or wide.shape != value.shape:
        return False
    value, wide = value.detach().double(), wide.detach().double()
    if not torch.equal(value.isnan(), wide.isnan()) or not torch.equal(value.isinf(), wide.isinf()):
        return False
    return bool(torch.allclose(value, wide, rtol=CONDITIONING, atol=CONDITIONING, equal_nan=True))


def _stable(code: str, frame: dict[str, Any]) -> bool:
    """Whether a rounding statement's value moves little when its operands move by a
    millionth: the sum of 1e20, -1e20 and 501 does not pass, since another order of the same
    sum, which a compiler may choose, gives another answer."""
    generator = torch.Generator().manual_seed(0)
    moved = {}
    for name in names_in(code.split(" = ", 1)[1]):
        value = frame.get(name)
        if isinstance(value, torch.Tensor):
            if value.is_floating_point():
                noise = torch.rand(value.shape, generator=generator, dtype=torch.float64) * 2 - 1
                value = (value.detach().double() * (1 + 1e-6 * noise)).to(value.dtype)
            moved[name] = value.detach()
    try:
        again = eval(code.split(" = ", 1)[1], {"torch": torch}, moved)
    except Exception:
        return False
    value = frame[defined_name(code)].detach()
    if not isinstance(again, torch.Tensor) or again.shape != value.shape or not value.is_floating_point():
        return isinstance(again, torch.Tensor) and again.shape == value.shape
    again, value = again.double(), value.double()
    return bool(torch.equal(again.isnan(), value.isnan()) and torch.equal(again.isinf(), value.isinf())
                and torch.allclose(again, value, rtol=1e-3, atol=1e-5, equal_nan=True))


def _widened(args: list) -> list:
    """The arguments with every floating tensor as float64 (leaves that require grad stay
    such leaves)."""
    return [arg.detach().double().requires_grad_(arg.requires_grad)
            if isinstance(arg, torch.Tensor) and arg.is_floating_point() else arg for arg in args]


def reference(program: Program) -> Run:
    """The program run eagerly on its inputs in float64: the truth rounding is judged by."""
    make_inputs, function = program.build()
    bases, args = make_inputs()
    args = _widened(args)
    outputs = function(*args)
    grads = None
    loss = weighted_loss(outputs) if program.backward else None
    if loss is not None:
        loss.backward()
        grads = [arg.grad for arg in args if isinstance(arg, torch.Tensor) and arg.requires_grad]
    return Run(args, bases, outputs, grads)


def generate(seed: int) -> Program:
    """The compute program for ``seed``: the same on every run."""
    return ComputeBuilder.generate(seed)


def redrawn(program: Program) -> list[tuple[str, Program]]:
    """The program once per kind of input value: every input redrawn from that domain of
    the catalogue (``ordinary``: no special values), its shape, dtype and requires_grad kept."""
    bases, _ = program.build()[0]()
    variants = []
    for domain in DOMAIN_WEIGHTS:
        rng = random.Random(f"redrawn {program.seed} {domain}")
        setup = list(program.setup)
        for name, base in zip(program.bases, bases):
            values = _input_values(rng, base.dtype, base.numel(), (domain,))
            line = f"{name} = {_tensor_source(values, base.dtype, tuple(base.shape))}"
            setup[setup.index(next(line for line in setup if line.startswith(f"{name} = ")))] = \
                line + (".requires_grad_()" if base.requires_grad else "")
        variant = program.replace(setup=tuple(setup))
        if _conditioned(variant):
            variants.append((domain or "ordinary", variant))
    return variants


def _conditioned(program: Program) -> bool:
    """Whether eager runs the program and every rounding value in it agrees with the
    float64 program (as each statement had to when it was chosen)."""
    try:
        (_, frame), (_, wide) = run_capturing_locals(program), run_capturing_locals(program, _widened)
    except Exception:
        return False
    exact = set(program.exact)
    return all(_agrees(frame[name], wide.get(name)) for name in map(defined_name, (s.code for s in program.statements))
               if name not in exact and isinstance(frame.get(name), torch.Tensor))


# -- judging -------------------------------------------------------------------------------

def _bits_equal(want: torch.Tensor, got: torch.Tensor) -> bool:
    if not want.is_floating_point():
        return bool(torch.equal(want, got))
    nan = want.isnan()
    if not torch.equal(nan, got.isnan()):
        return False
    integer = {2: torch.int16, 4: torch.int32, 8: torch.int64}[want.element_size()]
    return bool(torch.equal(want.masked_fill(nan, 0).view(integer), got.masked_fill(nan, 0).view(integer)))


def _close_or_no_worse(name: str, want: torch.Tensor, got: torch.Tensor, truth: Any) -> str | None:
    if not torch.equal(want.isnan(), got.isnan()):
        return f"{name}: NaN at {int((want.isnan() != got.isnan()).sum())} positions where eager has none, or none where eager has"
    infinite = want.isinf() | got.isinf()
    if not torch.equal(want[infinite], got[infinite]):
        return f"{name}: infinities differ from eager at {int(infinite.sum())} positions"
    finite = want.isfinite()
    want, got = want[finite], got[finite]
    rtol, atol = tolerance(want.dtype)
    if torch.allclose(want, got, rtol=rtol, atol=atol):
        return None
    true = truth[finite].to(torch.float64) if isinstance(truth, torch.Tensor) and truth.shape == finite.shape else None
    mismatch = accuracy.mismatch(name, want, got, true, atol)
    return None if mismatch is None else str(mismatch)


def judge(program: Program, expected: Run, actual: Run) -> str | None:
    """How ``actual`` (the compiled run) differs from ``expected`` (eager's), in words."""
    exact = set(program.exact)
    truth: Run | None = None
    pairs = [(f"output {index} ({name})", want, got, name in exact, index, "outputs")
             for index, (name, want, got) in enumerate(zip(program.outputs, expected.outputs, actual.outputs))]
    pairs += [(f"grad of input {index}", want, got, False, index, "grads")
              for index, (want, got) in enumerate(zip(expected.grads or [], actual.grads or []))]
    for what, want, got, bitwise, index, field in pairs:
        if want is None or got is None:
            if want is None and got is not None and not got.count_nonzero():
                continue  # a compiled function is one autograd node: unused inputs get zeros
            if (want is None) != (got is None):
                return f"{what}: presence differs from eager"
            continue
        if not isinstance(got, torch.Tensor):
            return f"{what}: expected a tensor, got {type(got).__name__}"
        for attribute in ("shape", "dtype", "requires_grad"):
            if getattr(want, attribute) != getattr(got, attribute):
                return f"{what}: {attribute} {getattr(got, attribute)}, eager {getattr(want, attribute)}"
        want, got = want.detach(), got.detach()
        if bitwise or not want.is_floating_point():
            if not _bits_equal(want, got):
                return f"{what}: differs from eager where eager is exact (bit for bit){_where(want, got)}"
            continue
        if truth is None:
            truth = reference(program)
        problem = _close_or_no_worse(what, want, got, getattr(truth, field)[index])
        if problem:
            return problem
    return None


def _where(want: torch.Tensor, got: torch.Tensor) -> str:
    flat_want, flat_got = want.reshape(-1), got.reshape(-1)
    for position in range(flat_want.numel()):
        if not _bits_equal(flat_want[position:position + 1], flat_got[position:position + 1]):
            return f": at flat index {position}, eager {flat_want[position].item()!r}, compiled {flat_got[position].item()!r}"
    return ""
