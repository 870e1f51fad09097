"""add_, mul of a 0-d float32 and a 0-d float32: output requires_grad: [False], eager gives [True] (torch.compile, backend="openvino")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch

def f(state_counts, x):
    state_counts.add_(1)
    return x.mul(state_counts)

def inputs():
    torch.manual_seed(0)
    return [torch.rand(()), torch.rand(()).requires_grad_()]

eager_args, compiled_args = inputs(), inputs()
compiled = torch.compile(f, backend=sys.argv[2] if sys.argv[1:2] == ["--backend"] else "openvino", fullgraph=True)
expected = f(*eager_args)
try:
    actual = compiled(*compiled_args)
except Exception as error:  # Dynamo wraps the backend's own error
    sys.exit(f"the compiled call raised {getattr(error, 'inner_exception', error)!r}")
got, want = ([getattr(t, 'requires_grad', None) for t in torch.utils._pytree.tree_leaves(out)] for out in (actual, expected))
if got != want:
    sys.exit(f"output requires_grad: {got}, eager gives {want}")
leaves = [t for t in eager_args if isinstance(t, torch.Tensor) and t.requires_grad]
total = lambda out: sum(t.sum() for t in torch.utils._pytree.tree_leaves(out) if t.requires_grad)
want = torch.autograd.grad(total(expected), leaves, materialize_grads=True)
try:
    got = torch.autograd.grad(total(actual), [t for t in compiled_args if isinstance(t, torch.Tensor) and t.requires_grad], materialize_grads=True)
except Exception as error:
    sys.exit(f"backward raised {getattr(error, 'inner_exception', error)!r}")
for what, want, got in [("output", expected, actual), ("inputs after the call", eager_args, compiled_args), ("gradients", want, got)]:
    try:
        torch.testing.assert_close(got, want, equal_nan=True)
    except AssertionError as error:
        sys.exit(f"{what}: values differ from eager: {error}")
print("torch.compile agrees with eager")
