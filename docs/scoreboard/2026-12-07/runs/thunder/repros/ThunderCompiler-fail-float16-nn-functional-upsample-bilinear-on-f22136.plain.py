"""exp, erf, maximum and 13 more ops of 28 tensors: output: values differ from eager (torch.compile, backend="thunder.dynamo:ThunderCompiler()")"""
import os, sys
# Exit 1: the problem shows; 0: compiled agrees with eager; 3: the check cannot run. --backend aot_eager: the reference.
sys.excepthook = lambda *error: (sys.__excepthook__(*error), os._exit(3))
import torch
from thunder.dynamo import ThunderCompiler

def f(tensors_0, tensors_1, tensors_2, tensors_3, tensors_4, tensors_5, tensors_6, tensors_7, tensors_8, tensors_9, tensors_10, tensors_11, tensors_12, tensors_13, tensors_14, tensors_15, tensors_16, tensors_17, tensors_18, tensors_19, tensors_20, tensors_21, tensors_22, tensors_23, tensors_24, tensors_25, tensors_26, tensors_27):
    exp = torch.exp(tensors_0)
    erf = torch.erf(tensors_1)
    maximum = torch.maximum(tensors_2, tensors_3)
    amin = torch.amin(tensors_4)
    bmm = torch.bmm(tensors_5, tensors_6)
    reshape = torch.reshape(tensors_7, (25, 5))
    narrow = torch.narrow(tensors_8, 1, 2, 2)
    masked_fill = torch.masked_fill(tensors_9, tensors_10, 10)
    layer_norm = torch.nn.functional.layer_norm(tensors_11, (1, 2, 3), tensors_12, tensors_13, eps=0.5)
    embedding = torch.nn.functional.embedding(tensors_15, tensors_14)
    cross_entropy = torch.nn.functional.cross_entropy(tensors_16, tensors_17)
    conv_transpose2d = torch.conv_transpose2d(tensors_18, tensors_19, tensors_20, stride=(2, 2), padding=2, output_padding=(1, 1), groups=1)
    batch_norm = torch.nn.functional.batch_norm(tensors_21, tensors_22, tensors_23, tensors_24, tensors_25, training=True, momentum=0.5, eps=0.6)
    upsample_bilinear = torch.nn.functional.upsample_bilinear(tensors_26, size=(3, 3))
    topk = torch.topk(tensors_27, 3)
    getitem = topk[0]
    getitem_1 = topk[1]
    return (exp, erf, maximum, amin, bmm, reshape, narrow, masked_fill, layer_norm, embedding, cross_entropy, conv_transpose2d, batch_norm, upsample_bilinear, getitem, getitem_1)

