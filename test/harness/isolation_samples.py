"""Tests whose results depend on what ran before them in the process, run by
test_isolation through the runner's engine. Not named test_*.py: discovery must skip them.

``test_0_breaks_the_process`` fails and leaves the process broken (as a backend runtime
that stops working after one bad input); the ``test_1_*`` tests fail in a broken process
and pass alone, except ``test_1_c_fails_anyway``, which fails on its own too.
"""

import unittest

_BROKEN = []


class IsolationSamples(unittest.TestCase):
    def check_process(self):
        if _BROKEN:
            raise RuntimeError("runtime error: semaphore already signaled")

    def test_0_breaks_the_process(self):
        _BROKEN.append(True)
        raise RuntimeError("float64 buffers are not supported")

    def test_1_a_passes_alone(self):
        self.check_process()

    def test_1_b_passes_alone(self):
        self.check_process()

    def test_1_c_fails_anyway(self):
        self.check_process()
        self.assertEqual(1, 2)

    def test_1_d_passes_alone(self):
        self.check_process()


# The same story through a backend, where the runner's canary (harness.worker.health) can tell
# a worker that still works after a failure from one that does not.
_RUNTIME_BROKEN = []


def _breakable_runtime(gm, example_inputs):
    def run(*args):
        if _RUNTIME_BROKEN:
            raise RuntimeError("runtime error: semaphore already signaled")
        return gm(*args)

    return run


def _backend():
    from harness.axes.backends import Backend

    return Backend(spec="test.harness.isolation_samples:breakable", name="breakable", _load=lambda: _breakable_runtime)


class HealthSamples(unittest.TestCase):
    backend = _backend()

    def compile_and_run(self):
        import torch

        torch._dynamo.reset()
        self.assertEqual(torch.compile(lambda x: x * 2, backend=self.backend)(torch.ones(2)).tolist(), [2.0, 2.0])

    def test_0_fails_on_its_own(self):
        self.compile_and_run()
        self.assertEqual(1, 2)

    def test_1_passes(self):
        self.compile_and_run()

    def test_2_breaks_the_runtime(self):
        _RUNTIME_BROKEN.append(True)
        raise RuntimeError("float64 buffers are not supported")

    def test_3_passes_alone(self):
        self.compile_and_run()

    def test_4_fails_anyway(self):
        self.compile_and_run()
        self.assertEqual(1, 2)
