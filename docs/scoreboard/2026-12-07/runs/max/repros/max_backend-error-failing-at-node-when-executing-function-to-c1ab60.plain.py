"""embedding, add, layer_norm and 10 more ops of 15 tensors: MaxCompilerError: Failing at node 48 when executing function torch._ops… (torch.compile, backend="torch_max_backend:max_backend")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch
from torch_max_backend import max_backend

def f(weight, tokens, x, weight_2, bias, weight_3, bias_2, weight_4, bias_3, weight_5, bias_4, running_mean, running_var, weight_6, bias_5):
    embedding = torch.nn.functional.embedding(tokens, weight, None, None, 2.0, False, False)
    h = embedding.add(x)
    layer_norm = torch.nn.functional.layer_norm(h, (16,), weight_2, bias, 1e-05)
    linear = torch._C._nn.linear(layer_norm, weight_3, bias_2)
    chunk = linear.chunk(3, -1)
    q = chunk[0]
    k = chunk[1]
    v = chunk[2]
    scaled_dot_product_attention = torch._C._nn.scaled_dot_product_attention(q, k, v, is_causal=True)
    linear_1 = torch._C._nn.linear(scaled_dot_product_attention, weight_4, bias_3)
    h_1 = h.add(linear_1)
    transpose = h_1.transpose(1, 2)
    conv1d = torch.conv1d(transpose, weight_5, bias_4, (1,), (1,), (1,), 1)
    batch_norm = torch.nn.functional.batch_norm(conv1d, running_mean, running_var, weight_6, bias_5, False, 0.1)
    return h_1.add(torch._C._nn.gelu(batch_norm.transpose(1, 2))).softmax(-1)

torch.manual_seed(0)
args = [
    torch.rand((32, 1)), torch.randint(0, 28, ()), torch.rand((1, 1, 16)), torch.rand((16,)), torch.rand((16,)),
    torch.rand((48, 16)), torch.rand(()), torch.rand((16, 16)), torch.rand(()), torch.rand((16, 16, 1)),
    torch.rand((16,)), torch.rand((16,)), torch.rand((16,)), torch.rand((16,)), torch.rand((16,)),
]
compiled = torch.compile(f, backend=sys.argv[2] if sys.argv[1:2] == ["--backend"] else max_backend, fullgraph=True)
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
