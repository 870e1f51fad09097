"""A problem's repro as the user code a maintainer would write (issue 69's "plain torch" form).

From one graph the backend received (Dynamo's FX code and its inputs as
``harness.measure.repro`` records them) and the backend's spec, a script of about 30 lines:
``import torch``, the backend's import, ``def f(...)`` whose body is the graph's ops, inputs
from a seed or as literals, ``torch.compile(f, backend=...)`` beside eager, and what differs.
Nothing of the suite and no path of the machine that wrote it: FX's comments (which name
source files) are dropped with the rest of the formatting, a file spec's directory is left out.

It exits 0 when the compiled call agrees with eager, 1 when the problem shows (the compiled
call raises, or its outputs or its inputs after the call differ), 3 when the script could not
run its check (an import fails, eager itself raises): never 1 for that, which would blame the
reference path (``--backend aot_eager``) for a problem it cannot run.

``render`` returns None where a graph is not plain (no graph, or code this cannot rewrite):
the caller keeps the generic form of ``harness.repros.generic`` then. Text in, text out: this
module does not import torch.
"""

from __future__ import annotations

import ast
import json
import keyword
import math
import re
import struct
import textwrap
from typing import Any

SHOWS, CANNOT_CHECK = 1, 3
REFERENCE = "aot_eager"  # the backend a repro's control runs: PyTorch's reference path
# Operations that draw from the generator: eager and compiled each start from the same seed.
RANDOM_OPS = {"rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "randperm", "bernoulli",
              "bernoulli_", "dropout", "native_dropout", "alpha_dropout", "feature_alpha_dropout", "dropout2d",
              "dropout3d", "multinomial", "normal", "normal_", "uniform_", "exponential_", "geometric_",
              "log_normal_", "cauchy_", "random_", "poisson", "rrelu", "rrelu_with_noise"}
INLINED_LIMIT = 90  # characters: a statement no longer than this once a value is written into it
LITERAL_LIMIT = 80  # characters: a tensor's values longer than this as a literal are drawn from the seed
INPUTS_LIMIT = 100  # characters: a longer list of inputs is written over lines
LINE_LIMIT = 120  # characters a line of the script may take
_MODULES = ("operator", "math", "builtins")  # FX code may name them; the script imports those it uses
# Differences the comparison names beyond values, when the problem's check named one
# (harness.report.formats.upstream._KINDS): the attribute each output is compared by.
_ATTRIBUTES = {"requires_grad": "getattr(t, 'requires_grad', None)", "stride": "getattr(t, 'stride', list)()"}


def _short(value: Any, dtype: str) -> str:
    """A float as the fewest digits that give the same value in ``dtype``."""
    if not isinstance(value, float):
        return repr(value)
    if not math.isfinite(value):
        return "math.nan" if math.isnan(value) else ("math.inf" if value > 0 else "-math.inf")
    if dtype in ("float16", "bfloat16", "float32", "complex64"):
        same = struct.unpack("f", struct.pack("f", value))[0]
        text = next(text for text in (f"{value:.{digits}g}" for digits in range(1, 10))
                    if struct.unpack("f", struct.pack("f", float(text)))[0] == same)
        return text if re.search(r"[.e]", text) else f"{text}.0"  # 2.0, not 2: torch.tensor(2) is an integer
    return repr(value)


def _rounded(value: float) -> float | str:
    """A drawn range's end to two significant digits: the range matters, its last digits do not."""
    value = float(value)
    return float(f"{value:.2g}") if math.isfinite(value) else _short(value, "float64")


def _literal(values: Any, dtype: str) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_literal(value, dtype) for value in values) + "]"
    return _short(values, dtype)


def contiguous(shape: list[int], stride: list[int]) -> bool:
    expected = 1
    for size, step in reversed(list(zip(shape, stride))):
        if size > 1 and step != expected:
            return False
        expected *= size
    return True


def _first_slice(values: Any, dims: list[int], depth: int = 0) -> Any:
    """An expanded tensor's values along ``dims`` cut to their first: the slice it was expanded from."""
    if not isinstance(values, list):
        return values
    values = values[:1] if depth in dims else values
    return [_first_slice(value, dims, depth + 1) for value in values]


def _flattened(values: Any) -> list[Any]:
    return [each for value in values for each in _flattened(value)] if isinstance(values, list) else [values]


def bounds(values: Any) -> list[float] | None:
    """The least and greatest of recorded values too many to write out: the range to draw from."""
    flat, pending = [], [values]
    while pending:
        value = pending.pop()
        if isinstance(value, list):
            pending.extend(value)
        elif isinstance(value, (int, float)) and math.isfinite(value):
            flat.append(value)
    return [min(flat), max(flat)] if flat else None


