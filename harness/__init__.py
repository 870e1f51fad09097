"""dynamo-aot-suite's shared harness: backends, counters, guard capture, comparison,
state isolation, expectations and per-backend TestCase generation."""

from harness.backends import (
    Backend,
    BackendProfile,
    BackendSpecError,
    probe_backend,
    register_backend,
    resolve_backend,
    resolve_backends,
    selected_backends,
)
from harness.case import BackendTestCase, DynamoTestCase, for_each_backend
from harness.compare import (
    assert_close,
    assert_same_outputs_and_grads,
    clone_input,
    clone_inputs,
    rand_strided,
    tolerance,
)
from harness.compat import normalize_guard_reason
from harness.counters import CompileCounter, CompileCounterWithBackend, count_ops
from harness.expectations import Expectation, ExpectationError
from harness.guards import GuardFailureRecorder

__all__ = [
    "Backend",
    "BackendProfile",
    "BackendSpecError",
    "BackendTestCase",
    "CompileCounter",
    "CompileCounterWithBackend",
    "DynamoTestCase",
    "Expectation",
    "ExpectationError",
    "GuardFailureRecorder",
    "assert_close",
    "assert_same_outputs_and_grads",
    "clone_input",
    "clone_inputs",
    "count_ops",
    "for_each_backend",
    "normalize_guard_reason",
    "probe_backend",
    "rand_strided",
    "register_backend",
    "resolve_backend",
    "resolve_backends",
    "selected_backends",
    "tolerance",
]
