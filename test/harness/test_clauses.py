"""Which contract clause an unexpected result breaks (harness/checks/clauses.py), and the
reports that lead with clauses."""

from __future__ import annotations

import ast
import unittest
from pathlib import Path

from harness.checks import clauses
from harness.report import console, problems
from harness.report.formats import markdown
from harness.report.formats.format import RunReport
from harness.report.results import RunResults, TestResult
from harness.worker.classify import one_line

# Its own seconds (test/harness/budgets.py): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10

SCENARIO_MODULES = Path(__file__).resolve().parents[1] / "dynamo"
OV = "openvino"


def _families() -> list[str]:
    """``module.Family`` of every test class of the bundled scenario modules."""
    found = []
    for path in sorted(SCENARIO_MODULES.glob("test_*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef) and node.name.endswith("Tests"):
                found.append(f"{path.stem}.{node.name}")
    return found


def _result(scenario: str, reason: str, outcome: str = "FAIL", backend: str = OV, graphs: int = 1,
            duration: float = 1.0) -> TestResult:
    module, family, test = scenario.split(".")
    return TestResult(id=f"test.dynamo.{module}.{family}_{backend}.{test}", scenario=scenario, backend=backend,
                      backend_spec=backend, outcome=outcome, reason=reason, duration_s=duration,
                      metrics={"graphs": graphs, "frames": 1})


GRADIENT_TEST = "test_backend_contract.GradientContractTests.test_first_order_1_softmax"
OUTPUT_TEST = "test_backend_contract.OutputContractTests.test_layouts_0_contiguous"


class ClauseOfResultTests(unittest.TestCase):
    def test_every_family_of_the_bundled_scenarios_has_a_clause(self):
        families = _families()
        self.assertGreater(len(families), 30)
        self.assertEqual([family for family in families if clauses.of_scenario(f"{family}.test_x") is None], [],
                         "a scenario family without a clause in harness/checks/clauses.py's SCENARIOS")
        every = set(clauses.CLAUSES) | {clauses.TORCH_ITSELF}
        self.assertEqual(set(clauses.SCENARIOS.values()) - every, set())

    def test_a_check_that_says_what_it_compared_names_its_clause_whatever_the_test(self):
        for reason, clause in [
            ("AssertionError: output[1]: requires_grad differs from eager", clauses.AUTOGRAD_METADATA),
            ("AssertionError: grad of input 0: presence differs from eager", clauses.AUTOGRAD_METADATA),
            ("AssertionError: Lists differ: [False, True] != [True, True] : outputs: requires_grad differs from eager",
             clauses.AUTOGRAD_METADATA),
            ("AssertionError: output: dtype differs from eager", clauses.DTYPE),
            ("AssertionError: output[0]: strides differ from eager ((4, 1) vs (1, 4))", clauses.STRIDES_AND_ALIASING),
            ("AssertionError: inputs after the call: values differ from eager", clauses.MUTATIONS_APPLIED),
            ("AssertionError: grad of input 2: values differ from eager", clauses.GRADIENTS),
            ("AssertionError: an earlier call's output: values differ from eager", clauses.CALL_INDEPENDENCE),
            ("AssertionError: the call consumed random numbers", clauses.RNG_STREAM),
            ("AssertionError: the Python world after compiled call #1 differs from eager's: self._parameters['w']"
             ".grad: tensor of shape (3,) (torch.float32) requires_grad=False, eager nothing", clauses.PYTHON_WORLD),
            ("AssertionError: test leaked global state (now restored): torch.is_grad_enabled(): True -> False",
             clauses.STATE_AFTER),
            ("AssertionError: generated program disagrees with eager: output[2]: dtype differs from eager",
             clauses.DTYPE),
            ("AssertionError: the backend ran part of its graphs eagerly: 3 of 4 ops [max 0.2]", clauses.RUNS_ITSELF),
            ("OpCheckFailure: float32: sin on subnormal values: output[0]: subnormal values flushed to zero at 3 "
             "of 4 positions (eager keeps them)", clauses.SUBNORMALS),
            ("OpCheckFailure: int8: clamp on small values: outputs differ between eager and the compiled call",
             clauses.VALUE_DOMAINS),
            ("OpCheckFailure: float32: sum on negative zero values: output[0]: the sign of zero differs from eager",
             clauses.VALUE_DOMAINS),
        ]:
            with self.subTest(reason=reason):
                test = _result(OUTPUT_TEST, reason)
                self.assertEqual(clauses.of_result(test.scenario, "FAIL", problems.signature(reason)), clause)

    def test_a_plain_value_difference_is_charged_to_what_its_test_was_written_for(self):
        reason = problems.signature("AssertionError: output: values differ from eager")
        self.assertEqual(clauses.of_result(OUTPUT_TEST, "FAIL", reason), clauses.VALUES)
        self.assertEqual(clauses.of_result("test_backend_contract.OutputContractTests.test_layouts_1_transposed",
                                           "FAIL", reason), clauses.NON_CONTIGUOUS)
        self.assertEqual(clauses.of_result("test_aot_autograd.InputMutationTests.test_x_0_add", "FAIL", reason),
                         clauses.MUTATIONS_APPLIED)

    def test_errors_crashes_and_hangs_break_running_and_stale_expectations_are_no_clause_of_the_backend(self):
        self.assertEqual(clauses.of_result(GRADIENT_TEST, "ERROR", "RuntimeError: unsupported op aten.foo"),
                         clauses.RUNS)
        self.assertEqual(clauses.of_result(GRADIENT_TEST, "CRASH", "worker gw# died"), clauses.RUNS)
        self.assertEqual(clauses.of_result(GRADIENT_TEST, "TIMEOUT", "stopped by the # s time limit"), clauses.RUNS)
        # The error autograd raises on an output without history is that clause's, not "runs".
        self.assertEqual(clauses.of_result(GRADIENT_TEST, "ERROR", problems.signature(
            "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn")),
            clauses.AUTOGRAD_METADATA)
        self.assertEqual(clauses.of_result(GRADIENT_TEST, "XPASS", "passed, but expected to fail"),
                         clauses.STALE_EXPECTATIONS)

    def test_backend_independent_families_are_torchs_and_unknown_ones_are_a_finding(self):
        self.assertEqual(clauses.of_result("test_tracing_transforms.ExportSignatureTests.test_inference_signature",
                                           "FAIL", "AssertionError: output: dtype differs from eager"),
                         clauses.TORCH_ITSELF)
        self.assertEqual(clauses.of_result("my_scenarios.MyTests.test_x", "FAIL", "AssertionError: 1 != 2"),
                         clauses.NO_CLAUSE)

    def test_unittest_keeps_the_checks_own_message_in_the_one_line_reason(self):
        check = "outputs: requires_grad differs from eager"
        for expected, actual in [([False, False], [True, False]), ([False] * 4, [True, False, False, False])]:
            try:
                unittest.TestCase().assertEqual(expected, actual, check)
            except AssertionError as error:
                reason = one_line(error)
            self.assertEqual(reason, f"AssertionError: Lists differ: {expected} != {actual} : {check}")
            self.assertEqual(problems.signature(reason), "AssertionError: output: requires_grad differs from eager")
        # A message whose first line already holds the check's message keeps it once.
        self.assertEqual(one_line(AssertionError(f"program disagrees: {check}\n\nprogram\n1 != 2 : {check}")),
                         f"AssertionError: program disagrees: {check}")


# How a backend whose outputs never carry autograd history fails the default run (OpenVINO
# 2026.4 with torch 2.13.0): four symptoms of one cause, in four checks.
HISTORY_LOST = [
    ("test_aot_autograd.LSTMTests.test_lstm_grad_enabled_input_requires_grad",
     "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn", "ERROR"),
    (GRADIENT_TEST, "AssertionError: output[0]: requires_grad differs from eager", "FAIL"),
    ("test_aot_autograd.DonatedBufferTests.test_x", "AssertionError: grad of input 0: presence differs", "FAIL"),
    ("test_tracing_transforms.JointGraphGradientTests.test_non_differentiable_outputs_get_no_tangent",
     "AssertionError: Lists differ: [False, False, False, False] != [True, False, False, False] : "
     "outputs: requires_grad differs from eager", "FAIL"),
]


class ClauseGroupingTests(unittest.TestCase):
    def results(self) -> RunResults:
        tests = [_result(scenario, reason, outcome) for scenario, reason, outcome in HISTORY_LOST]
        tests += [_result(f"test_python_autograd.PythonAutogradTests.test_{index}",
                          "AssertionError: output: values differ from eager", graphs=2) for index in range(3)]
        tests.append(_result("test_aot_autograd.LSTMTests.test_y", "NotImplementedError: aten.lstm", "ERROR",
                             graphs=5))
        tests.append(_result(OUTPUT_TEST, "", "PASS"))
        problems.assign(tests)
        return RunResults(run={"backends": [{"name": OV}], "duration_s": 1.0}, tests=tests)

    def test_one_cause_four_checks_one_clause(self):
        grouped = problems.by_clause(problems.group(self.results().tests))
        # output[0]'s and the outputs' requires_grad are one check, so one problem.
        self.assertEqual([(clause.name, len(clause.problems), clause.tests) for clause in grouped], [
            (clauses.AUTOGRAD_METADATA, 3, 4), (clauses.VALUES, 1, 3), (clauses.RUNS, 1, 1)])

    def test_a_problem_has_one_clause_the_one_most_of_its_tests_give(self):
        signature = problems.signature("AssertionError: output: values differ from eager")
        scenarios = [OUTPUT_TEST, "test_backend_contract.OutputContractTests.test_layouts_1_transposed",
                     "test_backend_contract.OutputContractTests.test_channels_last"]
        self.assertEqual(clauses.of_problem(scenarios, "FAIL", signature), clauses.NON_CONTIGUOUS)
        self.assertEqual(clauses.of_problem(scenarios[:2], "FAIL", signature), clauses.VALUES)  # a tie: CLAUSES' order

    def test_results_json_carries_each_results_clause(self):
        results = self.results()
        by_id = {test.scenario: test for test in results.tests}
        self.assertEqual(by_id[GRADIENT_TEST].clause, clauses.AUTOGRAD_METADATA)
        self.assertEqual(by_id[OUTPUT_TEST].clause, None)  # it passed
        self.assertIn('"clause": "output requires_grad and grad_fn"', results.dumps())

    def test_console_and_summary_lead_with_clauses_simplest_problem_first(self):
        results = self.results()
        text = console.summary(results)
        first_clause = text.index("by the clause of the backend contract")
        self.assertLess(first_clause, text.index("unexpected results ([n]"))
        self.assertRegex(text, r"output requires_grad and grad_fn\s+3 problems, 4 tests")
        block = text[text.index("\noutput requires_grad and grad_fn: 3 problems, 4 tests"):]
        # Simplest first: the one-graph tests tie; the fastest, then the id, decides.
        self.assertIn("[1] openvino:", block)
        summary = markdown.render(RunReport(results))
        self.assertIn("by the contract clause they break", summary)
        self.assertLess(summary.index("**output requires"), summary.index("**output values"))


if __name__ == "__main__":
    unittest.main()
