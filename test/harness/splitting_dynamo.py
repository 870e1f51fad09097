"""A Dynamo that splits its graph at every data-dependent size, for the self-test of
DataDependentSizeTests (test/proofs/test_compile_surface_faults.py).

Loaded through ``DYNAMO_SUITE_IMPORTS=test.harness.splitting_dynamo``, as a torch nightly
whose shape environment lost unbacked sizes would arrive: whatever
``capture_dynamic_output_shape_ops`` and ``capture_scalar_outputs`` say, nonzero,
masked_select and ``.item()`` end the graph, run eagerly, and the rest is compiled again for
each count it sees. Every result is still right; only the number of graphs tells.
"""

import functools

from torch.fx.experimental.symbolic_shapes import ShapeEnv

_original_init = ShapeEnv.__init__


@functools.wraps(_original_init)
def _init_without_unbacked_sizes(self, *args, **kwargs):
    kwargs.update(allow_dynamic_output_shape_ops=False, allow_scalar_outputs=False)
    _original_init(self, *args, **kwargs)


ShapeEnv.__init__ = _init_without_unbacked_sizes
