"""One test per outcome pytest can report, run by test_engine through the runner's engine.

Not named test_*.py: unittest discovery must not run these on their own.
"""

import os
import unittest


class OutcomeSamples(unittest.TestCase):
    def test_pass(self):
        print("output of a passing test")

    def test_fail(self):
        self.assertEqual(1, 2)

    def test_error(self):
        raise KeyError("missing")

    def test_skip(self):
        self.skipTest("not on this machine")

    @unittest.expectedFailure
    def test_expected_failure(self):
        self.assertTrue(False)

    @unittest.expectedFailure
    def test_unexpected_success(self):
        pass

    def test_hostile_message(self):
        raise ValueError("<script>alert('x')</script> \x1b[31mred\x1b[0m \x00")

    def test_failing_subtest(self):
        for value in (1, 2):
            with self.subTest(value=value):
                self.assertEqual(value, 1)

    def test_plain_assert(self):
        assert 1 == 2, "checked by the test's own assert"

    def test_assert_inside_torch(self):
        # An assert of Dynamo's own, as a library raises it: not a check that failed.
        exec(compile("assert False, 'sources must not be empty for symbol s57'",
                     "/nonexistent/site-packages/torch/_dynamo/symbolic_shapes.py", "exec"))

    def test_abort(self):
        os.abort()

    def test_backend_compile_failure(self):
        import torch

        def unsupported(gm, example_inputs):
            raise NotImplementedError("aten::bitwise_xor.Tensor is not supported\nby this compiler")

        torch._dynamo.reset()
        torch.compile(lambda x: x ^ x, backend=unsupported)(torch.ones(3, dtype=torch.int32))