torch.manual_seed(0)
args = [
    torch.tensor([0.0, -0.0, 0.0010004044, -0.0010004044, 0.25, -0.25, 1.0, -1.0, 1.5703125, -1.5703125, 3.140625,
    -3.140625, 0.0, -0.0, 0.0010004044, -0.0010004044, 0.25, -0.25, 1.0, -1.0], dtype=torch.float16),
    torch.empty((20, 20), dtype=torch.float16).uniform_(-3.1, 3.1), torch.tensor(0.0, dtype=torch.float16),
    torch.tensor(-0.0010004044, dtype=torch.float16), torch.tensor(0.0, dtype=torch.float16),
    torch.empty((10, 5, 10), dtype=torch.float16).uniform_(-3.1, 3.1),
    torch.empty((10, 10, 5), dtype=torch.float16).uniform_(-9.0, 8.9),
    torch.empty((5, 5, 5), dtype=torch.float16).uniform_(-3.1, 3.1),
    torch.empty((5, 5, 5), dtype=torch.float16).uniform_(-3.1, 3.1),
    torch.tensor([[0.0, -0.0, 0.0010004044, -0.0010004044, 0.25], [-0.25, 1.0, -1.0, 1.5703125, -1.5703125],
    [3.140625, -3.140625, 0.0, -0.0, 0.0010004044], [-0.0010004044, 0.25, -0.25, 1.0, -1.0], [1.5703125, -1.5703125,
    3.140625, -3.140625, 0.0]], dtype=torch.float16),
    torch.tensor([[True, False, False, False, True], [False, False, False, True, True], [False, False, True, False,
    True], [False, False, False, False, False], [False, False, True, True, False]], dtype=torch.bool),
    torch.tensor([[[0.0, -0.0, 0.0010004044], [-0.0010004044, 0.25, -0.25]]], dtype=torch.float16),
    torch.tensor([[[3.7890625, -1.3886719, -3.2617188], [-2.453125, -4.3046875, 5.34375]]], dtype=torch.float16),
    torch.tensor([[[4.7265625, 4.2734375, -4.6679688], [-3.0585938, 8.78125, -7.296875]]], dtype=torch.float16),
    torch.tensor([[0.0, -0.0, 0.0010004044, -0.0010004044, 0.25], [-0.25, 1.0, -1.0, 1.5703125, -1.5703125],
    [3.140625, -3.140625, 0.0, -0.0, 0.0010004044], [-0.0010004044, 0.25, -0.25, 1.0, -1.0], [1.5703125, -1.5703125,
    3.140625, -3.140625, 0.0], [-0.0, 0.0010004044, -0.0010004044, 0.25, -0.25], [1.0, -1.0, 1.5703125, -1.5703125,
    3.140625], [-3.140625, 0.0, -0.0, 0.0010004044, -0.0010004044], [0.25, -0.25, 1.0, -1.0, 1.5703125],
    [-1.5703125, 3.140625, -3.140625, 0.0, -0.0]], dtype=torch.float16),
    torch.tensor([5, 2, 7, 9, 2]),
    torch.tensor([[0.0, -0.0, 0.0010004044], [-0.0010004044, 0.25, -0.25]], dtype=torch.float16),
    torch.tensor([0, 1]),
    torch.tensor([[[[0.0, -0.0, 0.0010004044, -0.0010004044], [0.25, -0.25, 1.0, -1.0], [1.5703125, -1.5703125,
    3.140625, -3.140625], [0.0, -0.0, 0.0010004044, -0.0010004044]], [[0.25, -0.25, 1.0, -1.0], [1.5703125,
    -1.5703125, 3.140625, -3.140625], [0.0, -0.0, 0.0010004044, -0.0010004044], [0.25, -0.25, 1.0, -1.0]],
    [[1.5703125, -1.5703125, 3.140625, -3.140625], [0.0, -0.0, 0.0010004044, -0.0010004044], [0.25, -0.25, 1.0,
    -1.0], [1.5703125, -1.5703125, 3.140625, -3.140625]]]], dtype=torch.float16),
    torch.empty((3, 3, 3, 3), dtype=torch.float16).uniform_(-8.8, 8.6),
    torch.tensor([6.2226562, 7.3984375, 0.2548828], dtype=torch.float16),
    torch.empty((5, 5, 5), dtype=torch.float16).uniform_(-3.1, 3.1),
    torch.tensor([4.5, 0.4326172, 0.26098633, 2.4804688, 0.6508789], dtype=torch.float16),
    torch.tensor([1.3271484, 6.4453125, 1.7939453, 2.75, 4.5351562], dtype=torch.float16),
    torch.tensor([3.7890625, -1.3886719, -3.2617188, -2.453125, -4.3046875], dtype=torch.float16),
    torch.tensor([5.34375, 4.7265625, 4.2734375, -4.6679688, -3.0585938], dtype=torch.float16),
    torch.empty((2, 3, 4, 4), dtype=torch.float16).uniform_(-3.1, 3.1),
    torch.empty((5, 10, 5), dtype=torch.float16).uniform_(-3.1, 3.1),
]
backend = sys.argv[2] if sys.argv[1:2] == ["--backend"] else ThunderCompiler()
compiled = torch.compile(f, backend=backend, fullgraph=True)
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
