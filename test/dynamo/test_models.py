"""Real architectures through the backend: each model of ``model_zoo.MODELS`` evaluated
(eval mode, no_grad) and trained (train mode, seeded dropout, forward, loss and backward
compiled, the SGD step eager, twice), compiled vs eager, judged against float64 the way
PyTorch's accuracy runs judge them (``harness.checks.models``, ``harness.checks.accuracy``).

These reach what the small scenarios do not: scaled_dot_product_attention, group_norm,
interpolation, transposed convolution, BatchNorm's running statistics written back as
buffer mutations, and graphs of hundreds of nodes.

A backend project's own models (``models`` in its configuration, harness.project.extensions)
get the same two tests here, beside the zoo's.
"""

from __future__ import annotations

from harness import BackendTestCase, dtypes, for_each_backend, tiers, variants
from harness import ModelSpec, check_eval, check_train, extensions, missing_library
from test.dynamo.model_zoo import MODELS


@variants.opt_out("automatic_dynamic", "the compiled step takes the model as an argument, whose tensors cannot be "
                                       "resized with its inputs; the dynamic variant runs the model's graphs at a second size")
@dtypes.numeric
class ModelTests(BackendTestCase):
    """``test_<model>_eval`` and ``test_<model>_train`` for each model."""

    def check_model(self, spec: ModelSpec, mode: str) -> None:
        missing = missing_library(spec)
        if missing:
            self.skipTest(missing)
        (check_train if mode == "train" else check_eval)(self, spec)


def _make_test(spec: ModelSpec, mode: str):
    def test(self):
        self.check_model(spec, mode)

    test.__name__ = f"test_{spec.name}_{mode}"
    test.__doc__ = f"{spec.name}: {'a training step' if mode == 'train' else 'evaluation'}, compiled vs eager"
    nightly = spec.nightly_only or (spec.nightly_train if mode == "train" else None)
    if nightly:
        test = tiers.nightly(nightly)(test)
    return test


def _all_models() -> list[ModelSpec]:
    specs = [*MODELS, *extensions.models()]
    names = [spec.name for spec in specs]
    clash = sorted({name for name in names if names.count(name) > 1})
    if clash:
        raise extensions.ExtensionError(f"models: more than one model is named {', '.join(clash)}; "
                                        "a project's model needs a name of its own")
    return specs


for _spec in _all_models():
    for _mode in ("eval", "train"):
        setattr(ModelTests, f"test_{_spec.name}_{_mode}", _make_test(_spec, _mode))

for_each_backend(ModelTests)
