"""relu of float32 (2, 2) strided: output stride: [(2, 1)], eager gives [(1, 2)] (torch.compile, backend="turbine_cpu")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch

def f(t):
    return [t.relu()]

torch.manual_seed(0)
args = [torch.empty_strided((2, 2), (1, 2), dtype=torch.float32).copy_(torch.rand((2, 2)))]
compiled = torch.compile(f, backend=sys.argv[2] if sys.argv[1:2] == ["--backend"] else "turbine_cpu", fullgraph=True)
expected = f(*args)
try:
    actual = compiled(*args)
except Exception as error:  # Dynamo wraps the backend's own error
    sys.exit(f"the compiled call raised {getattr(error, 'inner_exception', error)!r}")
got, want = ([getattr(t, 'stride', list)() for t in torch.utils._pytree.tree_leaves(out)] for out in (actual, expected))
if got != want:
    sys.exit(f"output stride: {got}, eager gives {want}")
try:
    torch.testing.assert_close(actual, expected, equal_nan=True)
except AssertionError as error:
    sys.exit(f"output: values differ from eager: {error}")
print("torch.compile agrees with eager")
