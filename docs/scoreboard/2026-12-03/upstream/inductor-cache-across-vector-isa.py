"""torch.compile(backend="inductor") on the CPU: a graph compiled under AVX-512 and taken from
the cache by a process that vectorizes with AVX2 reads out of bounds (a garbage index), where
compiling afresh under AVX2 runs. As when an inductor cache directory is shared between
machines or CI runners with different CPUs.

    python repro_cache.py    # exit 1 while the cached run fails and the fresh one does not
"""
import os
import subprocess
import sys
import tempfile

PROGRAM = r'''
import torch

def f(a):
    v = torch.erf(a)
    index = torch.tensor([[1, 1, 2, 3], [2, 1, 1, 2], [2, 1, 0, 0]])
    return v.scatter_reduce(1, index, v.flip(1), "amax").nan_to_num(0.0, 1000.0, -1000.0)

a = torch.tensor([1.2243, -1.7494, -0.0, 0.0, -1.0, 2.0, -0.0, -0.0, -0.7906, -0.0644, 0.9617, 0.7382]).reshape(3, 4)
a.requires_grad_()
torch.compile(f, backend="inductor")(a).sum().backward()
print("ran")
'''


def run(isa, cache_dir, caches):
    env = dict(os.environ, ATEN_CPU_CAPABILITY=isa, TORCHINDUCTOR_CACHE_DIR=cache_dir,
               TORCHINDUCTOR_FORCE_DISABLE_CACHES="0" if caches else "1")
    done = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True)
    last = (done.stdout + done.stderr).strip().splitlines()[-1:]
    print(f"ATEN_CPU_CAPABILITY={isa}, {'cache on' if caches else 'no cache'}: exit {done.returncode}: {last}")
    return done.returncode


with tempfile.TemporaryDirectory() as cache:
    import torch

    print(f"torch {torch.__version__}")
    run("avx512", cache, True)  # fills the cache
    cached = run("avx2", cache, True)  # the same graph, taken from it
    fresh = run("avx2", cache, False)  # the same graph, compiled afresh
sys.exit(1 if cached != 0 and fresh == 0 else 0)