def tensor_source(spec: dict[str, Any]) -> str:
    """The expression that makes the input ``spec`` describes (shape, stride, dtype, device,
    requires_grad, and its values or their range)."""
    dtype = spec["dtype"].removeprefix("torch.")
    shape, stride = list(spec["shape"]), list(spec["stride"])
    expanded = [dim for dim, (size, step) in enumerate(zip(shape, stride)) if size > 1 and step == 0]
    view = bool(spec.get("view")) and not expanded  # a view of another tensor: Dynamo and backends treat those apart
    if view and contiguous(shape, stride):  # as a test writes it: torch.arange(6.0).view(2, 3)
        numel = math.prod(shape)
        flat = dict(spec, shape=[numel], stride=[1], view=False)
        if "values" in spec:
            flat["values"] = _flattened(spec["values"])
        return f"{tensor_source(flat)}.view({', '.join(map(str, shape)) or '()'})"
    base = tuple(1 if dim in expanded else size for dim, size in enumerate(shape))
    device = [f'device="{spec["device"]}"'] if spec.get("device", "cpu") != "cpu" else []
    options = [f"dtype=torch.{dtype}", *device]
    implied = device if dtype in ("float32", "int64") else options  # what torch takes by default left out
    values = spec.get("values")
    literal = None if values is None else _literal(_first_slice(values, expanded), dtype)
    low, high = spec.get("range") or bounds(values) or [0, 1]
    # "literal": the values as recorded, however long (a reduction draws them from their range only
    # where the problem still shows then: NaN, infinities, large integers, exact ties may be the point).
    if literal is not None and (len(literal) <= LITERAL_LIMIT or spec.get("literal")):
        made = f"torch.tensor({', '.join([literal, *implied])})"
    elif dtype == "bool":
        made = f"torch.randint(0, 2, {', '.join([repr(base), *options])})"
    elif dtype.startswith("complex"):
        made = f"torch.randn({', '.join([repr(base), *options])})"
    elif dtype.startswith(("float", "bfloat")) and [_rounded(low), _rounded(high)] == [0.0, 1.0]:
        made = f"torch.rand({', '.join([repr(base), *implied])})"
    elif dtype.startswith(("float", "bfloat")):
        made = f"torch.empty({', '.join([repr(base), *implied])}).uniform_({_rounded(low)}, {_rounded(high)})"
    else:
        made = f"torch.randint({int(low)}, {int(high) + 1}, {', '.join([repr(base), *implied])})"
    kept = [(size, step) for dim, (size, step) in enumerate(zip(shape, stride)) if dim not in expanded]
    if view:  # strided over a flat tensor of its own
        storage = 1 + sum((size - 1) * step for size, step in zip(shape, stride))
        made = (f"torch.empty({', '.join([str(storage), *implied])}).as_strided({tuple(shape)!r}, {tuple(stride)!r})"
                f".copy_({made})")
    elif not contiguous([size for size, _ in kept], [step for _, step in kept]):
        made = f"torch.empty_strided({', '.join([repr(base), repr(tuple(stride)), *options])}).copy_({made})"
    if expanded:
        made += f".expand{tuple(shape)!r}"
    return made + (".requires_grad_()" if spec.get("requires_grad") else "")


def input_source(spec: Any) -> str:
    if isinstance(spec, dict):
        return tensor_source(spec)
    return _short(spec, "float64")


class _Rewrite(ast.NodeTransformer):
    """Names renamed (``names``) or read ones replaced by an expression (``values``)."""

    def __init__(self, names: dict[str, str], values: dict[str, ast.expr] = None):
        self.names, self.values = names, values or {}

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        """FX's ``x[slice(None, 1, None)]`` as a test writes it: ``x[:1]``."""
        self.generic_visit(node)
        if isinstance(node.slice, ast.Tuple):
            node.slice.elts = [_colon(each) for each in node.slice.elts]
        else:
            node.slice = _colon(node.slice)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.values and isinstance(node.ctx, ast.Load):
            return self.values[node.id]
        node.id = self.names.get(node.id, node.id)
        return node


def _colon(index: ast.expr) -> ast.expr:
    if not (isinstance(index, ast.Call) and isinstance(index.func, ast.Name) and index.func.id == "slice"
            and not index.keywords and 1 <= len(index.args) <= 3):
        return index
    parts = [None if isinstance(each, ast.Constant) and each.value is None else each for each in index.args]
    lower, upper, step = ([None, *parts, None] if len(parts) == 1 else [*parts, None][:3])
    return ast.Slice(lower, upper, step)


