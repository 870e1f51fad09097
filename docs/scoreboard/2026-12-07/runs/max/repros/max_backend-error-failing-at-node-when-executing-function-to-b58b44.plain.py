"""getitem, mul, add and 2 more ops of float32 (22, 4), float32 (3, 4) and float32 (22, 4): backward raised MaxCompilerError: Failin… (torch.compile, backend="torch_max_backend:max_backend")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch
from torch_max_backend import max_backend

def f(weight, x, bias):
    x = x + torch._C._nn.gelu(x * weight[0] + bias[0]) * 0.5
    x_1 = x + (x * weight[1] + bias[1]).tanh() * 0.5
    x_2 = x_1 + torch._C._nn.gelu(x_1 * weight[2] + bias[2]) * 0.5
    return (x_2 + (x_2 * weight[3] + bias[3]).tanh() * 0.5) * weight[4]

torch.manual_seed(0)
args = [
    torch.empty((88,)).uniform_(0.48, 1.9).requires_grad_().view(22, 4),
    torch.empty((12,)).uniform_(-1.5, 0.66).view(3, 4),
    torch.empty((88,)).uniform_(-0.57, 0.67).requires_grad_().view(22, 4),
]
compiled = torch.compile(f, backend=sys.argv[2] if sys.argv[1:2] == ["--backend"] else max_backend, fullgraph=True)
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
