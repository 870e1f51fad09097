"""conv2d, batch_norm, relu of 9 tensors: IndexError: list index out of range (torch.compile, backend="openvino")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch

def f(weight, bias, x, running_mean, running_var, weight_2, bias_2, weight_3, bias_3):
    input_1 = torch.conv2d(x, weight, bias, (1, 1), (1, 1), (1, 1), 1)
    input_2 = torch.nn.functional.batch_norm(input_1, running_mean, running_var, weight_2, bias_2, False, 0.1, 1e-05)
    input_3 = torch.nn.functional.relu(input_2, inplace=False)
    input_4 = torch.conv2d(input_3, weight_3, bias_3, (1, 1), (1, 1), (1, 1), 1)
    return input_4

torch.manual_seed(0)
args = [
    torch.rand((32, 16, 1, 1)), torch.rand((32,)), torch.empty((1, 16, 1, 1)).uniform_(-4.1, 4.6),
    torch.tensor([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
    torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
    1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]),
    torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
    1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]).requires_grad_(),
    torch.tensor([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).requires_grad_(),
    torch.empty((32, 32, 3, 3)).uniform_(-0.059, 0.059).requires_grad_(),
    torch.tensor([-0.05365329, -0.053961627, -0.04511226, 0.041244872, 0.025034785, 0.054038744, 0.04062662,
    0.04104277, 0.012195184, 0.029812587, 0.021142714, -0.046853814, -0.046709184, 0.047259558, 0.036944985,
    -0.01522458, -0.033628058, -0.041344006, -0.04523142, -0.01884151, 0.004932811, 0.0017159738, 0.021700745,
    0.0071730423, 0.015188663, 0.044170264, 0.013182396, -0.0038389948, 0.029027391, 0.020407807, 0.025314176,
    -0.01590561]).requires_grad_(),
]
compiled = torch.compile(f, backend=sys.argv[2] if sys.argv[1:2] == ["--backend"] else "openvino", fullgraph=True)
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
