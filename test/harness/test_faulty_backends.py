"""The suite's self-test: each faulty backend breaks one clause of the contract, and the
scenario families about that clause must fail on it, while passing on a correct backend.

The faulty backends are first checked in-process (they really break what they claim, and
nothing else). Then the families run in subprocesses, because the backend axis of a family
is fixed when its module is imported, from DYNAMO_SUITE_BACKENDS.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unittest
from dataclasses import dataclass
from pathlib import Path

import torch

from harness.backends import probe_backend, resolve_backend, resolve_backends
from harness.compare import assert_close
from test.harness.faulty_backends import drops_input_mutations, wrong_values

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Fault:
    spec: str  # the faulty backend
    control: str  # a correct backend of the same kind, on which the families must pass
    families: tuple[tuple[str, str], ...]  # (module, family) that must catch the fault


FAULTS = (
    Fault(
        spec="test.harness.faulty_backends:wrong_values",
        control="eager",
        families=(
            ("test.dynamo.test_python_autograd", "PythonAutogradTests"),
            ("test.dynamo.test_aot_autograd", "LSTMTests"),
        ),
    ),
    Fault(
        spec="test.harness.faulty_backends:drops_input_mutations",
        control="aot_eager",
        families=(
            ("test.harness.mutation_probe", "InputMutationProbe"),
            ("test.dynamo.test_aot_autograd", "InputMutationTests"),
        ),
    ),
)

# Per subprocess; a family's whole run under two backends, torch import included.
SUBPROCESS_TIMEOUT_S = 600


def _bump(x):
    x.add_(1)
    return x * 2


def _bump_returning_input(x):
    return x.add_(1)


def _buffer_and_grad(buffer, w):
    buffer.add_(1)
    return (buffer * w).sin()


def _mixed_outputs(w):
    return w.sin(), (w * 10).long(), w.cos().double()


class WrongValuesTests(unittest.TestCase):
    def setUp(self) -> None:
        torch._dynamo.reset()
        self.addCleanup(torch._dynamo.reset)

    def test_outputs_fail_the_comparison(self):
        w = torch.randn(5, requires_grad=True)
        actual = torch.compile(_mixed_outputs, backend=wrong_values)(w)
        expected = _mixed_outputs(w)
        with self.assertRaisesRegex(AssertionError, r"output\[0\]: values differ from eager"):
            assert_close(self, expected, actual)
        # Only the values: everything else a comparison looks at is still right.
        for want, got in zip(expected, actual):
            self.assertEqual((want.shape, want.dtype, want.requires_grad), (got.shape, got.dtype, got.requires_grad))
        self.assertTrue(torch.equal(expected[1], actual[1]))
        # Even the loosest tolerance (bfloat16's, widened by 2) cannot absorb the nudge.
        for index in (0, 2):
            with self.assertRaises(AssertionError):
                torch.testing.assert_close(actual[index], expected[index], rtol=3.2e-2, atol=2e-2)

    def test_gradients_stay_right(self):
        w = torch.randn(5, requires_grad=True)
        torch.compile(_mixed_outputs, backend=wrong_values)(w)[0].sum().backward()
        torch.testing.assert_close(w.grad, w.detach().cos())

    def test_inputs_are_untouched(self):
        x = torch.zeros(3)
        torch.compile(_bump, backend=wrong_values)(x)
        self.assertEqual(x.tolist(), [1.0] * 3)

    def test_is_not_an_aot_autograd_backend(self):
        profile = probe_backend(resolve_backend("test.harness.faulty_backends:wrong_values"))
        self.assertTrue(profile.received_graph)
        self.assertFalse(profile.uses_aot_autograd)


class DropsInputMutationsTests(unittest.TestCase):
    def setUp(self) -> None:
        torch._dynamo.reset()
        self.addCleanup(torch._dynamo.reset)

    def test_inference_mutation_is_dropped(self):
        x = torch.zeros(3)
        torch.compile(_bump_returning_input, backend=drops_input_mutations)(x)
        self.assertEqual(x.tolist(), [0.0] * 3)

    def test_outputs_stay_right(self):
        x = torch.zeros(3)
        out = torch.compile(_bump, backend=drops_input_mutations)(x)
        self.assertEqual((out.tolist(), x.tolist()), ([2.0] * 3, [0.0] * 3))

    def test_mutation_next_to_a_training_graph_is_dropped(self):
        buffer, w = torch.zeros(3), torch.randn(3, requires_grad=True)
        out = torch.compile(_buffer_and_grad, backend=drops_input_mutations)(buffer, w)
        self.assertEqual(buffer.tolist(), [0.0] * 3)
        self.assertIn("CompiledFunction", type(out.grad_fn).__name__)
        out.sum().backward()
        torch.testing.assert_close(w.grad, w.detach().cos())
        torch.testing.assert_close(out, w.detach().sin())

    def test_is_an_aot_autograd_backend(self):
        profile = probe_backend(resolve_backend("test.harness.faulty_backends:drops_input_mutations"))
        self.assertTrue(profile.received_graph)
        self.assertTrue(profile.uses_aot_autograd)


# -- running the families under the faulty backends --------------------------------------

_SEPARATOR = re.compile(r"^(?:={70}|-{70})$", re.M)
_TEST_LINE = re.compile(r"^(\w+) \(([\w.]+)\)", re.M)
# The outcome closes the line of its test (or of the docstring line printed after it);
# warnings printed meanwhile may push it onto a later line.
_OUTCOME = re.compile(r"(?:^|\.\.\. )(ok|FAIL|ERROR|expected failure|unexpected success|skipped)\b", re.M)
_REPORT = re.compile(
    r"^(?:FAIL|ERROR): (\w+) \(([\w.]+)\)[^\n]*\n(?:(?!-{70}$)[^\n]*\n)?-{70}\n(.*?)(?=^(?:={70}|-{70})$)",
    re.M | re.S,
)

# Reports of failures that prove nothing about the fault.
_UNRELATED_FAILURES = ("received no graph", "leaked global state")
_PASSING = ("ok", "skipped", "expected failure")
# Data in the expectations file may skip or xfail a scenario on every backend.
_EXEMPT = ("skipped", "expected failure")


def _test_id(method: str, where: str) -> str:
    # Python 3.11 prints module.Class.method in parentheses, older releases module.Class.
    return where if where.endswith(f".{method}") else f"{where}.{method}"


def parse_outcomes(output: str) -> dict[str, str]:
    """``unittest -v`` progress lines -> {test id: outcome}."""
    progress = _SEPARATOR.split(output, 1)[0]
    starts = list(_TEST_LINE.finditer(progress))
    outcomes = {}
    for start, following in zip(starts, starts[1:] + [None]):
        segment = progress[start.end(): following.start() if following else len(progress)]
        outcome = _OUTCOME.search(segment)
        outcomes[_test_id(start.group(1), start.group(2))] = outcome.group(1) if outcome else "no outcome"
    return outcomes


def parse_reports(output: str) -> dict[str, str]:
    """The FAIL / ERROR reports after the progress lines -> {test id: traceback}."""
    return {_test_id(m.group(1), m.group(2)): m.group(3) for m in _REPORT.finditer(output + "\n" + "-" * 70)}


@dataclass
class _Run:
    fault: Fault
    faulty_name: str
    control_name: str
    command: list[str]
    returncode: int = 0
    output: str = ""


class FaultsAreCaughtTests(unittest.TestCase):
    """Each Fault's families, run under the faulty backend and its control in one process."""

    runs: list[_Run] = []

    @classmethod
    def setUpClass(cls) -> None:
        cls.runs = []
        processes = []
        for fault in FAULTS:
            faulty, control = resolve_backends(f"{fault.spec},{fault.control}")
            modules = list(dict.fromkeys(module for module, _ in fault.families))
            selectors = [arg for _, family in fault.families for arg in ("-k", family)]
            command = [sys.executable, "-m", "unittest", "-v", *selectors, *modules]
            env = dict(os.environ, PYTHONWARNINGS="ignore")
            env["DYNAMO_SUITE_BACKENDS"] = f"{fault.spec},{fault.control}"
            run = _Run(fault, faulty.name, control.name, command)
            # The runs are independent; overlapping them halves the wall time.
            process = subprocess.Popen(command, cwd=REPO_ROOT, env=env, text=True,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            processes.append((run, process))
        for run, process in processes:
            try:
                run.output, _ = process.communicate(timeout=SUBPROCESS_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                run.output, _ = process.communicate()
                run.output += f"\n[killed after {SUBPROCESS_TIMEOUT_S} s]"
            run.returncode = process.returncode
            cls.runs.append(run)

    def describe(self, run: _Run) -> str:
        return f"\n$ DYNAMO_SUITE_BACKENDS={run.fault.spec},{run.fault.control} {' '.join(run.command)}\n" + run.output[-6000:]

    def test_runs_fail(self):
        for run in self.runs:
            with self.subTest(fault=run.faulty_name):
                self.assertNotEqual(run.returncode, 0, self.describe(run))

    def test_every_scenario_fails_under_its_fault(self):
        for run in self.runs:
            outcomes, reports = parse_outcomes(run.output), parse_reports(run.output)
            for module, family in run.fault.families:
                with self.subTest(fault=run.faulty_name, family=f"{module}.{family}"):
                    prefix = f"{module}.{family}_{run.faulty_name}."
                    ran = {test: outcome for test, outcome in outcomes.items() if test.startswith(prefix)}
                    self.assertTrue(ran, f"no test of {prefix}* ran" + self.describe(run))
                    not_caught = {test: o for test, o in ran.items() if o != "FAIL" and o not in _EXEMPT}
                    self.assertEqual(not_caught, {}, "scenarios that did not fail on the fault" + self.describe(run))
                    self.assertIn("FAIL", ran.values(), "every scenario was exempted by expectations")
                    for test, outcome in ran.items():
                        if outcome == "FAIL":
                            report = reports.get(test, "")
                            self.assertTrue(report, f"no failure report for {test}" + self.describe(run))
                            for unrelated in _UNRELATED_FAILURES:
                                self.assertNotIn(unrelated, report, f"{test} failed for another reason:\n{report}")

    def test_every_scenario_passes_on_the_control(self):
        for run in self.runs:
            outcomes = parse_outcomes(run.output)
            for module, family in run.fault.families:
                with self.subTest(control=run.control_name, family=f"{module}.{family}"):
                    prefix = f"{module}.{family}_{run.control_name}."
                    ran = {test: outcome for test, outcome in outcomes.items() if test.startswith(prefix)}
                    self.assertTrue(ran, f"no test of {prefix}* ran" + self.describe(run))
                    failed = {test: o for test, o in ran.items() if o not in _PASSING}
                    self.assertEqual(failed, {}, self.describe(run))


class ParseOutputTests(unittest.TestCase):
    """The parsing above must keep reading unittest's output correctly, or the self-test
    would pass vacuously."""

    OUTPUT = (
        "test_a (pkg.mod.Fam_x.test_a) ... ok\n"
        "test_b (pkg.mod.Fam_x.test_b)\nFirst docstring line ... FAIL\n"
        "test_c (pkg.mod.Fam_x.test_c) ... /some/file.py:3: UserWarning: careful\n  warn()\nERROR\n"
        "test_d (pkg.mod.Fam_x) ... skipped 'known'\n"
        "test_e (pkg.mod.Fam_x.test_e) ... expected failure\n"
        "\n" + "=" * 70 + "\n"
        "FAIL: test_b (pkg.mod.Fam_x.test_b)\nFirst docstring line\n" + "-" * 70 + "\n"
        "Traceback (most recent call last):\nAssertionError: output: values differ from eager\n\n"
        + "=" * 70 + "\n"
        "ERROR: test_c (pkg.mod.Fam_x.test_c)\n" + "-" * 70 + "\n"
        "Traceback (most recent call last):\nRuntimeError: boom\n\n"
        + "-" * 70 + "\nRan 5 tests in 0.1s\n\nFAILED (failures=1, errors=1, skipped=1, expected failures=1)\n"
    )

    def test_outcomes(self):
        self.assertEqual(
            parse_outcomes(self.OUTPUT),
            {
                "pkg.mod.Fam_x.test_a": "ok",
                "pkg.mod.Fam_x.test_b": "FAIL",
                "pkg.mod.Fam_x.test_c": "ERROR",
                "pkg.mod.Fam_x.test_d": "skipped",
                "pkg.mod.Fam_x.test_e": "expected failure",
            },
        )

    def test_reports(self):
        reports = parse_reports(self.OUTPUT)
        self.assertEqual(sorted(reports), ["pkg.mod.Fam_x.test_b", "pkg.mod.Fam_x.test_c"])
        self.assertIn("values differ from eager", reports["pkg.mod.Fam_x.test_b"])
        self.assertIn("RuntimeError: boom", reports["pkg.mod.Fam_x.test_c"])


if __name__ == "__main__":
    unittest.main()
