"""Where the suite's own scenarios are, and the name of the command that runs them.

A clone keeps them in ``test/`` beside ``harness/``. The wheel carries the same files as
data under ``harness/_bundled/`` (``setup.cfg`` maps ``test/__init__.py``, ``test/dynamo/``
and ``test/durations.json`` there). Both are a *suite root*: a directory that holds a
``test`` package, which the collecting process and every worker put first on their import
path. So a scenario module is ``test.dynamo.test_aot_autograd`` either way, and test ids,
expectations, baselines and durations written by a clone hold for the installed package and
back. Nothing named ``test`` is installed on the import path itself, where the standard
library's own regression tests live under that name.
"""

from __future__ import annotations

import os
from pathlib import Path

HARNESS_DIR = Path(__file__).resolve().parents[1]
_BUNDLED = HARNESS_DIR / "_bundled"
# An installed wheel has the bundled tree; a clone (or an editable install) has its own.
INSTALLED = (_BUNDLED / "test" / "dynamo").is_dir()
SUITE_ROOT = _BUNDLED if INSTALLED else HARNESS_DIR.parent
SCENARIO_DIR = SUITE_ROOT / "test" / "dynamo"
DURATIONS = SUITE_ROOT / "test" / "durations.json"
# The operator sweep's tests as the full sweep (--op-sweep full) runs them: the tests that
# span the tier's ops (reference and error inputs, value domains) take minutes there, seconds
# in the quick sweep the file above records.
FULL_SWEEP_DURATIONS = SUITE_ROOT / "test" / "durations_full_sweep.json"
SWEEP_MODULE = "test.dynamo.test_op_sweep"
# How a user starts a run: the distribution's console command (setup.cfg,
# [options.entry_points]) wherever it is installed, the script in a clone. The rerun lines
# and repros in the reports name the one the run was started with.
COMMAND = "dynamo-aot-suite"
CLONE_COMMAND = "python run_tests.py"


def suite_version() -> str:
    """The suite's version: the installed distribution's, else the clone's setup.cfg."""
    import importlib.metadata
    import re

    if not INSTALLED:
        found = re.search(r"(?m)^version\s*=\s*(\S+)", (HARNESS_DIR.parent / "setup.cfg").read_text()) \
            if (HARNESS_DIR.parent / "setup.cfg").is_file() else None
        if found:
            return found.group(1)
    try:
        return importlib.metadata.version(COMMAND)
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def common_root(paths: list[Path]) -> Path:
    """The deepest directory above every path: pytest's root when a project's scenario
    files lie outside the suite root."""
    return Path(os.path.commonpath([str(path) for path in paths]))
