"""The harness's layering, read from the source.

The library is in rooms, each a folder with one job, stacked: a module imports only its own
room and the rooms below it, so there are no upward imports and no cycles between rooms. The
runner (``harness.run``) sits on top and nothing imports it; the reports
(``harness.report``) import neither the runner nor torch. Every import statement counts,
including those inside functions, which run only on some paths."""

from __future__ import annotations

import ast
import tempfile
import unittest
from pathlib import Path

HARNESS = Path(__file__).resolve().parents[2] / "harness"

# Bottom first: each room may import itself and the rooms before it.
LIBRARY_ROOMS = ("harness", "harness.measure", "harness.checks", "harness.axes", "harness.testcase",
                 "harness.generated")
# What a backend project brings (its configuration, scenarios, models) and where the suite's own
# scenarios are: above the library, which never imports it, below the reports and the runner.
ROOMS = (*LIBRARY_ROOMS, "harness.project", "harness.report", "harness.run")
# Beyond the order: what each room may never import, and why it matters.
FORBIDDEN = {
    **{room: {"harness.run", "harness.report", "harness.project"} for room in LIBRARY_ROOMS},  # nor the runner
    "harness.project": {"harness.run", "harness.report"},
    "harness.report": {"harness.run", "torch"},  # --merge and the scripts work without either
    "harness.run": set(),
}
MOST_MODULES = 12


def room_of(module: str) -> str:
    """``harness.run.engine`` -> ``harness.run``; ``harness.compat`` -> ``harness``;
    ``torch.nn`` -> ``torch``."""
    parts = module.split(".")
    if parts[0] != "harness":
        return parts[0]
    return "harness." + parts[1] if len(parts) > 1 and f"harness.{parts[1]}" in ROOMS else "harness"


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


def modules_in(room: str) -> list[Path]:
    folder = HARNESS.joinpath(*room.split(".")[1:])
    return sorted(folder.glob("*.py"))


class LayeringTests(unittest.TestCase):
    def test_each_room_imports_only_itself_and_the_rooms_below(self) -> None:
        checked = 0
        for position, room in enumerate(ROOMS):
            allowed = set(ROOMS[:position + 1])
            for path in modules_in(room):
                checked += 1
                for line, module in imported_modules(path):
                    imported = room_of(module)
                    with self.subTest(file=path.relative_to(HARNESS.parent).as_posix(), line=line):
                        self.assertNotIn(imported, FORBIDDEN[room], f"{path.name}:{line} imports {module}")
                        if imported in ROOMS:
                            self.assertIn(imported, allowed, f"{path.name}:{line} imports {module}, a room above "
                                                             f"{room} (order: {', '.join(ROOMS)})")
        self.assertGreater(checked, 40)

    def test_the_library_never_imports_through_its_public_aliases(self) -> None:
        # ``from harness import variants`` is for scenarios; inside, the room is named, so the
        # check above sees the real dependency.
        import harness

        for room in ROOMS:
            for path in modules_in(room):
                for line, module in imported_modules(path):
                    with self.subTest(file=path.name, line=line):
                        self.assertNotIn(module.removeprefix("harness."), harness._SUBMODULES.keys() - {"compat"},
                                         f"{path.name}:{line} imports {module}: name its room")

    def test_every_harness_module_belongs_to_a_room(self) -> None:
        # A new folder would otherwise escape the rules above.
        folders = {path.parent for path in HARNESS.rglob("*.py")}
        self.assertEqual({HARNESS.joinpath(*room.split(".")[1:]) for room in ROOMS}, folders)

    def test_no_room_holds_more_than_a_dozen_modules(self) -> None:
        for room in ROOMS:
            with self.subTest(room=room):
                modules = [path for path in modules_in(room) if path.name != "__init__.py"]
                self.assertLessEqual(len(modules), MOST_MODULES, [path.name for path in modules])

    def test_each_room_says_what_it_is_for(self) -> None:
        for room in ROOMS:
            with self.subTest(room=room):
                init = HARNESS.joinpath(*room.split(".")[1:], "__init__.py")
                self.assertTrue(ast.get_docstring(ast.parse(init.read_text())), f"{init} has no docstring")

    def test_the_runner_never_imports_torch(self) -> None:
        # run_tests.py stays a small process beside its workers (harness/run/collection.py).
        import subprocess
        import sys

        code = ("import sys; import harness.run.cli, harness.run.engine, harness.run.isolation; "
                "print(sorted(name for name in sys.modules if name.split('.')[0] == 'torch')[:3])")
        loaded = subprocess.run([sys.executable, "-c", code], cwd=HARNESS.parent, capture_output=True, text=True, check=True)
        self.assertEqual(loaded.stdout.strip(), "[]", loaded.stderr)

    def test_the_check_sees_imports_inside_functions(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            probe = Path(folder) / "probe.py"
            probe.write_text("def f():\n    from harness.run import engine\n    import torch.nn\n")
            modules = {module for _, module in imported_modules(probe)}
        self.assertEqual({"harness.run", "harness.run.engine", "torch.nn"}, modules)
        self.assertEqual({"harness.run", "torch"}, {room_of(module) for module in modules})


if __name__ == "__main__":
    unittest.main()
