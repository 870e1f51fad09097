"""scripts/bisect_torch.py, offline: stub torch wheels in a local directory, each build judged
by a command, as its tests must run without a network."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import unittest
import zipfile
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPT = REPO_ROOT / "scripts" / "bisect_torch.py"
sys.path.insert(0, str(SCRIPT.parent))

import bisect_torch  # noqa: E402

# Its own seconds (test/harness/budgets.py): 7 s measured 2026-11-29.
TIME_BUDGET_S = 20

JUDGE = 'python -c "import sys, torch; sys.exit(torch.BROKEN)"'


def stub_wheel(directory: Path, version: str, broken: bool) -> None:
    """A pure-Python 'torch' wheel whose module says whether this build is broken."""
    info = f"torch-{version}.dist-info"
    files = {
        "torch/__init__.py": f"__version__ = {version!r}\nBROKEN = {int(broken)}\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test_bisect_torch\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = "".join(f"{name},,\n" for name in [*files, f"{info}/RECORD"])
    with zipfile.ZipFile(directory / f"torch-{version}-py3-none-any.whl", "w") as wheel:
        for name, text in files.items():
            wheel.writestr(name, text)


class BisectTorchTests(unittest.TestCase):
    def setUp(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.tmp = Path(directory.name)
        self.wheels = self.tmp / "wheels"
        self.wheels.mkdir()

    def bisect(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, str(SCRIPT), "--command", JUDGE, "--find-links", str(self.wheels),
                               "--no-index", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=600)

    def test_finds_the_first_bad_build_among_the_wheels_offered(self):
        for minor in range(6):
            stub_wheel(self.wheels, f"1.{minor}.0", broken=minor >= 3)
        out = self.tmp / "bisect.json"
        done = self.bisect("--good", "1.0.0", "--bad", "1.5.0", "--json", str(out))
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        self.assertIn("over 6 torch builds: 1.0.0, 1.1.0, 1.2.0, 1.3.0, 1.4.0, 1.5.0", done.stdout)
        self.assertRegex(done.stdout, r"step 1: torch 1\.0\.0: exit 0 \(reference; [^)]*\)\n"
                                      r"step 2: torch 1\.5\.0: exit 1 \(bad; installed and run in \d+ s\)")
        self.assertIn("first bad build: torch 1.3.0 (last good: 1.2.0)", done.stdout)
        record = json.loads(out.read_text())
        self.assertEqual((record["last_good"], record["first_bad"]), ("1.2.0", "1.3.0"))
        self.assertLessEqual(len(record["steps"]), 5, "a bisection, not a scan")

    def test_the_same_outcome_at_both_ends_has_nothing_to_bisect(self):
        stub_wheel(self.wheels, "1.0.0", broken=False)
        stub_wheel(self.wheels, "1.1.0", broken=False)
        done = self.bisect("--good", "1.0.0", "--bad", "1.1.0")
        self.assertEqual(done.returncode, 1, done.stdout + done.stderr)
        self.assertIn("give the same outcome: nothing to bisect", done.stdout)

    def test_bad_input_is_one_line_and_exit_2(self):
        stub_wheel(self.wheels, "1.0.0", broken=False)
        for args, message in ((("--good", "1.1.0", "--bad", "1.0.0"), "must be an earlier version"),
                              (("--good", "one", "--bad", "1.0.0"), "is not a torch version"),
                              (("--good", "1.0.0", "--bad", "1.7.0"), "could not install torch 1.7.0")):
            with self.subTest(args=args):
                done = self.bisect(*args)
                self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
                self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
                self.assertIn(message, done.stderr)

    def test_a_date_means_that_days_nightly(self):
        offered = ["2.14.0.dev20261101+cpu", "2.14.0.dev20261102+cpu", "2.14.0.dev20261105+cpu"]
        self.assertEqual(bisect_torch.resolve("2026-11-02", offered), "2.14.0.dev20261102+cpu")
        self.assertEqual(bisect_torch.resolve("20261105", offered), "2.14.0.dev20261105+cpu")
        with self.assertRaisesRegex(bisect_torch.BisectError, "no nightly of 2026-11-03"):
            bisect_torch.resolve("2026-11-03", offered)


if __name__ == "__main__":
    unittest.main()