def parameter_name(placeholder: str, taken: set[str]) -> str:
    """``L_x_`` -> ``x``; ``L_self_modules_lin_parameters_weight_`` -> ``weight``; a value the
    minifier made an input (named after the op that computed it: ``lerp``) -> ``t``."""
    if not re.match(r"^[LGlg]_", placeholder):
        placeholder = "t"
    name = re.sub(r"^[LGlg]_", "", placeholder).strip("_").lower() or "arg"
    name = re.split(r"_(?:parameters|buffers)_", name)[-1]
    if not name.isidentifier() or keyword.iskeyword(name) or name in ("torch", "f", *_MODULES):
        name = f"{name}_"
    candidate, count = name, 2
    while candidate in taken:
        candidate, count = f"{name}_{count}", count + 1
    taken.add(candidate)
    return candidate


def function_source(code: str) -> str | None:
    """The graph's ``forward`` as ``def f(...)``: no ``self``, no annotations, no aliases of the
    inputs, no ``x = None`` releases, no comments; None where the code is not a graph's forward."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    forward = next((node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "forward"), None)
    if forward is None or not forward.args.args or forward.args.args[0].arg != "self":
        return None
    taken: set[str] = set()
    names = {arg.arg: parameter_name(arg.arg, taken) for arg in forward.args.args[1:]}
    body = []
    for statement in forward.body:
        if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant) \
                and statement.value.value is None:
            continue  # FX releases a value it no longer needs
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name) and isinstance(statement.value, ast.Name) \
                and statement.value.id in names:
            names[statement.targets[0].id] = names[statement.value.id]  # Dynamo's l_x_ = L_x_
            continue
        body.append(statement)
    used = {node.id for statement in body for node in ast.walk(statement) if isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)}
    for index, statement in enumerate(body):  # an in-place call whose result nothing reads
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
                and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id not in used:
            body[index] = ast.Expr(statement.value)
    body = _inlined(body)
    last = body[-1] if body else None
    if isinstance(last, ast.Return) and isinstance(last.value, ast.Tuple) and len(last.value.elts) == 1:
        last.value = last.value.elts[0]
    forward.name = "f"
    forward.args.args = [ast.arg(arg=names[arg.arg]) for arg in forward.args.args[1:]]
    forward.returns, forward.body = None, body or [ast.Pass()]
    # FX writes a torch.device as device(type='cpu'): the script has no such name.
    torch_names = {} if "device" in names.values() else {"device": ast.parse("torch.device", mode="eval").body}
    rewritten = _Rewrite(names, torch_names).visit(forward)
    return ast.unparse(ast.fix_missing_locations(rewritten))


def _inlined(body: list[ast.stmt]) -> list[ast.stmt]:
    """A value read once, by the very next statement, written into it (``return torch.pow(x, y)``):
    each FX statement is one op on names, so the ops still run in the graph's order."""
    reads: dict[str, int] = {}
    for statement in body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                reads[node.id] = reads.get(node.id, 0) + 1
    kept: list[ast.stmt] = []
    for statement in body:
        while kept and isinstance(kept[-1], ast.Assign) and len(kept[-1].targets) == 1 \
                and isinstance(kept[-1].targets[0], ast.Name) and reads.get(kept[-1].targets[0].id) == 1:
            name, value = kept[-1].targets[0].id, kept[-1].value
            if not any(isinstance(node, ast.Name) and node.id == name for node in ast.walk(statement)):
                break
            replaced = _Rewrite({}, {name: value}).visit(ast.parse(ast.unparse(statement)).body[0])
            if len(ast.unparse(replaced)) > INLINED_LIMIT:
                break
            kept.pop()
            statement = replaced
        kept.append(statement)
    return kept


def backend_source(spec: str, imports: list[str] = ()) -> tuple[list[str], str]:
    """The import lines a backend spec needs and the expression that is the backend:
    ``openvino`` -> ([], '"openvino"'); ``thunder.dynamo:ThunderCompiler()`` ->
    (['from thunder.dynamo import ThunderCompiler'], 'ThunderCompiler()'). ``imports`` are the
    modules the run imported to register backends (DYNAMO_SUITE_IMPORTS)."""
    lines = [f"import {module}  # registers the backend" for module in imports]
    if ":" not in spec:
        return lines, json.dumps(spec)
    where, attr = spec.rsplit(":", 1)
    called = attr.endswith("()")
    attr = attr.removesuffix("()")
    if where.endswith(".py"):  # a file of the machine that wrote it: by its name, beside the script
        where = re.split(r"[\\/]", where)[-1].removesuffix(".py")
        lines.append(f"# {where}.py, the backend's file, beside this script")
    top, _, rest = attr.partition(".")
    lines.append(f"from {where} import {top}")
    return lines, f"{attr}{'()' if called else ''}"


