"""avg_pool2d of float32 (1, 1, 1): RuntimeError: JIT compilation failed. See diagnostics (torch.compile, backend="turbine_cpu")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch

def f(tensors_1):
    return torch._C._nn.avg_pool2d(tensors_1, (6, 6), (3, 3), (2, 3), True, True)

torch.manual_seed(0)
args = [torch.rand((1, 1, 1)).requires_grad_()]
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
