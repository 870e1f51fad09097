"""Faulty backends that mishandle the options of ``torch.compile(..., mode=, options=)``:
right in every result, wrong only in what they do with the options they are handed
(test/dynamo/test_compile_options.py; test/proofs/test_option_faults.py). Both compile as
aot_eager, which names every option it is handed in a warning ("ignoring extra kwargs")."""

from __future__ import annotations

from typing import Any, Callable

import torch

_kept: dict[str, Any] = {}


def ignores_options(gm: torch.fx.GraphModule, example_inputs: list[Any], **options: Any) -> Callable:
    """Breaks: *an option the backend does not know is reported*. Takes ``mode=`` and
    ``options=`` and drops them without a word, as a backend whose signature swallows
    ``**kwargs``: a misspelt option changes nothing and nobody is told."""
    return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs)


def keeps_first_options(gm: torch.fx.GraphModule, example_inputs: list[Any], **options: Any) -> Callable:
    """Breaks: *options belong to their own compile*. The first options it is handed in the
    process are kept, as a backend that stores its configuration in a global on first use,
    and every later compile gets those, whatever it was given (nothing given included)."""
    if options and not _kept:
        _kept.update(options)
    return torch._dynamo.lookup_backend("aot_eager")(gm, example_inputs, **_kept)
