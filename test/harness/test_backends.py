"""Backend specs: registered names, importable callables, files anywhere on disk."""

from __future__ import annotations

import shutil
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

import torch

from harness import compat
from harness.axes import backends
from harness.axes.backends import BackendSpecError, probe_backend, register_backend, resolve_backend, resolve_backends
from test.harness import faulty_backends

# Its own seconds (test/harness/budgets.py): 1 s measured 2026-11-29.
TIME_BUDGET_S = 10

_FILE_BACKEND = textwrap.dedent(
    """
    CALLS = []
    NOT_CALLABLE = 42

    def my_backend(gm, example_inputs):
        CALLS.append(len(example_inputs))
        return gm.forward
    """
)


def _double(x):
    return x * 2


class ResolveTests(unittest.TestCase):
    def setUp(self) -> None:
        self.addCleanup(torch._dynamo.reset)

    def assertSpecError(self, spec: str, pattern: str) -> str:
        with self.assertRaisesRegex(BackendSpecError, pattern) as caught:
            resolve_backend(spec)
        message = str(caught.exception)
        # The CLI prints this message as the whole diagnosis, so it must stay on one line.
        self.assertNotIn("\n", message)
        return message

    def write_backend_file(self, text: str = _FILE_BACKEND) -> Path:
        # Outside the repository, so nothing can be imported by accident from sys.path.
        folder = Path(tempfile.mkdtemp(prefix="dynamo_suite_backend_"))
        self.addCleanup(shutil.rmtree, folder, True)
        path = folder / "my_backends.py"
        path.write_text(text, encoding="utf-8")
        self.addCleanup(self._forget_modules_from, path)
        return path

    @staticmethod
    def _forget_modules_from(path: Path) -> None:
        for name, module in list(sys.modules.items()):
            if getattr(module, "__file__", None) == str(path.resolve()):
                del sys.modules[name]

    def test_registered_name(self):
        backend = resolve_backend("aot_eager")
        self.assertEqual((backend.spec, backend.name), ("aot_eager", "aot_eager"))
        self.assertIs(backend.compiler_fn(), compat.lookup_backend("aot_eager"))

    def test_surrounding_whitespace_is_ignored(self):
        self.assertEqual(resolve_backend("  eager ").spec, "eager")

    def test_module_attr(self):
        backend = resolve_backend("test.harness.faulty_backends:wrong_values")
        self.assertEqual(backend.name, "wrong_values")
        self.assertEqual(backend.spec, "test.harness.faulty_backends:wrong_values")
        self.assertIs(backend.compiler_fn(), faulty_backends.wrong_values)

    def test_file_attr(self):
        path = self.write_backend_file()
        backend = resolve_backend(f"{path}:my_backend")
        self.assertEqual(backend.name, "my_backend")
        out = torch.compile(_double, backend=backend)(torch.ones(2))
        self.assertEqual(out.tolist(), [2.0, 2.0])
        self.assertEqual(backend.compiler_fn().__globals__["CALLS"], [1])

    def test_file_is_imported_once(self):
        path = self.write_backend_file()
        first = resolve_backend(f"{path}:my_backend").compiler_fn()
        again = resolve_backend(f"{path}:my_backend").compiler_fn()
        self.assertIs(first, again)

    def test_unknown_name_lists_registered_names(self):
        message = self.assertSpecError("no_such_backend", r"unknown backend 'no_such_backend'")
        for name in ("aot_eager", "eager", "inductor"):
            self.assertIn(name, message)
        self.assertIn("package.module:attr", message)

    def test_empty_spec(self):
        self.assertSpecError("   ", "empty backend spec")

    def test_missing_module(self):
        self.assertSpecError("no_such_package_xyz.backends:fn", r"cannot import module 'no_such_package_xyz\.backends'")

    def test_missing_attribute(self):
        self.assertSpecError("test.harness.faulty_backends:no_such_fn", r"has no attribute 'no_such_fn'")

    def test_missing_attribute_in_file(self):
        path = self.write_backend_file()
        self.assertSpecError(f"{path}:no_such_fn", r"has no attribute 'no_such_fn'")

    def test_not_callable(self):
        path = self.write_backend_file()
        self.assertSpecError(f"{path}:NOT_CALLABLE", r"is a int, not a callable")

    def test_missing_file(self):
        folder = Path(tempfile.mkdtemp(prefix="dynamo_suite_backend_"))
        self.addCleanup(shutil.rmtree, folder, True)
        self.assertSpecError(f"{folder / 'absent.py'}:fn", r"no file .*absent\.py")

    def test_file_that_fails_to_import(self):
        path = self.write_backend_file("raise RuntimeError('broken plugin')\n")
        self.assertSpecError(f"{path}:fn", r"importing .* failed: RuntimeError\('broken plugin'\)")
        # A failed import must not leave a half-initialised module behind for the next try.
        self.assertSpecError(f"{path}:fn", r"importing .* failed")

    def test_colon_without_attribute(self):
        self.assertSpecError("test.harness.faulty_backends:", r"expected package\.module:attr")


