"""The harness's layering, read from the source.

The library is in rooms, each a folder with one job, stacked: a module imports only its own
room and the rooms below it, so there are no upward imports and no cycles between rooms; and
no module imports one that imports it back, directly or through others, so there are no
circles inside a room either. The runner (``harness.run``) sits on top and nothing imports
it; what runs in its workers (``harness.worker``) never imports the runner; the reports
(``harness.report``) import neither the runner nor torch. Every import statement counts,
including those inside functions, which run only on some paths."""

from __future__ import annotations

import ast
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

# Its own seconds (test/harness/budgets.py): 2 s measured 2026-11-29.
TIME_BUDGET_S = 10

HARNESS = Path(__file__).resolve().parents[2] / "harness"

# Bottom first: each room may import itself and the rooms before it.
LIBRARY_ROOMS = ("harness", "harness.features", "harness.measure", "harness.checks", "harness.axes", "harness.testcase",
                 "harness.fuzz")
# What a backend project brings (its configuration, scenarios, models) and where the suite's own
# scenarios are: above the library, which never imports it, below the reports and the runner.
# The workers' side (harness.worker) sits between the reports and the runner: the controller
# reads what the workers write through it, and it never imports the controller.
# The repros (harness.repros) read a run's reports and write the files its issues carry.
ROOMS = (*LIBRARY_ROOMS, "harness.project", "harness.report", "harness.repros", "harness.worker", "harness.run")
# Beyond the order: what each room may never import, and why it matters.
FORBIDDEN = {
    **{room: {"harness.run", "harness.worker", "harness.report", "harness.repros", "harness.project"}
       for room in LIBRARY_ROOMS},  # nor the runner
    "harness.project": {"harness.run", "harness.worker", "harness.report"},
    "harness.report": {"harness.run", "harness.worker", "torch"},  # --merge and the scripts work without either
    "harness.repros": {"harness.run", "harness.worker"},  # its reducer runs alone, beside the backend

    "harness.worker": {"harness.run"},  # a worker knows its protocol, never the controller's machinery
    "harness.run": set(),
}
MOST_MODULES = 12
# Folders inside a room, for one job of it: they follow their room's rules, and their modules
# count apart (no folder past a dozen).
ROOM_FOLDERS = {"harness.report": ("formats", "scoreboard"), "harness.checks": ("observations",)}


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


SCENARIOS = HARNESS.parent / "test" / "dynamo"


def deep_imports(path: Path) -> list[tuple[int, str]]:
    """The imports of ``path`` that reach the harness other than through its public surface
    (``from harness import NAME``, NAME one of the names ``harness`` gives), with their lines."""
    import harness

    public = set(harness._MODULE_OF) | set(harness._SUBMODULES) | {path.stem for path in HARNESS.glob("*.py")}
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("harness.")]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("harness."):
            found.append((node.lineno, node.module))
        elif isinstance(node, ast.ImportFrom) and node.module == "harness":
            found += [(node.lineno, f"harness.{alias.name}") for alias in node.names if alias.name not in public]
    return sorted(found)


def folders_of(room: str) -> list[Path]:
    folder = HARNESS.joinpath(*room.split(".")[1:])
    return [folder, *(folder / name for name in ROOM_FOLDERS.get(room, ()))]


def modules_in(room: str) -> list[Path]:
    return sorted(path for folder in folders_of(room) for path in folder.glob("*.py"))


