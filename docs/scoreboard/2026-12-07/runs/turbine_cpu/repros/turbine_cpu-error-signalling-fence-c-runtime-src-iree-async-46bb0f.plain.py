"""add of float64 (4,): ValueError: signalling fence: c/runtime/src/iree/async/semaphore.c:598: INVALID_ARGUMENT; semaphore already… (torch.compile, backend="turbine_cpu")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch

def f(t):
    return t + 1

args = [
    torch.tensor([-3.2535670272720627, -4.19578618611263, 1.210040542887898, 2.5140789989929795],
    dtype=torch.float64),
]
compiled = torch.compile(f, backend=sys.argv[2] if sys.argv[1:2] == ["--backend"] else "turbine_cpu", fullgraph=True)
expected = f(*args)
try:
    actual = compiled(*args)
except Exception as error:  # Dynamo wraps the backend's own error
    sys.exit(f"the compiled call raised {getattr(error, 'inner_exception', error)!r}")
try:
    torch.testing.assert_close(actual, expected, equal_nan=True)
except AssertionError as error:
    sys.exit(f"output: values differ from eager: {error}")
print("torch.compile agrees with eager")
