"""A patched Dynamo for the metric-regression self-test: it graph-breaks on ``torch.sin``, which it traces.

Loaded through ``DYNAMO_SUITE_IMPORTS=test.harness.patched_dynamo``, as a regression in a
torch nightly would arrive: every scenario still passes (the code around the break runs
eagerly, the rest compiles), and only the metrics against a baseline made without the patch
(frames, graph breaks) show that something changed.
"""

import torch

torch._dynamo.disallow_in_graph(torch.sin)
