"""A Dynamo that keeps one compiled entry per function, for the self-test of the
automatic_dynamic variant's replays (test/proofs/test_variant_faults.py).

Loaded through ``DYNAMO_SUITE_IMPORTS=test.harness.one_entry_dynamo``: the recompile a
size change asks for hits the limit, so Dynamo runs the grown call eagerly and the backend
gets no graph for it, and every result is still right (eager's own). A replay that accepts
that call compares eager with eager.
"""

import torch

torch._dynamo.config.recompile_limit = 1
