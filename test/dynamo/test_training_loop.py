"""The training loop, compiled the ways users compile it.

``torch.compile(optimizer.step)`` for SGD with momentum, Adam and AdamW (foreach,
single-tensor and fused), a scheduler stepping a tensor learning rate, a compiled model
trained by an eager optimizer (its parameters change between calls), gradient
accumulation, ``zero_grad`` both ways, autocast to bfloat16, the whole step compiled.
Two copies of a small model train side by side, eager and compiled, for ``STEPS`` steps;
every step is judged by its loss and gradients and by what it changed in each parameter,
buffer and optimizer state tensor, relative to that change's own size
(``harness.checks.updates``), and the state after the last step must equal eager's.

``ModuleStateTests`` checks what lives in a module: BatchNorm's running statistics and
batch counter through training steps, then ``eval()``; a buffer a forward writes; and one
graph of more than ``BIG_GRAPH`` operations, forward and backward.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

import torch
import torch.nn.functional as F
from parameterized import parameterized
from torch import nn

from harness import BackendTestCase, compat, for_each_backend, tiers, variants
from harness import Snapshot, assert_close, assert_same_updates, count_ops, named_state

STEPS = 3
BIG_GRAPH = 150  # operations in the graph Dynamo hands over


def _mlp() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 3))


def _batch(step: int, rows: int = 5) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(step)
    return torch.randn(rows, 6, generator=generator), torch.randint(0, 3, (rows,), generator=generator)


def _loss(model: nn.Module, inputs: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(model(inputs), target)


# (name, optimizer class, arguments): the optimizers torch's documentation compiles.
OPTIMIZERS = [
    ("sgd_momentum", torch.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
    ("adam", torch.optim.Adam, {"lr": 0.01}),
    ("adamw", torch.optim.AdamW, {"lr": 0.01, "weight_decay": 0.1}),
]
IMPLEMENTATIONS = {"foreach": {"foreach": True}, "single_tensor": {"foreach": False}, "fused": {"fused": True}}
# The default tier compiles each optimizer once, each implementation once; the rest nightly.
DEFAULT_PAIRS = {("sgd_momentum", "foreach"), ("adam", "single_tensor"), ("adamw", "fused")}


def _optimizer_cases(in_default_tier: bool) -> list[tuple[str, type, dict[str, Any]]]:
    return [(f"{name}_{impl}", cls, {**kwargs, **IMPLEMENTATIONS[impl]})
            for name, cls, kwargs in OPTIMIZERS for impl in IMPLEMENTATIONS
            if ((name, impl) in DEFAULT_PAIRS) == in_default_tier]


class Trainer:
    """One copy of the model, its optimizer and the way its steps run."""

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer) -> None:
        self.model, self.optimizer = model, optimizer

    def state(self) -> dict[str, torch.Tensor]:
        return named_state(self.model, self.optimizer)


def _pair(make_optimizer: Callable[[nn.Module], torch.optim.Optimizer],
          make_model: Callable[[], nn.Module] = _mlp) -> tuple[Trainer, Trainer]:
    model = make_model()
    twin = copy.deepcopy(model)
    return Trainer(model, make_optimizer(model)), Trainer(twin, make_optimizer(twin))


@variants.opt_out("automatic_dynamic", "a training loop's batches keep their size")
@variants.opt_out("dynamic", "a training loop's batches keep their size")
@for_each_backend
class TrainingLoopTests(BackendTestCase):
    """Eager and compiled copies trained side by side, step by step."""

    def train(self, eager: Trainer, compiled: Trainer, step_eager: Callable[[Trainer, int], Any],
              step_compiled: Callable[[Trainer, int], Any], *, steps: int = STEPS, rtol: float | None = None,
              scale: float = 10) -> None:
        """Run ``steps`` steps on both; after each, compare what it returned (the loss), the
        gradients, and what it changed; after the last, the whole state."""
        extra = {} if rtol is None else {"rtol": rtol}
        for step in range(1, steps + 1):
            before = Snapshot(eager.state()), Snapshot(compiled.state())
            expected, actual = step_eager(eager, step), step_compiled(compiled, step)
            where = f"step {step} of {steps}"
            assert_close(self, expected, actual, what=f"{where}: loss", scale=scale)
            for (name, want), (_, got) in zip(eager.model.named_parameters(), compiled.model.named_parameters()):
                self.assertEqual(want.grad is None, got.grad is None, f"{where}: grad of {name}: presence")
                if want.grad is not None:
                    assert_close(self, want.grad, got.grad, what=f"{where}: grad of {name}", scale=scale)
            assert_same_updates(self, where, (before[0], eager.state()), (before[1], compiled.state()), **extra)
        final_e, final_c = eager.state(), compiled.state()
        for name, value in final_e.items():
            assert_close(self, value.detach(), final_c[name].detach(), what=f"after {steps} steps: {name}", scale=scale)

    # -- the optimizer step compiled --------------------------------------------------------

    def check_compiled_optimizer(self, make_optimizer: Callable[[nn.Module], torch.optim.Optimizer]) -> None:
        eager, compiled = _pair(make_optimizer)
        if compiled.optimizer.defaults.get("fused"):
            self.expect_no_graph(compat.FUSED_OPTIMIZERS_RUN_EAGERLY)
        compiled_step = self.compile(compiled.optimizer.step)

        def backward(trainer: Trainer, step: int) -> torch.Tensor:
            trainer.optimizer.zero_grad(set_to_none=True)
            loss = _loss(trainer.model, *_batch(step))
            loss.backward()
            return loss.detach()

        def step_eager(trainer, step):
            loss = backward(trainer, step)
            trainer.optimizer.step()
            return loss

        def step_compiled(trainer, step):
            loss = backward(trainer, step)
            compiled_step()
            return loss

        self.train(eager, compiled, step_eager, step_compiled)

    @parameterized.expand(_optimizer_cases(in_default_tier=True))
    def test_compiled_optimizer_step(self, _name, optimizer_class, kwargs):
        self.check_compiled_optimizer(lambda model: optimizer_class(model.parameters(), **kwargs))

    @parameterized.expand(_optimizer_cases(in_default_tier=False))
    @tiers.nightly("the default tier compiles each optimizer and each implementation once")
    def test_compiled_optimizer_step_nightly(self, _name, optimizer_class, kwargs):
        self.check_compiled_optimizer(lambda model: optimizer_class(model.parameters(), **kwargs))

    def test_scheduled_tensor_learning_rate(self):
        """A tensor learning rate, changed by a scheduler between steps: no recompile is needed
        (the rate is an input), and each step uses the rate of its own."""
        schedulers = []

        def make_optimizer(model):
            # A tensor rate needs the single-tensor (or capturable) implementation.
            optimizer = torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01), foreach=False)
            schedulers.append(torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.5))
            return optimizer

        eager, compiled = _pair(make_optimizer)
        compiled_step = self.compile(compiled.optimizer.step)
        frames = []

        def run(trainer, step, optimizer_step, scheduler):
            trainer.optimizer.zero_grad(set_to_none=True)
            loss = _loss(trainer.model, *_batch(step))
            loss.backward()
            optimizer_step()
            scheduler.step()
            return loss.detach()

        def step_compiled(trainer, step):
            loss = run(trainer, step, compiled_step, schedulers[1])
            frames.append(self.counter.frame_count)
            return loss

        self.train(eager, compiled, lambda trainer, step: run(trainer, step, trainer.optimizer.step, schedulers[0]),
                   step_compiled, steps=4)
        self.assertEqual(frames[-1], frames[1], f"graphs after each step: {frames}: a scheduled tensor learning rate "
                                                "compiled the step again")

    # -- the model compiled, the optimizer eager ---------------------------------------------

    def check_compiled_model(self, make_optimizer, *, micro_batches: int = 1, set_to_none: bool = True,
                             autocast: bool = False, rtol: float | None = None, scale: float = 10) -> None:
        eager, compiled = _pair(make_optimizer)
        compiled_model = self.compile(compiled.model)
        # Whether the .grad tensor a user held before the backward is the one it updated.
        kept: dict[str, list[list[bool]]] = {"eager": [], "compiled": []}

        def step(trainer: Trainer, index: int, model: Callable, label: str) -> torch.Tensor:
            trainer.optimizer.zero_grad(set_to_none=set_to_none)
            held = [param.grad for param in trainer.model.parameters()]
            total = torch.zeros(())
            for micro in range(micro_batches):
                inputs, target = _batch(10 * index + micro)
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                    loss = F.cross_entropy(model(inputs), target) / micro_batches
                loss.backward()
                total = total + loss.detach().float()
            kept[label].append([param.grad is grad for param, grad in zip(trainer.model.parameters(), held)])
            trainer.optimizer.step()
            return total

        self.train(eager, compiled, lambda trainer, index: step(trainer, index, trainer.model, "eager"),
                   lambda trainer, index: step(trainer, index, compiled_model, "compiled"), rtol=rtol, scale=scale)
        self.assertEqual(kept["eager"], kept["compiled"], "per step and parameter, whether the backward wrote into "
                                                          "the .grad tensor the parameter had before it")
        self.assertEqual(self.counter.frame_count, 1, "the parameters an eager optimizer updates reach the graph "
                                                      "as inputs: one graph serves every step")

    def test_eager_optimizer_updates_the_compiled_model(self):
        self.check_compiled_model(lambda model: torch.optim.Adam(model.parameters(), lr=0.01))

    def test_gradient_accumulation(self):
        self.check_compiled_model(lambda model: torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
                                  micro_batches=3)

    @parameterized.expand([("set_to_none", True), ("zeroed", False)])
    def test_zero_grad(self, _name, set_to_none):
        self.check_compiled_model(lambda model: torch.optim.SGD(model.parameters(), lr=0.1), set_to_none=set_to_none)

    def test_autocast_bfloat16(self):
        # bfloat16 activations: values within bfloat16's tolerance, updates within 5% of their size.
        self.check_compiled_model(lambda model: torch.optim.SGD(model.parameters(), lr=0.1), autocast=True,
                                  rtol=5e-2, scale=1000)

    def test_whole_step_compiled(self):
        """zero_grad, forward, loss, backward and the optimizer step in one compiled function
        (Dynamo breaks the graph at the backward and compiles both sides)."""
        eager, compiled = _pair(lambda model: torch.optim.AdamW(model.parameters(), lr=0.01, foreach=True))

        def whole_step(model, optimizer, inputs, target):
            optimizer.zero_grad(set_to_none=True)
            loss = _loss(model, inputs, target)
            loss.backward()
            optimizer.step()
            return loss.detach()

        compiled_step = self.compile(whole_step)
        self.train(eager, compiled,
                   lambda trainer, step: whole_step(trainer.model, trainer.optimizer, *_batch(step)),
                   lambda trainer, step: compiled_step(trainer.model, trainer.optimizer, *_batch(step)))


class NormalizedNet(nn.Module):
    """Linear, BatchNorm and dropout-free activations: the module state training writes."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 3))

    def forward(self, x):
        return self.body(x)


