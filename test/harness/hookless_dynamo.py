"""A Dynamo that forgets every tensor hook registered inside compiled code
(test/harness/dynamo_faults.py: drops_tensor_hooks), for a whole run.

Loaded through ``DYNAMO_SUITE_IMPORTS=test.harness.hookless_dynamo``, as a torch nightly that
lost them would arrive: only a gradient that a hook should have changed, or a hook's own
record of what it saw, tells.
"""

from test.harness.dynamo_faults import drops_tensor_hooks

# Kept, never left: a context manager collected would close its generator and undo the patch.
_PATCH = drops_tensor_hooks()
_PATCH.__enter__()
