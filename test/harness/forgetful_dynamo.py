"""A Dynamo whose automatic dynamic shapes forget the sizes they saw, for the self-test of
AutomaticDynamicTests (test/proofs/test_variant_faults.py).

Loaded through ``DYNAMO_SUITE_IMPORTS=test.harness.forgetful_dynamo``, as a torch nightly
that broke automatic dynamic shapes would arrive: every new size recompiles with static
sizes, and every result is still right. Only a recompile count tells.
"""

import torch

torch._dynamo.config.automatic_dynamic_shapes = False
