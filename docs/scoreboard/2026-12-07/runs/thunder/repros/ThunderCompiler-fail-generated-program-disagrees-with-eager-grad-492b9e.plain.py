"""mul, reshape, zero_ and 1 more ops of a 0-d float32: gradients: values differ from eager: Scalars are not close! (torch.compile, backend="thunder.dynamo:ThunderCompiler()")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch
from thunder.dynamo import ThunderCompiler

def f(a):
    v0 = a.mul(2.0)
    v0.reshape(-1).zero_()
    return v0

def inputs():
    torch.manual_seed(0)
    return [torch.rand(()).requires_grad_()]

eager_args, compiled_args = inputs(), inputs()
backend = sys.argv[2] if sys.argv[1:2] == ["--backend"] else ThunderCompiler()
compiled = torch.compile(f, backend=backend, fullgraph=True)
expected = f(*eager_args)
try:
    actual = compiled(*compiled_args)
except Exception as error:  # Dynamo wraps the backend's own error
    sys.exit(f"the compiled call raised {getattr(error, 'inner_exception', error)!r}")
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
