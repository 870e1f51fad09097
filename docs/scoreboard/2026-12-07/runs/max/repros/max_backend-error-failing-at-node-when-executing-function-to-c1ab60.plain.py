"""embedding, add, layer_norm and 14 more ops of 16 tensors: MaxCompilerError: Failing at node 20 when executing function _operator.… (torch.compile, backend="torch_max_backend:max_backend")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch
from torch_max_backend import max_backend

def f(weight, tokens, x, weight_2, bias, weight_3, bias_2, weight_4, bias_3, weight_5, bias_4, running_mean, running_var, weight_6, bias_5, wide):
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
    batch_norm = torch.nn.functional.batch_norm(conv1d, running_mean, running_var, weight_6, bias_5, False, 0.1, 1e-05)
    h_2 = h_1.add(torch._C._nn.gelu(batch_norm.transpose(1, 2)))
    softmax = h_2.softmax(-1)
    sum_1 = h_2.sum(1)
    amax = h_2.amax(-1)
    mul_1 = wide.mul(256.0).exp2().mul(0.5)
    return (softmax, sum_1, amax, mul_1, wide.mul(1048576.0).add(1.0))

torch.manual_seed(0)
args = [
    torch.empty((32, 16)).uniform_(-3.2, 4.1).requires_grad_(),
    torch.tensor([[12, 15, 21, 0, 3, 27, 3, 7], [9, 19, 21, 18, 4, 23, 6, 24]]),
    torch.empty((2, 8, 16)).uniform_(-2.6, 3.4),
    torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]).requires_grad_(),
    torch.tensor([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).requires_grad_(),
    torch.empty((48, 16)).uniform_(-0.25, 0.25).requires_grad_(),
    torch.tensor([-0.18675089, -0.028955251, 0.036506146, 0.065023124, 0.12855816, -0.099476695, -0.0753836,
    0.20918533, -0.067096084, -0.17366034, 0.16950995, 0.16928887, -0.07839173, -0.049980015, -0.18447, -0.20877343,
    0.09401238, -0.10679814, 0.19902387, -0.2001783, -0.03455627, 0.0053979456, 0.12848678, 0.20233268, 0.16930112,
    0.11004901, -0.11474845, -0.17853692, -0.2236532, 0.012401164, 0.24247006, -0.04748562, -0.010524631,
    -0.1816735, 0.076752424, 0.15849584, -0.24647897, -0.17603055, 0.18517694, 0.059191138, -0.015586525,
    0.044689566, -0.038010478, -0.17474124, -0.23360747, 0.16442698, -0.029734164, -0.09284681]).requires_grad_(),
    torch.empty((16, 16)).uniform_(-0.25, 0.25).requires_grad_(),
    torch.tensor([0.09343237, -0.031358033, -0.20671758, 0.099993885, 0.16313538, -0.04372698, 0.11783442,
    0.09266478, -0.09999189, -0.017355084, 0.24885961, 0.0011802614, -0.19902837, -0.018232077, 0.12437317,
    -0.08160591]).requires_grad_(),
    torch.empty((16, 16, 3)).uniform_(-0.14, 0.14).requires_grad_(),
    torch.tensor([0.12750204, -0.016732136, -0.12306719, -0.06561262, 0.13255483, -0.03170943, -0.06328883,
    0.064970165, 0.017868446, -0.12725948, 0.1202024, 0.08128006, 0.12545606, 0.063162014, -0.048663974,
    -0.0471186]).requires_grad_(),
    torch.tensor([0.24231106, -0.09692693, 0.09802675, -0.4844941, -0.24716115, 0.18572378, -0.024649441,
    -0.24037534, -0.43613374, 0.31777996, -0.10052943, -0.4912665, 0.4823922, 0.24331331, -0.29906952,
    -0.36491567]),
    torch.tensor([1.9747345, 1.2531315, 0.79893315, 1.6815851, 1.0937757, 1.3013773, 0.8592998, 0.61475396,
    0.75190794, 1.1676478, 0.70703924, 1.9892066, 1.2581173, 0.96287614, 1.5464151, 0.5850734]),
    torch.tensor([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]).requires_grad_(),
    torch.tensor([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]).requires_grad_(),
    torch.tensor([0.0625, 0.078125, -0.1171875, 0.15625]),
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
