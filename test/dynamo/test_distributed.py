"""Distributed training: the backend under DDP and FSDP2, as a training job reaches it.

Under ``DistributedDataParallel`` Dynamo splits the forward graph at DDP's bucket boundaries
(DDPOptimizer) and hands the backend each part; FSDP2 (``fully_shard``) runs its hooks around
compiled layers. A backend fine on one graph can lose a bucket's gradients, break the
all-reduce, or never be called at all (pytorch#140416). Each test starts two processes on this
machine (gloo over the loopback interface; harness/testcase/distributed.py), trains the same
model for two SGD steps eagerly and compiled under one pattern, and checks on every rank:

* the backend received the split graphs (counted: DDP's two buckets are two graphs);
* the gradients of the first step equal eager DDP's (or eager FSDP2's);
* the all-reduce happened: both ranks hold the same gradients, which differ from what each
  rank's own data gives alone;
* the parameters after the last step equal eager's.

A rank that dies or hangs fails the test with its exit (a signal, a code, or killed at the
deadline) and the tail of its output; its process group is killed with it, and with the
test's worker (harness/testcase/processes.py). Each test takes 15-25 s (two processes importing
torch and compiling), so the family runs in the nightly tier. The faulty backend
``drops_one_ddp_bucket`` (test/harness/faulty_backends/distributed.py) fails it
(test/proofs/test_distributed_faults.py).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from parameterized import parameterized

from harness import BackendTestCase, assert_close, capabilities, distributed, for_each_backend, needs, tiers, variants
from harness import settings

_COST = "two processes importing torch and compiling, 15-25 s a test"


@variants.opt_out("dynamic", "the ranks compile under Dynamo's defaults")
@variants.opt_out("automatic_dynamic", "the ranks compile under Dynamo's defaults")
@variants.opt_out("compiled_autograd", "the ranks compile under Dynamo's defaults")
@variants.opt_out("export", "the ranks compile with torch.compile, as DDP and FSDP2 users do")
@variants.opt_out("export_strict", "the ranks compile with torch.compile, as DDP and FSDP2 users do")
@for_each_backend
@needs(capabilities.DISTRIBUTED)
class DistributedTrainingTests(BackendTestCase):
    @parameterized.expand(list(distributed.PATTERNS))
    @tiers.nightly(_COST)
    def test_training(self, pattern: str):
        with tempfile.TemporaryDirectory(prefix="dynamo-suite-ranks-") as directory:
            runs = distributed.train(pattern, self.backend.spec, Path(directory),
                                     settings.current().environment())
        self.count_graphs_received_elsewhere(sum(run.graphs for run in runs))
        for run in runs:
            where = f"rank {run.rank} ({distributed.PATTERNS[pattern]})"
            self.assertEqual(run.graphs, distributed.GRAPHS[pattern],
                             f"{where}: the backend received {run.graphs} graph(s) (their nodes: {run.graph_ops}), "
                             f"not the {distributed.GRAPHS[pattern]} the pattern gives it")
            self.assertEqual(sorted(run.compiled_grads), sorted(run.eager_grads), f"{where}: gradients missing")
            for name, eager in run.eager_grads.items():
                assert_close(self, eager, run.compiled_grads[name], what=f"{where}: gradient of {name} after the first step")
            for name, eager in run.eager_params.items():
                assert_close(self, eager, run.compiled_params[name],
                             what=f"{where}: parameter {name} after {distributed.STEPS} steps")
        first, second = runs
        for name, grad in first.compiled_grads.items():
            assert_close(self, grad, second.compiled_grads[name],
                         what=f"gradient of {name} on rank 1 against rank 0 (the all-reduce makes them equal)")
        self.assertTrue(any(not first.local_grads[name].allclose(first.compiled_grads[name])
                            for name in first.compiled_grads),
                        "rank 0's gradients are those of its own data alone: no all-reduce happened")
