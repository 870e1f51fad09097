"""A Dynamo that guards no default argument a called function reads
(test/harness/dynamo_faults.py: unguarded_defaults), for a whole run.

Loaded through ``DYNAMO_SUITE_IMPORTS=test.harness.unguarded_defaults_dynamo``, as a torch
nightly that lost those guards would arrive: only a default rebound between calls tells.
"""

from test.harness.dynamo_faults import unguarded_defaults

# Kept, never left: a context manager collected would close its generator and undo the patch.
_PATCH = unguarded_defaults()
_PATCH.__enter__()
