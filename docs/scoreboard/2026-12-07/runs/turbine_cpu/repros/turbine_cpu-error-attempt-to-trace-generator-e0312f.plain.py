"""clone, native_layer_norm, getitem and 2 more ops of float32 (64,), float32 (64,) and float32 (64,): backward raised RuntimeError:… (torch.compile, backend="turbine_cpu")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch

def f(t, arg0_1, param_constant0, param_constant1):
    clone = torch.ops.aten.clone.default(arg0_1)
    native_layer_norm_default = torch.ops.aten.native_layer_norm.default(clone, [64], param_constant0, param_constant1, 1e-05)
    getitem = native_layer_norm_default[0]
    getitem_1 = native_layer_norm_default[1]
    getitem_2 = native_layer_norm_default[2]
    ones_like = torch.ops.aten.ones_like.default(getitem)
    native_layer_norm_backward_default = torch.ops.aten.native_layer_norm_backward.default(ones_like, clone, [64], getitem_1, getitem_2, param_constant0, param_constant1, [True, False, False])
    return (getitem, native_layer_norm_backward_default[0])

torch.manual_seed(0)
args = [10, torch.rand((64,)), torch.rand((64,)), torch.rand((64,)).requires_grad_()]
compiled = torch.compile(f, backend=sys.argv[2] if sys.argv[1:2] == ["--backend"] else "turbine_cpu", fullgraph=True)
expected = f(*args)
try:
    actual = compiled(*args)
except Exception as error:  # Dynamo wraps the backend's own error
    sys.exit(f"the compiled call raised {getattr(error, 'inner_exception', error)!r}")
leaves = [t for t in args if isinstance(t, torch.Tensor) and t.requires_grad]
total = lambda out: sum(t.sum() for t in torch.utils._pytree.tree_leaves(out) if t.requires_grad)
want = torch.autograd.grad(total(expected), leaves, materialize_grads=True)
try:
    got = torch.autograd.grad(total(actual), leaves, materialize_grads=True)
except Exception as error:
    sys.exit(f"backward raised {getattr(error, 'inner_exception', error)!r}")
for what, want, got in [("output", expected, actual), ("gradients", want, got)]:
    try:
        torch.testing.assert_close(got, want, equal_nan=True)
    except AssertionError as error:
        sys.exit(f"{what}: values differ from eager: {error}")
print("torch.compile agrees with eager")
