"""cos, mul of a 0-d float32: output requires_grad: [False], eager gives [True] (torch.compile, backend="openvino")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch

def f(x):
    return x.cos().mul(2)

torch.manual_seed(0)
args = [torch.rand(()).requires_grad_()]
compiled = torch.compile(f, backend=sys.argv[2] if sys.argv[1:2] == ["--backend"] else "openvino", fullgraph=True)
expected = f(*args)
try:
    actual = compiled(*args)
except Exception as error:  # Dynamo wraps the backend's own error
    sys.exit(f"the compiled call raised {getattr(error, 'inner_exception', error)!r}")
got, want = ([getattr(t, 'requires_grad', None) for t in torch.utils._pytree.tree_leaves(out)] for out in (actual, expected))
if got != want:
    sys.exit(f"output requires_grad: {got}, eager gives {want}")
try:
    torch.testing.assert_close(actual, expected, equal_nan=True)
except AssertionError as error:
    sys.exit(f"output: values differ from eager: {error}")
print("torch.compile agrees with eager")
