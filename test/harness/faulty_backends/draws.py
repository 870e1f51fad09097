"""Faulty backends right in everything the operator checker looked at before it judged the
law of random draws (shapes, dtypes, reproducible under a seed, fresh per call, gradients
through the draws), and wrong in the law: a random kernel that ignores one of its
parameters. Each rewrites Dynamo's graph, the operator's call replaced by the faulty kernel's
(test/proofs/test_random_law_faults.py)."""

from __future__ import annotations

from typing import Any, Callable

import torch
import torch.nn.functional as F


def _still_attached(value: torch.Tensor, constant: float) -> torch.Tensor:
    # ``constant`` in every element, yet a function of ``value`` for autograd, so that the
    # gradients (zero through bernoulli's p and normal's std) stay eager's.
    return value - value.detach() + constant


def _bernoulli_at_one_half(input: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
    return torch.bernoulli(_still_attached(input, 0.5))


def _normal_with_unit_std(mean: Any, std: Any = 1.0, *args: Any, **kwargs: Any) -> torch.Tensor:
    unit = _still_attached(std, 1.0) if isinstance(std, torch.Tensor) else 1.0
    return torch.normal(mean, unit, *args, **kwargs)


def _dropout_at_one_half(input: torch.Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    # p = 0 and p = 1 are the shortcuts a kernel's wrapper takes before the kernel: kept right.
    return F.dropout(input, p if p in (0.0, 1.0) else 0.5, training, inplace)


def _replacing(replacements: dict[Any, Callable]) -> Callable:
    def compile_graph(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target in replacements:
                node.target = replacements[node.target]
        gm.recompile()
        return gm.forward

    return compile_graph


_BERNOULLI = _replacing({torch.bernoulli: _bernoulli_at_one_half})
_NORMAL = _replacing({torch.normal: _normal_with_unit_std})
_DROPOUT = _replacing({F.dropout: _dropout_at_one_half})


def bernoulli_ignores_p(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *random operators draw from eager's law*. ``torch.bernoulli(p)`` draws each
    element at probability 0.5, whatever ``p`` holds: zeros and ones, seeded, fresh per call."""
    return _BERNOULLI(gm, example_inputs)


def normal_ignores_std(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *random operators draw from eager's law*. ``torch.normal(mean, std)`` draws
    around the right means with standard deviation 1, whatever ``std`` holds."""
    return _NORMAL(gm, example_inputs)


def dropout_ignores_p(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Callable:
    """Breaks: *random operators draw from eager's law*. ``F.dropout`` in training drops with
    probability 0.5 and scales by 2 for every p strictly between 0 and 1: right at 0.5, the
    only p a test of dropout's mask tried."""
    return _DROPOUT(gm, example_inputs)
