"""mycc's own model for the suite's model zoo: the shape of network its users run."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from harness import ModelSpec


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(16, 32), nn.LayerNorm(32), nn.GELU(), nn.Dropout(0.1), nn.Linear(32, 4))


def _inputs():
    return (torch.randn(8, 16),), torch.randint(0, 4, (8,))


MODELS = [ModelSpec("mycc_mlp", _mlp, _inputs, F.cross_entropy)]