_OPERATORS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floordiv",
              ast.Mod: "remainder", ast.Pow: "pow", ast.MatMult: "matmul", ast.BitAnd: "bitwise_and",
              ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor", ast.LShift: "lshift", ast.RShift: "rshift",
              ast.USub: "neg", ast.Invert: "bitwise_not", ast.Not: "logical_not"}


def operations(code: str) -> list[str]:
    """The operations of a graph's code in order, calls and operators alike: ``sin``, ``mul``,
    ``pow``; an indexing is ``getitem``. Grad-mode switches are not operations of the graph."""
    found = []
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Call):
            dotted = ast.unparse(node.func).split(".")
            # torch.ops.aten.sym_size.int: the op is sym_size; the last part is its overload.
            name = dotted[3] if dotted[:2] == ["torch", "ops"] and len(dotted) > 3 else dotted[-1]
            # slice(...) of an indexing and device(...) are arguments, not operations.
            if name and not name.startswith(("_set_grad", "_assert")) and name not in ("slice", "device"):
                found.append(name)
        elif isinstance(node, (ast.BinOp, ast.UnaryOp)) and type(node.op) in _OPERATORS:
            found.append(_OPERATORS[type(node.op)])
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            found.append("getitem")
    return found


def mutates(function: str) -> bool:
    """Whether ``def f`` writes into what it is given (an in-place method or op, ``out=``, an
    item set): then each call gets inputs of its own, and the inputs are compared after it."""
    return any(writes_into(node) for node in ast.walk(ast.parse(function)))


def call_name(node: ast.Call) -> str:
    return node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")


def writes_into(node: ast.AST) -> bool:
    """Whether ``node`` is a call that writes into an argument: an in-place method or op,
    ``out=``, an item set."""
    if not isinstance(node, ast.Call):
        return False
    name = call_name(node)
    return bool(re.fullmatch(r"[a-z0-9_]*[a-z0-9]_", name)) or name in ("setitem", "copy_") \
        or any(keyword.arg == "out" for keyword in node.keywords)


