"""Do locally what the nightly workflow does: run the suite on two installed torch versions
and print what the newer one regressed.

    python scripts/emulate_nightly.py --stable /path/venv213/bin/python \
        --nightly /path/venv214/bin/python [-- RUN_TESTS_ARGS...]

The stable interpreter runs ``run_tests.py RUN_TESTS_ARGS`` into REPORT_ROOT/stable; the
nightly one runs the same into REPORT_ROOT/nightly with ``--baseline`` on the stable results
and ``--fail-on regressions``, which prints newly failing, newly passing and changed tests.
Each interpreter needs the suite's requirements (requirements-suite.txt) besides its torch.
Exit code: the nightly run's (0 no new failures, 1 new failures, 2 a usage error).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def _run(python: str, args: list[str], label: str) -> int:
    # Both runs may share TORCHINDUCTOR_CACHE_DIR: inductor's cache keys include the torch version.
    command = [python, str(REPO_ROOT / "run_tests.py"), *args]
    print(f"== {label}: {' '.join(command)}", flush=True)
    return subprocess.call(command, cwd=REPO_ROOT, stdin=subprocess.DEVNULL)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stable", required=True, metavar="PYTHON", help="interpreter with the baseline torch")
    parser.add_argument("--nightly", required=True, metavar="PYTHON", help="interpreter with the newer torch")
    parser.add_argument("--report-root", default="reports-nightly-emulation", metavar="DIR",
                        help="stable/ and nightly/ report directories go here (default: %(default)s)")
    parser.add_argument("run_tests_args", nargs=argparse.REMAINDER,
                        help="after --: arguments for both run_tests.py runs (e.g. --backend aot_eager)")
    args = parser.parse_args(argv)
    for python in (args.stable, args.nightly):
        if not os.access(python, os.X_OK):
            parser.exit(2, f"{parser.prog}: error: '{python}' is not an executable interpreter\n")
    extra = args.run_tests_args[1:] if args.run_tests_args[:1] == ["--"] else args.run_tests_args
    root = Path(args.report_root).resolve()
    stable_dir, nightly_dir = root / "stable", root / "nightly"

    code = _run(args.stable, [*extra, "--report-dir", str(stable_dir)], "stable")
    if code > 1 or not (stable_dir / "results.json").exists():
        print(f"the stable run failed to produce results (exit {code})", file=sys.stderr)
        return 2
    return _run(args.nightly, [*extra, "--report-dir", str(nightly_dir),
                               "--baseline", str(stable_dir / "results.json"), "--fail-on", "regressions"],
                "nightly")


if __name__ == "__main__":
    sys.exit(main())
