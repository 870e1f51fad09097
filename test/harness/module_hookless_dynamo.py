"""A Dynamo whose compiled modules skip the module's hooks, for the self-test of the module
hooks way of calling (harness/axes/callers.py; test/proofs/test_caller_faults.py).

Loaded through ``DYNAMO_SUITE_IMPORTS=test.harness.module_hookless_dynamo``: ``torch.compile(module)``
compiles the module's ``forward`` where torch compiles its ``__call__``, so forward
pre-hooks, forward hooks and backward hooks registered on the module never run for the
compiled module, as a wrapper that unwraps the module to its forward would. A module without
hooks computes exactly as before.
"""

import torch
from torch._dynamo import eval_frame


def _initialize_without_hooks(self) -> None:
    self.forward = self.dynamo_ctx(self._orig_mod.forward)


eval_frame.OptimizedModule._initialize = _initialize_without_hooks