def import_graph(folder: Path, package: str) -> dict[str, set[str]]:
    """Each module of the package in ``folder`` (``pkg.sub.mod``; a package by its
    ``__init__.py``) -> the modules of the package it imports, by any import statement.
    ``from pkg.sub import mod`` imports ``pkg.sub.mod``; ``from pkg.sub.mod import name``
    imports ``pkg.sub.mod``; importing a module does not count as importing the packages
    above it (Python runs their ``__init__.py`` first, but they import nothing back here)."""
    modules = {}
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(folder).with_suffix("").parts
        modules[".".join((package, *(parts[:-1] if parts[-1] == "__init__" else parts)))] = path
    graph = {}
    for module, path in modules.items():
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names if alias.name in modules}
            elif isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    named = f"{node.module}.{alias.name}"
                    imported.add(named if named in modules else node.module)
        graph[module] = (imported & modules.keys()) - {module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The import circles of ``graph``: each set of modules that import one another, directly
    or through others (a strongly connected component of more than one module), sorted."""
    found, order, reach, stack, on_stack = [], {}, {}, [], set()

    def visit(module: str) -> None:  # Tarjan's algorithm
        order[module] = reach[module] = len(order)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.get(module, ())):
            if imported not in order:
                visit(imported)
                reach[module] = min(reach[module], reach[imported])
            elif imported in on_stack:
                reach[module] = min(reach[module], order[imported])
        if reach[module] == order[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in order:
            visit(module)
    return sorted(found)


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
        self.assertEqual({folder for room in ROOMS for folder in folders_of(room)}, folders)

    def test_every_package_of_the_library_is_installed(self) -> None:
        # setup.cfg names its packages one by one: a new folder left out installs a wheel that
        # cannot import it (test/proofs/test_installed_package.py finds that, minutes later).
        import configparser

        config = configparser.ConfigParser()
        config.read(HARNESS.parent / "setup.cfg")
        listed = set(config["options"]["packages"].split())
        found = {".".join(path.parent.relative_to(HARNESS.parent).parts) for path in HARNESS.rglob("__init__.py")
                 if "_bundled" not in path.parts}
        self.assertEqual(found - listed, set(), "a package of harness/ that setup.cfg's packages leave out")

    def test_no_room_holds_more_than_a_dozen_modules(self) -> None:
        for folder in [folder for room in ROOMS for folder in folders_of(room)]:
            with self.subTest(folder=str(folder.relative_to(HARNESS))):
                modules = [path for path in folder.glob("*.py") if path.name != "__init__.py"]
                self.assertLessEqual(len(modules), MOST_MODULES, [path.name for path in modules])

    def test_each_room_says_what_it_is_for(self) -> None:
        for folder in [folder for room in ROOMS for folder in folders_of(room)]:
            with self.subTest(folder=str(folder.relative_to(HARNESS))):
                init = folder / "__init__.py"
                self.assertTrue(ast.get_docstring(ast.parse(init.read_text())), f"{init} has no docstring")

    def test_each_room_names_its_modules(self) -> None:
        # A newcomer reads a room's docstring to find the module of a job.
        for folder in [folder for room in ROOMS for folder in folders_of(room)]:
            doc = ast.get_docstring(ast.parse((folder / "__init__.py").read_text())) or ""
            inside = [path.stem for path in folder.glob("*.py") if path.name != "__init__.py"]
            inside += [path.name for path in folder.iterdir() if (path / "__init__.py").is_file()]
            with self.subTest(folder=str(folder.relative_to(HARNESS))):
                self.assertEqual([], [name for name in inside if f"``{name}``" not in doc
                                      and f"``harness.{name}``" not in doc], "not named in the docstring")

    def test_scenarios_import_only_the_public_surface(self) -> None:
        # CONTRIBUTING.md: a scenario imports ``from harness import ...`` alone, so that the
        # rooms behind it can move.
        for path in sorted(SCENARIOS.glob("*.py")):
            with self.subTest(file=path.name):
                self.assertEqual([], deep_imports(path))

    def test_the_public_surface_check_sees_each_deep_form(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            scenario = Path(folder) / "test_x.py"
            scenario.write_text("from harness import BackendTestCase, variants\nimport harness\n"
                                "from harness.checks.compare import assert_close\nimport harness.checks.graphs\n"
                                "def f():\n    from harness import no_such_name\n")
            self.assertEqual([3, 4, 6], [line for line, _ in deep_imports(scenario)])

    def test_the_runner_never_imports_torch(self) -> None:
        # run_tests.py stays a small process beside its workers (harness/run/collection.py).
        import subprocess
        import sys

        code = ("import sys; import harness.run.cli, harness.run.engine, harness.run.isolation; "
                "print(sorted(name for name in sys.modules if name.split('.')[0] == 'torch')[:3])")
        loaded = subprocess.run([sys.executable, "-c", code], cwd=HARNESS.parent, capture_output=True, text=True, check=True)
        self.assertEqual(loaded.stdout.strip(), "[]", loaded.stderr)

    def test_no_module_imports_itself_back_through_others(self) -> None:
        # Within a room the order above allows anything; a circle there (hidden by imports
        # inside functions) means two modules share one job, or a third should hold what both need.
        graph = import_graph(HARNESS, "harness")
        self.assertGreater(len(graph), 60)
        self.assertIn("harness.worker.protocol", graph["harness.run.engine"])
        self.assertEqual([], circles(graph), "import circles (each a set of modules that import one another)")

    def test_the_circle_check_sees_a_circle_through_an_import_inside_a_function(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            package = Path(folder) / "pkg"
            (package / "room").mkdir(parents=True)
            (package / "__init__.py").write_text("")
            (package / "room" / "__init__.py").write_text("")
            (package / "room" / "first.py").write_text("from pkg.room.second import helper\n")
            (package / "room" / "second.py").write_text("def helper():\n    from pkg.room import third\n")
            (package / "room" / "third.py").write_text("import pkg.room.first\nfrom pkg import alone\n")
            (package / "alone.py").write_text("import os\n")  # imported by the circle, not in it
            (package / "user.py").write_text("from pkg.room.first import helper\n")  # leans on it, not in it
            graph = import_graph(package, "pkg")
        self.assertEqual({"pkg.room.second"}, graph["pkg.room.first"])
        self.assertEqual({"pkg.room.third"}, graph["pkg.room.second"])
        self.assertEqual([["pkg.room.first", "pkg.room.second", "pkg.room.third"]], circles(graph))
        del graph["pkg.room.second"]  # the circle broken
        self.assertEqual([], circles(graph))

    def test_the_check_sees_imports_inside_functions(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            probe = Path(folder) / "probe.py"
            probe.write_text("def f():\n    from harness.run import engine\n    import torch.nn\n")
            modules = {module for _, module in imported_modules(probe)}
        self.assertEqual({"harness.run", "harness.run.engine", "torch.nn"}, modules)
        self.assertEqual({"harness.run", "torch"}, {room_of(module) for module in modules})


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _private_module(module: str) -> bool:
    parts = module.split(".")
    return parts[0] == "torch" and len(parts) > 1 and _private(parts[1])


def private_torch_uses(path: Path) -> list[tuple[int, str]]:
    """Each use of torch's private API in ``path``, with its line: an attribute ``torch._x``
    (through any name torch is imported as), ``import torch._x``, ``from torch._x import ...``,
    ``from torch import _x`` and ``importlib.import_module("torch._x")``. Text that only names
    it (a comment, a docstring, the source of a generated repro file) is not a use; nor is a
    dunder (``torch.__version__``)."""
    tree = ast.parse(path.read_text(), str(path))
    names = {"torch"} | {alias.asname for node in ast.walk(tree) if isinstance(node, ast.Import)
                         for alias in node.names if alias.name == "torch" and alias.asname}
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in names
                and _private(node.attr)):
            found.append((node.lineno, f"torch.{node.attr}"))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names if _private_module(alias.name)]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if _private_module(node.module):
                found.append((node.lineno, node.module))
            elif node.module == "torch":
                found += [(node.lineno, f"torch.{alias.name}") for alias in node.names if _private(alias.name)]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
              and _private_module(node.args[0].value)):
            found.append((node.lineno, node.args[0].value))
    return sorted(found)


def private_torch_uses_outside_compat(harness: Path) -> list[str]:
    """``file:line: name`` for each use of torch's private API under ``harness`` outside its compat.py."""
    return [f"{path.relative_to(harness.parent).as_posix()}:{line}: {name}"
            for path in sorted(harness.rglob("*.py")) if path != harness / "compat.py"
            for line, name in private_torch_uses(path)]


class DrawingTests(unittest.TestCase):
    def test_the_house_drawn_from_the_code_shows_every_room_and_nothing_forbidden(self) -> None:
        drawn = subprocess.run([sys.executable, str(HARNESS.parent / "scripts" / "draw_house.py")],
                               capture_output=True, text=True, timeout=60)
        self.assertEqual(drawn.returncode, 0, drawn.stdout + drawn.stderr)
        self.assertEqual([line.split()[0] for line in drawn.stdout.splitlines()[:-1]], list(reversed(ROOMS)))
        self.assertIn("arrows back up: none; circles: none; rooms past 12 modules: none", drawn.stdout)


class PrivateTorchTests(unittest.TestCase):
    """torch's private API (``torch._dynamo``, ``torch._C``, ``torch._ops``...) is what moves
    between releases, so only harness/compat.py names it: a new torch is one file to change."""

    def test_only_compat_uses_private_torch_api(self) -> None:
        self.assertEqual([], private_torch_uses_outside_compat(HARNESS),
                         "torch's private API outside harness/compat.py: give compat a function for it")
        self.assertTrue(private_torch_uses(HARNESS / "compat.py"))  # the check reads compat's own uses

    def test_the_check_sees_each_form_outside_compat_only(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            harness = Path(folder) / "harness"
            (harness / "checks").mkdir(parents=True)
            (harness / "compat.py").write_text("import torch\ntorch._dynamo.reset()\n")
            (harness / "checks" / "probe.py").write_text(
                "import importlib\n"
                "import torch\n"
                "import torch as t\n"
                "import torch._dynamo.config\n"
                "from torch._functorch import fx_minifier\n"
                "from torch import _C, nn\n"
                "def f(x):\n"
                "    t._C._dispatch_keys(x)  # torch._C in a comment is not a use\n"
                "    importlib.import_module('torch._inductor.config')\n"
                "    return torch.__version__, torch.nn.functional, 'torch._dynamo.reset()'\n"
                "@torch._dynamo.disable\n"
                "def g():\n"
                "    pass\n")
            found = private_torch_uses_outside_compat(harness)
        where = "harness/checks/probe.py"
        self.assertEqual([f"{where}:4: torch._dynamo.config", f"{where}:5: torch._functorch", f"{where}:6: torch._C",
                          f"{where}:8: torch._C", f"{where}:9: torch._inductor.config", f"{where}:11: torch._dynamo"],
                         found)


if __name__ == "__main__":
    unittest.main()
