"""Write the table of Dynamo's guard kinds and the state changes that cover them into
docs/state-changes.md, from the installed torch (between the two marker lines there).

    python scripts/guard_coverage.py          # rewrite the table
    python scripts/guard_coverage.py --check  # exit 1 if the page's table is out of date
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from harness import compat  # noqa: E402
from test.dynamo.state_changes import coverage_table  # noqa: E402

PAGE = ROOT / "docs" / "state-changes.md"
START, END = "<!-- guard coverage: scripts/guard_coverage.py -->", "<!-- end of guard coverage -->"


def rewritten(page: str) -> str:
    before, rest = page.split(START, 1)
    _, after = rest.split(END, 1)
    table = coverage_table(compat.guard_kinds(), str(compat.TORCH_VERSION))
    return f"{before}{START}\n{table}{END}{after}"


def main(argv: list[str]) -> int:
    page = PAGE.read_text()
    new = rewritten(page)
    if "--check" in argv:
        if new != page:
            print(f"{PAGE.relative_to(ROOT)}: the guard coverage table is out of date; run python scripts/guard_coverage.py")
            return 1
        return 0
    PAGE.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
