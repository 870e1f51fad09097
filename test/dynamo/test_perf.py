"""Is the backend fast? The perf tier (``run_tests.py --tier perf``): per test, eager time,
compiled time, speed-up and the peak memory of each, measured as harness.measure.speed and
harness.measure.peak_memory say, and judged against a baseline by
harness.report.metric_changes.

Measured are the model zoo's models (``model_zoo.MODELS`` and a project's own), each in
evaluation (eval mode, no_grad) and as a training step (forward, loss and backward; no
optimizer, so every timed step sees the same weights), and a few graphs that stand for the
scenario families: a pointwise chain (fusion), an MLP's training step, attention, a
convolution block, a loss with its backward, and an input mutation (the copy-back epilogue).

Each test first checks the compiled step against eager once: a fast wrong answer is no
speed-up. Correctness in depth is the other tiers' job. A perf test passes when it measured;
its figures are results (results.json ``tests[].perf``), compared with --baseline.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
import torch.nn.functional as F
from torch import nn

from harness import BackendTestCase, for_each_backend, tiers, variants
from harness import ModelSpec, extensions, missing_library, perf
from test.dynamo.model_zoo import MODELS

# A perf test only guards against timing a step that computes something else; the other
# tiers judge accuracy. Tight enough to catch values 5% off (test.harness.faulty_backends:
# wrong_values). A model's training step is checked loosely: its dropout draws differ
# between eager and compiled random operators.
CHECK_TOLERANCE = dict(rtol=2e-2, atol=2e-2)
TRAINING_TOLERANCE = dict(rtol=0.1, atol=0.1)
_DEFAULTS_ONLY = "a perf figure is taken under Dynamo's defaults; this variant would time its own checks too"


@variants.opt_out("dynamic", _DEFAULTS_ONLY)
@variants.opt_out("automatic_dynamic", _DEFAULTS_ONLY)
@variants.opt_out("compiled_autograd", "compiled autograd would capture the eager reference's backward too")
class PerfTests(BackendTestCase):
    """``test_<model>_eval``, ``test_<model>_train`` and ``test_graph_<name>``."""

    perf: dict[str, Any] | None = None
    # Its calls are timed and their memory weighed: an observation's eager runs and copies
    # would be measured with them.
    calls_watched = False

    def measure(self, step: Callable[..., Any], *args: Any, tolerance: dict = CHECK_TOLERANCE) -> None:
        """Compile ``step``, check it once against eager, then time and weigh both."""
        counter = self.new_counter(measure_eager_share=False)  # the probe would be timed too
        compiled = self.compile(step, counter=counter)
        expected, got = step(*args), compiled(*args)
        torch.testing.assert_close(got, expected, **tolerance,
                                   msg=lambda text: f"the compiled step disagrees with eager, so it is not timed: "
                                                    f"{text}")
        self.perf = perf.figures(lambda: step(*args), lambda: compiled(*args))

    def setUp(self) -> None:
        super().setUp()
        perf.fix_threads(self)

    def measure_model(self, spec: ModelSpec, mode: str) -> None:
        missing = missing_library(spec)
        if missing:
            self.skipTest(missing)
        model = spec.build()
        inputs, target = spec.inputs()
        if mode == "eval":
            model.eval()

            def evaluate(model, *inputs):
                with torch.no_grad():
                    return spec.forward(model, *inputs)

            self.measure(evaluate, model, *inputs)
        else:
            model.train()

            def train_step(model, inputs, target):
                model.zero_grad(set_to_none=True)
                loss = spec.loss(spec.forward(model, *inputs), target)
                loss.backward()
                return loss.detach()

            self.measure(train_step, model, inputs, target, tolerance=TRAINING_TOLERANCE)

    # -- graphs that stand for the scenario families ------------------------------------

    @tiers.perf
    def test_graph_pointwise_chain(self):
        def chain(x):
            return (torch.sin(x) * 2 + torch.cos(x)).relu() * torch.sigmoid(x) - x.tanh() / 3

        self.measure(chain, torch.randn(512, 512))

    @tiers.perf
    def test_graph_mlp_train(self):
        mlp = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 256), nn.LayerNorm(256))

        def step(x):
            mlp.zero_grad(set_to_none=True)
            loss = mlp(x).pow(2).mean()
            loss.backward()
            return loss.detach()

        self.measure(step, torch.randn(64, 256))

    @tiers.perf
    def test_graph_attention(self):
        project = nn.Linear(256, 768).eval()

        def attend(x):
            with torch.no_grad():
                q, k, v = project(x).view(4, 128, 3, 8, 32).permute(2, 0, 3, 1, 4)
                return F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(4, 128, 256)

        self.measure(attend, torch.randn(4, 128, 256))

    @tiers.perf
    def test_graph_conv_block(self):
        block = nn.Sequential(nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
                              nn.Conv2d(32, 32, 3, padding=1)).eval()

        def run(x):
            with torch.no_grad():
                return block(x)

        self.measure(run, torch.randn(4, 16, 32, 32))

    @tiers.perf
    def test_graph_loss_backward(self):
        def step(logits, target):
            loss = F.cross_entropy(logits.log_softmax(-1) * 0.5, target)
            (grad,) = torch.autograd.grad(loss, logits)
            return loss.detach(), grad

        self.measure(step, torch.randn(256, 1000, requires_grad=True), torch.randint(0, 1000, (256,)))

    @tiers.perf
    def test_graph_input_mutation(self):
        def update(running, x):
            # Written whole each call, so every call (eager or compiled) returns the same.
            running.copy_(x.mean(0)).mul_(0.9)
            return (x - running).relu()

        self.measure(update, torch.zeros(2048), torch.randn(256, 2048))


def _model_test(spec: ModelSpec, mode: str):
    def test(self):
        self.measure_model(spec, mode)

    test.__name__ = f"test_{spec.name}_{mode}"
    what = "a training step" if mode == "train" else "evaluation"
    test.__doc__ = f"{spec.name}: {what}, speed and memory against eager"
    return tiers.perf(test)


for _spec in [*MODELS, *extensions.models()]:
    for _mode in ("eval", "train"):
        setattr(PerfTests, f"test_{_spec.name}_{_mode}", _model_test(_spec, _mode))

for_each_backend(PerfTests)
