"""The eager-share settings, read without importing torch (the runner never does).

harness.measure.eager_share measures; these say whether it does and where a test fails.
"""

from __future__ import annotations

from harness import settings

# Set to 0 to measure nothing (the bench compares the two); any other value measures.
MEASURE_ENV = settings.MEASURE_EAGER_SHARE
# --max-eager-share: a compiled call that ran more than this share eagerly fails its test.
MAX_ENV = settings.MAX_EAGER_SHARE
# --eager-fallback: "report" a compiled call that ran wholly on PyTorch's kernels (every run's
# reports count them), or "fail" its test: the project's word that its backend compiles everything.
FALLBACK_ENV = settings.EAGER_FALLBACK
FALLBACK_CHOICES = ("report", "fail")


def parse_limit(text: str) -> float:
    """``0.2`` or ``20%`` -> 0.2; ValueError with a one-line message otherwise."""
    raw = text.strip()
    try:
        value = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ValueError(f"'{text}' is not a share: write a number from 0 to 1, or a percentage like 20%") from None
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"'{text}' is outside 0..1 (0% to 100%)")
    return value


def configured_limit() -> float | None:
    """--max-eager-share, if the run set one (harness.settings)."""
    text = settings.current().get(MAX_ENV)
    return parse_limit(text) if text else None


def fallback_fails() -> bool:
    """Whether the project declared that its backend compiles everything (--eager-fallback fail)."""
    return settings.current().get(FALLBACK_ENV, FALLBACK_CHOICES[0]) == "fail"


def measuring() -> bool:
    return settings.current().get(MEASURE_ENV, "1") != "0"