def render(graph: dict[str, Any], backend: str, title: str, *, imports: list[str] = (), kind: str | None = None,
           backward: bool = False, compile_options: dict[str, Any] | None = None) -> str | None:
    """The plain script for ``graph`` ({"code", "inputs"}) against ``backend`` (a spec as
    run_tests.py takes it); ``title`` is its first line, ``kind`` the difference the problem's
    check named (requires_grad, stride: compared beside values), ``backward`` whether the
    gradients are part of it. None where the graph is not plain."""
    function = function_source(graph.get("code", ""))
    specs = graph.get("inputs")
    if function is None or specs is None:
        return None
    imported, backend_expression = backend_source(backend, imports)
    made = [input_source(spec) for spec in specs]
    modules = sorted(module for module in _MODULES if re.search(rf"\b{module}\.", "\n".join([function, *made])))
    listed = f"[{', '.join(made)}]"
    if len(listed) > INPUTS_LIMIT:  # as many a line as fit; a long literal over lines of its own
        rows = [""]
        for each in made:
            if rows[-1] and len(rows[-1]) + len(each) + 2 > LINE_LIMIT - 8:
                rows.append("")
            rows[-1] += f"{each}, "
        wrapped = [line for row in rows for line in textwrap.wrap(row.rstrip(), LINE_LIMIT - 8, break_long_words=False,
                                                                  break_on_hyphens=False)]
        listed = "[\n" + "".join(f"    {line}\n" for line in wrapped) + "]"
    seeded = any(re.search(r"\btorch\.(rand|randn|randint|empty)\b", each) for each in made)
    separate = mutates(function)  # each call needs inputs of its own
    lines = [f'"""{_docstring(title)}"""', f"import {', '.join(['os', 'sys', *modules])}",
             f"# Exit {SHOWS}: the problem shows; 0: compiled agrees with eager; {CANNOT_CHECK}: the check cannot run. "
             f"--backend {REFERENCE}: the reference.",
             f"sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit({CANNOT_CHECK}))",
             "import torch", *imported, "", function, ""]
    if separate and _clones_keep_layout(specs):  # each call its own copy of the same values
        lines += [*(["torch.manual_seed(0)"] if seeded else []), f"eager_args = {listed}",
                  "compiled_args = [t.clone() if isinstance(t, torch.Tensor) else t for t in eager_args]"]
        eager_args, compiled_args = "eager_args", "compiled_args"
    elif separate:  # made twice: clone() would not keep an expanded layout, nor a leaf a leaf
        lines += ["def inputs():", *(["    torch.manual_seed(0)"] if seeded else []),
                  *_indented(f"return {listed}"), "", "eager_args, compiled_args = inputs(), inputs()"]
        eager_args, compiled_args = "eager_args", "compiled_args"
    else:
        lines += [*(["torch.manual_seed(0)"] if seeded else []), f"args = {listed}"]
        eager_args = compiled_args = "args"
    # A backend name nothing registered raises here, outside the check: the script cannot run it.
    chosen = f'sys.argv[2] if sys.argv[1:2] == ["--backend"] else {backend_expression}'
    compiled = f"compiled = torch.compile(f, backend={chosen}, fullgraph=True{_options(compile_options)})"
    lines += [compiled] if len(compiled) <= LINE_LIMIT else [
        f"backend = {chosen}", f"compiled = torch.compile(f, backend=backend, fullgraph=True{_options(compile_options)})"]
    reseeded = bool(RANDOM_OPS & set(operations(function)))  # both calls draw the same numbers
    lines += [*(["torch.manual_seed(0)"] if reseeded else []), f"expected = f(*{eager_args})",
              "try:", *(["    torch.manual_seed(0)"] if reseeded else []), f"    actual = compiled(*{compiled_args})",
              "except Exception as error:  # Dynamo wraps the backend's own error",
              "    sys.exit(f\"the compiled call raised {getattr(error, 'inner_exception', error)!r}\")"]
    if kind in _ATTRIBUTES:  # assert_close compares values, dtypes and shapes, not these; first, as
        attribute = _ATTRIBUTES[kind]  # the problem names it (its values may differ too, another problem)
        lines += [f"got, want = ([{attribute} for t in torch.utils._pytree.tree_leaves(out)] for out in (actual, "
                  "expected))",
                  "if got != want:", f'    sys.exit(f"output {kind}: {{got}}, eager gives {{want}}")']
    compared = [("output", "expected", "actual")]
    if separate:
        compared.append(("inputs after the call", eager_args, compiled_args))
    if backward:
        lines += ["leaves = [t for t in args if isinstance(t, torch.Tensor) and t.requires_grad]".replace(
                      "in args", f"in {eager_args}"),
                  "total = lambda out: sum(t.sum() for t in torch.utils._pytree.tree_leaves(out) if t.requires_grad)",
                  "want = torch.autograd.grad(total(expected), leaves, materialize_grads=True)", "try:",
                  "    got = torch.autograd.grad(total(actual), " + (
                      "[t for t in compiled_args if isinstance(t, torch.Tensor) and t.requires_grad]"
                      if separate else "leaves") + ", materialize_grads=True)",
                  "except Exception as error:",
                  "    sys.exit(f\"backward raised {getattr(error, 'inner_exception', error)!r}\")"]
        compared.append(("gradients", "want", "got"))
    if len(compared) == 1:
        lines += ["try:", "    torch.testing.assert_close(actual, expected, equal_nan=True)",
                  "except AssertionError as error:", '    sys.exit(f"output: values differ from eager: {error}")']
    else:
        pairs = ", ".join(f'("{what}", {want}, {got})' for what, want, got in compared)
        lines += [f"for what, want, got in [{pairs}]:", "    try:",
                  "        torch.testing.assert_close(got, want, equal_nan=True)",
                  "    except AssertionError as error:",
                  '        sys.exit(f"{what}: values differ from eager: {error}")']
    lines.append('print("torch.compile agrees with eager")')
    return "\n".join(lines) + "\n"


def _clones_keep_layout(specs: list[Any]) -> bool:
    """Whether ``t.clone()`` of each input is the same input: a dense layout clone keeps, and no
    leaf that requires grad (its clone is not a leaf), no view (its clone is not one)."""
    for spec in specs:
        if isinstance(spec, dict) and (spec.get("requires_grad") or spec.get("view") or any(
                size > 1 and step == 0 for size, step in zip(spec["shape"], spec["stride"]))):
            return False
    return True


def _indented(statement: str) -> list[str]:
    return [f"    {line}" if line.strip() else line for line in statement.splitlines()]


def _options(compile_options: dict[str, Any] | None) -> str:
    return "".join(f", {name}={value!r}" for name, value in (compile_options or {}).items())


def _docstring(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"""', '\\"""')
