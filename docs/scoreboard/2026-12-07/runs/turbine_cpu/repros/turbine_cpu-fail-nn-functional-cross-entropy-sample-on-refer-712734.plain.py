"""embedding, mse_loss, nll_loss of 6 tensors: backward raised AssertionError: Please convert all Tensors to FakeTensors first or in… (torch.compile, backend="turbine_cpu")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch

def f(tensors_0, tensors_1, tensors_2, tensors_3, tensors_4, tensors_5):
    embedding = torch.nn.functional.embedding(tensors_1, tensors_0)
    mse_loss = torch.nn.functional.mse_loss(tensors_2, tensors_3)
    return (embedding, mse_loss, torch.nn.functional.nll_loss(tensors_4, tensors_5))

torch.manual_seed(0)
args = [
    torch.rand((10, 1)), torch.tensor(9), torch.rand(()), torch.rand(()), torch.rand((2, 2)).requires_grad_(),
    torch.tensor([1, 0]),
]
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
