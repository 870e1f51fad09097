"""torch.compile(backend="inductor") on the CPU with AVX2 vectorization: the gradient of
scatter_reduce(..., "amax") followed by nan_to_num has NaN where eager's has none.

    python repro.py    # exit 1 while the NaN shows, 0 once it does not
"""
import os
import sys

os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")  # inductor then vectorizes with AVX2, as on a CPU without AVX-512
os.environ.setdefault("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")  # compile here, not from an earlier run's cache

import torch  # noqa: E402


def f(a):
    v = torch.erf(a)
    index = torch.tensor([[1, 1, 2, 3], [2, 1, 1, 2], [2, 1, 0, 0]])
    return v.scatter_reduce(1, index, v.flip(1), "amax").nan_to_num(0.0, 1000.0, -1000.0)


values = [1.2243, -1.7494, -0.0, 0.0, -1.0, 2.0, -0.0, -0.0, -0.7906, -0.0644, 0.9617, 0.7382]
grads = {}
for name, fn in (("eager", f), ("aot_eager", torch.compile(f, backend="aot_eager")),
                 ("inductor", torch.compile(f, backend="inductor"))):
    a = torch.tensor(values).reshape(3, 4).requires_grad_()
    fn(a).sum().backward()
    grads[name] = a.grad
    print(f"{name:9} a.grad = {a.grad.tolist()}")
bad = grads["inductor"].isnan() & ~grads["eager"].isnan()
from torch._inductor import cpu_vec_isa  # noqa: E402

print(f"torch {torch.__version__}, inductor's vector ISA {cpu_vec_isa.pick_vec_isa()}: inductor's gradient has NaN at "
      f"{bad.nonzero().tolist()}, where eager's is {grads['eager'][bad].tolist()}")
sys.exit(1 if bad.any() else 0)
