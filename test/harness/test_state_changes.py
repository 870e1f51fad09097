"""The declaration of state changes (test/dynamo/state_changes.py) against the installed torch:
every kind of guard Dynamo has is covered by a change or excused with a reason, and
docs/state-changes.md shows the current table. Static: the proof that each change fails
without its guards runs them (test/proofs/test_state_change_faults.py)."""

from __future__ import annotations

import importlib.util
import unittest
from pathlib import Path

from harness import compat
from test.dynamo.state_changes import NOT_COVERED, STATE_CHANGES, coverage_rows

ROOT = Path(__file__).resolve().parents[2]

# Its own seconds (test/harness/budgets.py): 2 s measured 2026-11-29.
TIME_BUDGET_S = 10


def _script():
    spec = importlib.util.spec_from_file_location("guard_coverage", ROOT / "scripts" / "guard_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class GuardCoverageTests(unittest.TestCase):
    def test_every_kind_of_guard_is_covered_or_excused(self):
        uncovered = [kind for kind, covered in coverage_rows(compat.guard_kinds()) if covered == "UNCOVERED"]
        self.assertEqual(uncovered, [], "kinds of guard this torch has that no state change covers: declare a "
                                        "change in test/dynamo/state_changes.py, or say in NOT_COVERED why none can")

    def test_declared_kinds_exist_and_are_not_also_excused(self):
        declared = {kind for change in STATE_CHANGES for kind in change.guards}
        self.assertEqual(declared - set(compat.guard_kinds()), set(), "declared kinds this torch does not have")
        self.assertEqual(declared & set(NOT_COVERED), set(), "both declared by a change and excused")

    def test_names_are_unique(self):
        names = [change.name for change in STATE_CHANGES]
        self.assertEqual(len(names), len(set(names)))

    def test_the_docs_table_is_current(self):
        script = _script()
        page = script.PAGE.read_text()
        self.assertEqual(script.rewritten(page), page, "run python scripts/guard_coverage.py")


if __name__ == "__main__":
    unittest.main()
