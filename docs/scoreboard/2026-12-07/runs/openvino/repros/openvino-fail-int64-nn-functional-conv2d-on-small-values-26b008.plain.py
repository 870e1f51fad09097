"""repeat, conv2d, linear of 7 tensors: AssertionError: sources must not be empty for symbol s24 (torch.compile, backend="openvino")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch

def f(tensors_0, tensors_1, tensors_2, tensors_3, tensors_4, tensors_5, tensors_6):
    repeat = tensors_0.repeat(())
    conv2d = torch.conv2d(tensors_1, tensors_2, tensors_3, stride=(2, 2), padding=2)
    return (repeat, conv2d, torch._C._nn.linear(tensors_4, tensors_5, tensors_6))

torch.manual_seed(0)
args = [
    torch.tensor(9223372036854775807),
    torch.tensor([[[[9223372036854775807, -9223372036854775808, 9223372036854775806, -9223372036854775807],
    [2147483653, -2147483655, 1099511627777, 0], [1, 9223372036854775807, -9223372036854775808,
    9223372036854775806], [-9223372036854775807, 2147483653, -2147483655, 1099511627777]], [[0, 1,
    9223372036854775807, -9223372036854775808], [9223372036854775806, -9223372036854775807, 2147483653,
    -2147483655], [1099511627777, 0, 1, 9223372036854775807], [-9223372036854775808, 9223372036854775806,
    -9223372036854775807, 2147483653]], [[-2147483655, 1099511627777, 0, 1], [9223372036854775807,
    -9223372036854775808, 9223372036854775806, -9223372036854775807], [2147483653, -2147483655, 1099511627777, 0],
    [1, 9223372036854775807, -9223372036854775808, 9223372036854775806]]]]),
    torch.randint(-9, 10, (3, 3, 1, 2)), torch.tensor([-9, -9, -9]),
    torch.tensor([9223372036854775807, -9223372036854775808, 9223372036854775806]),
    torch.tensor([[-1, 0, -2], [0, 0, -1], [-2, 1, 0], [-2, 0, -1]]), torch.randint(-2, 2, ()),
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
