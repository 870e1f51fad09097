"""The harness's layering, read from the source: the scenario library (``harness``) never
imports the runner (``harness.run``) or the reports (``harness.report``), and the reports
never import the runner or torch. Every import statement counts, including those inside
functions, which run only on some paths."""

from __future__ import annotations

import ast
import tempfile
import unittest
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[2] / "harness"


def package_of(module: str) -> str:
    """``harness.run.engine`` -> ``harness.run``; ``harness.case`` -> ``harness``."""
    parts = module.split(".")
    if parts[0] != "harness":
        return parts[0]
    return "harness." + parts[1] if len(parts) > 1 and parts[1] in ("run", "report") else "harness"


def imported_modules(path: Path) -> list[tuple[int, str]]:
    """Every module an import statement in ``path`` names (``from harness import run``
    names ``harness.run``), with its line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            raise AssertionError(f"{path}:{node.lineno}: relative import; the harness imports absolutely")
    return found


def modules_in(package: str) -> list[Path]:
    folder = HARNESS.joinpath(*package.split(".")[1:])
    return sorted(folder.glob("*.py"))


class LayeringTests(unittest.TestCase):
    # What each half may not import, and why it matters.
    FORBIDDEN = {
        "harness": {"harness.run", "harness.report"},  # scenarios must not pull in the runner
        "harness.report": {"harness.run", "torch"},  # --merge and the scripts work without either
        "harness.run": set(),
    }

    def test_each_package_imports_only_the_layers_below_it(self) -> None:
        checked = 0
        for package, forbidden in self.FORBIDDEN.items():
            for path in modules_in(package):
                checked += 1
                for line, module in imported_modules(path):
                    with self.subTest(file=path.relative_to(HARNESS.parent).as_posix(), line=line):
                        self.assertNotIn(package_of(module), forbidden,
                                         f"{path.name}:{line} imports {module}")
        self.assertGreater(checked, 20)

    def test_every_harness_module_belongs_to_a_checked_package(self) -> None:
        # A new sub-package would otherwise escape the rules above.
        packages = {path.parent for path in HARNESS.rglob("*.py")}
        self.assertEqual({HARNESS, HARNESS / "run", HARNESS / "report"}, packages)

    def test_the_check_sees_imports_inside_functions(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            probe = Path(folder) / "probe.py"
            probe.write_text("def f():\n    from harness.run import engine\n    import torch.nn\n")
            modules = {module for _, module in imported_modules(probe)}
        self.assertEqual({"harness.run", "harness.run.engine", "torch.nn"}, modules)
        self.assertEqual({"harness.run", "torch"}, {package_of(module) for module in modules})


if __name__ == "__main__":
    unittest.main()
