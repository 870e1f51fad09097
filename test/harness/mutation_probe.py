"""A small scenario family about input mutations, for the harness's self-test.

Not collected by test discovery (the name does not start with ``test_``):
test_faulty_backends runs it in a subprocess against ``drops_input_mutations`` and a
correct backend, and checks it fails on the first and passes on the second. Each scenario
mutates an input that does not require grad, the kind of mutation AOTAutograd can keep in
the forward graph, and is compared with eager by assert_same_outputs_and_grads, which looks
at the inputs after the call.
"""

from __future__ import annotations

import torch

from harness import BackendTestCase, assert_same_outputs_and_grads, for_each_backend


def bump_and_double(x):
    x.add_(1)
    return x * 2


def running_average(buffer, w):
    # The shape of a batch-norm statistics update: a buffer moved towards a value computed
    # from a parameter, next to a differentiable output.
    buffer.mul_(0.9).add_(w.detach() * 0.1)
    return (w * buffer).sum()


def scale_middle(x):
    x[1:3].mul_(3)
    return x.sum()


def swap_into(dst, src):
    dst.copy_(src.flip(0))
    src.zero_()
    return dst.cos()


@for_each_backend
class InputMutationProbe(BackendTestCase):
    def check(self, fn, *args):
        assert_same_outputs_and_grads(self, fn, self.compile(fn, fullgraph=True), args)

    def test_inplace_add(self):
        self.check(bump_and_double, torch.randn(4))

    def test_buffer_update_next_to_grad(self):
        self.check(running_average, torch.randn(4), torch.randn(4, requires_grad=True))

    def test_slice_of_input(self):
        self.check(scale_middle, torch.randn(5))

    def test_two_inputs(self):
        self.check(swap_into, torch.randn(3), torch.randn(3))