class RunningMean(nn.Module):
    """A buffer the forward writes (an exponential moving average) and a call counter."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(6, 6)
        self.register_buffer("average", torch.zeros(6))
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64))

    def forward(self, x):
        y = self.linear(x)
        with torch.no_grad():
            self.average.mul_(0.9).add_(y.mean(0), alpha=0.1)
            self.calls.add_(1)
        return y - self.average


class DeepNet(nn.Module):
    """Many small residual blocks: one graph of about 160 operations at a tiny width. The
    blocks scale and shift rather than multiply matrices (each matrix product is a kernel a
    compiler cannot fuse: inductor took minutes cold), and their weights are one stacked
    parameter (Dynamo traces a module call many times slower than a functional one). Every
    CENTRED-th block centres the features; the readout weighs them unevenly, so the output and
    every gradient carry the blocks' values (a plain sum of centred features is rounding noise,
    and its gradients are zero: no fault could show). Centred in every block, the graph took
    inductor half as long again to compile cold (each mean is a reduction, a kernel of its own:
    21 s against 14, 2026-12-07)."""

    CENTRED = 8

    def __init__(self, blocks: int = 22, width: int = 4) -> None:
        super().__init__()
        self.weight = nn.Parameter(1 + torch.randn(blocks, width) / 4)
        self.bias = nn.Parameter(torch.randn(blocks, width) / 4)
        self.register_buffer("readout", torch.linspace(0.5, 1.5, width) / 20)

    def forward(self, x):
        for index in range(self.weight.shape[0]):
            h = x * self.weight[index] + self.bias[index]
            x = x + (h.tanh() if index % 2 else F.gelu(h)) * 0.5
            if index % self.CENTRED == self.CENTRED - 1:
                x = x - x.mean(-1, keepdim=True)
        return (x * self.readout).sum(-1)


@variants.opt_out("automatic_dynamic", "a training loop's batches keep their size")
@for_each_backend
class ModuleStateTests(BackendTestCase):
    """The state a module keeps, through compiled calls."""

    def run_steps(self, make_model: Callable[[], nn.Module], mode_per_step: list[str],
                  make_inputs: Callable[[int], torch.Tensor]) -> None:
        torch.manual_seed(0)
        eager_model = make_model()
        compiled_model = copy.deepcopy(eager_model)
        compiled = self.compile(compiled_model)
        for step, mode in enumerate(mode_per_step, 1):
            where = f"call {step} ({mode})"
            before = Snapshot(named_state(eager_model)), Snapshot(named_state(compiled_model))
            results = []
            for model, run in ((eager_model, eager_model), (compiled_model, compiled)):
                model.train(mode == "train")
                torch.manual_seed(step)
                inputs = make_inputs(step)
                output = run(inputs)
                grads = {}
                if mode == "train":
                    output.sum().backward()
                    grads = {name: param.grad.clone() for name, param in model.named_parameters()}
                    with torch.no_grad():
                        for param in model.parameters():
                            param.sub_(0.1 * param.grad)
                            param.grad = None
                results.append((output, grads))
            (expected, expected_grads), (actual, actual_grads) = results
            assert_close(self, expected, actual, what=f"{where}: output", scale=10)
            for name, grad in expected_grads.items():
                assert_close(self, grad, actual_grads[name], what=f"{where}: grad of {name}", scale=10)
            assert_same_updates(self, where, (before[0], named_state(eager_model)),
                                (before[1], named_state(compiled_model)))

    def test_batch_norm_trains_then_evaluates(self):
        """Running statistics and the batch counter after each training step, then eval()
        (the statistics read, not written), then training again."""
        self.run_steps(NormalizedNet, ["train", "train", "eval", "train"], lambda step: torch.randn(5, 6) + step)

    def test_buffer_written_by_forward(self):
        self.run_steps(RunningMean, ["train", "train", "eval"], lambda step: torch.randn(4, 6))

    def test_big_graph_forward_and_backward(self):
        self.check_big_graph(["train", "train"])

    def test_big_graph_forward(self):
        """The same graph called without a backward: a backend wrong only on big graphs is seen
        for half of a compiling backend's cost (inductor compiles no backward graph)."""
        self.check_big_graph(["eval", "eval"])

    def check_big_graph(self, modes: list[str]) -> None:
        self.run_steps(DeepNet, modes, lambda step: torch.randn(3, 4))
        sizes = [count_ops(graph) for graph in self.counter.graphs]
        self.assertGreaterEqual(max(sizes), BIG_GRAPH, f"the graphs Dynamo handed over have {sizes} operations")