class ResolveManyTests(unittest.TestCase):
    def test_names_in_test_ids_are_unique(self):
        resolved = resolve_backends("eager, aot_eager,,eager")
        self.assertEqual([b.name for b in resolved], ["eager", "aot_eager", "eager_2"])
        self.assertEqual([b.spec for b in resolved], ["eager", "aot_eager", "eager"])

    def test_same_attr_name_from_two_places(self):
        resolved = resolve_backends(
            "test.harness.faulty_backends:wrong_values,test.harness.faulty_backends:wrong_values"
        )
        self.assertEqual([b.name for b in resolved], ["wrong_values", "wrong_values_2"])

    def test_nothing_named(self):
        with self.assertRaisesRegex(BackendSpecError, backends.BACKENDS_ENV):
            resolve_backends(" , ")

    def test_first_bad_spec_is_reported(self):
        with self.assertRaisesRegex(BackendSpecError, "no_such_backend"):
            resolve_backends("eager,no_such_backend")


class RegisterTests(unittest.TestCase):
    def setUp(self) -> None:
        self.addCleanup(torch._dynamo.reset)

    def test_replacing_a_registered_name_is_seen_by_resolved_backends(self):
        resolved_before = resolve_backend("aot_eager")
        original = compat.lookup_backend("aot_eager")
        listed_before = torch._dynamo.list_backends()
        self.addCleanup(register_backend, original, "aot_eager")
        calls = []

        def replacement(gm, example_inputs):
            calls.append(gm)
            return original(gm, example_inputs)

        self.assertIs(register_backend(replacement, "aot_eager"), replacement)
        out = torch.compile(_double, backend=resolved_before)(torch.ones(3))

        self.assertEqual(out.tolist(), [2.0] * 3)
        self.assertEqual(len(calls), 1, "the Backend resolved before the replacement must call the replacement")
        self.assertIs(compat.lookup_backend("aot_eager"), replacement)

        register_backend(original, "aot_eager")
        self.assertIs(compat.lookup_backend("aot_eager"), original)
        # Putting the original back must leave torch's listing as it was (tags included).
        self.assertEqual(torch._dynamo.list_backends(), listed_before)


class ProbeTests(unittest.TestCase):
    def setUp(self) -> None:
        self.addCleanup(torch._dynamo.reset)

    def test_eager_does_not_use_aot_autograd(self):
        profile = probe_backend(resolve_backend("eager"))
        self.assertTrue(profile.received_graph)
        self.assertFalse(profile.uses_aot_autograd)

    def test_aot_eager_uses_aot_autograd(self):
        profile = probe_backend(resolve_backend("aot_eager"))
        self.assertTrue(profile.received_graph)
        self.assertTrue(profile.uses_aot_autograd)


if __name__ == "__main__":
    unittest.main()
