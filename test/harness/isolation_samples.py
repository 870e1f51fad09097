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
