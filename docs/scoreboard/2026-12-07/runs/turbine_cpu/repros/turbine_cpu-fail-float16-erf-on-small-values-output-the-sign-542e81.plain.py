"""batch_norm of 5 tensors: output: values differ from eager (torch.compile, backend="turbine_cpu")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch

def f(tensors_21, tensors_22, tensors_23, tensors_24, tensors_25):
    batch_norm = torch.nn.functional.batch_norm(tensors_21, tensors_22, tensors_23, tensors_24, tensors_25, training=True, momentum=0.5)
    return batch_norm

torch.manual_seed(0)
args = [
    torch.rand((5, 5), dtype=torch.float16), torch.rand((5,), dtype=torch.float16),
    torch.rand((5,), dtype=torch.float16), torch.rand((5,), dtype=torch.float16),
    torch.rand((5,), dtype=torch.float16),
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
