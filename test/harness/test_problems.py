"""Grouping unexpected results into problems, and how the reports show them."""

from __future__ import annotations

import unittest

from harness.report import console, problems
from harness.report.formats import html_report, junit, markdown
from harness.report.formats.format import RunReport
from harness.report.baseline import difference_between
from harness.report.results import RunResults
from test.harness.test_reports import result

# Its own seconds (test/harness/budgets.py): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10

MINE = "test.dynamo.m.{family}_mine.{test}"


def failure(test: str, reason: str, outcome: str = "FAIL", family: str = "F", **fields):
    return result(MINE.format(family=family, test=test), outcome, backend="mine", reason=reason, **fields)


class SignatureTests(unittest.TestCase):
    def test_indexes_numbers_shapes_and_operands_are_left_out(self):
        same = [
            "AssertionError: True != False : output[1]: requires_grad differs from eager",
            "AssertionError: True != False : output: requires_grad differs from eager",
            "AssertionError: False != True : outputs[0][2]: requires_grad differs from eager",
        ]
        self.assertEqual({problems.signature(reason) for reason in same},
                         {"AssertionError: output: requires_grad differs from eager"})
        self.assertEqual(problems.signature("AssertionError: output for [torch.Size([2, 3]), 1, 0.5]: values differ"),
                         "AssertionError: output: values differ")
        self.assertEqual(problems.signature("worker gw3 died: SIGSEGV at 0x7f00 after 1.5 s"),
                         "worker gw# died: SIGSEGV at # after # s")

    def test_a_reason_cut_at_its_length_is_one_signature_whatever_its_numbers_took(self):
        # OpenVINO, two runs: "s7" and "s96" before the cut left a clause cut one letter apart.
        cut = {problems.signature(f"OpCheckFailure: conv2d raised for symbol {symbol}; einsum differs; "
                                  f"{'nn.functional'[:length]}…") for symbol, length in (("s7", 8), ("s96", 7))}
        self.assertEqual(cut, {"OpCheckFailure: conv2d raised for symbol s#; einsum differs"})

    def test_generated_modules_are_one_place_under_any_cache(self):
        keys = {problems.key(failure("test_a", "TypeError: expected Tensor()", "ERROR",
                                     where=f"call ({cache}/{hash_[:2]}/c{hash_}.py:402)"))
                for cache, hash_ in (("/tmp/torchinductor_root", "i" * 50), ("/home/me/.cache/ind", "p" * 50))}
        self.assertEqual(len(keys), 1, keys)

    def test_names_torch_generates_are_left_out(self):
        # Seen on real backends (torch 2.13.0): one cause, as many reasons as symbols or shapes.
        symbols = {problems.signature(f"AssertionError: sources must not be empty for symbol s{n}") for n in (7, 57, 99)}
        self.assertEqual(symbols, {"AssertionError: sources must not be empty for symbol s#"})
        fakes = {problems.signature("RuntimeError: Please convert all Tensors to FakeTensors first. Found in "
                                    f"aten.where.self(FakeTensor(..., size={size}), tensor(...))")
                 for size in ("(2, 1)", "(4,)", "(3, 3, 2)", "()")}
        self.assertEqual(len(fakes), 1, fakes)
        nodes = {problems.signature(f"UnsupportedDtype: no float64 kernels (placeholder {name})")
                 for name in ("arg2_1", "arg0_1", "primals_3")}
        self.assertEqual(len(nodes), 2, "an FX placeholder and a primal are different things")
        self.assertEqual(problems.signature("the backend's compiler raised RuntimeError: JIT compilation failed."),
                         problems.signature("RuntimeError: JIT compilation failed."))
        self.assertNotEqual(problems.signature("RuntimeError: no kernel for float16"),
                            problems.signature("RuntimeError: no kernel for float32"),
                            "dtype names keep their digits")

    def test_different_checks_and_operators_stay_apart(self):
        reasons = ["AssertionError: output: values differ from eager",
                   "AssertionError: input after the call: values differ from eager",
                   "AssertionError: grad of input 0: values differ from eager",
                   "the backend's compiler raised NotImplementedError: aten::bitwise_xor.Tensor is not supported",
                   "the backend's compiler raised NotImplementedError: aten::erfinv.default is not supported"]
        self.assertEqual(len({problems.signature(reason) for reason in reasons}), len(reasons))


class GroupTests(unittest.TestCase):
    def setUp(self):
        self.tests = [
            failure("test_a", "AssertionError: output[0]: values differ from eager", duration_s=3.0,
                    metrics={"frames": 2, "graphs": 2}),
            failure("test_b", "AssertionError: output: values differ from eager", duration_s=9.0,
                    metrics={"frames": 1, "graphs": 1}),
            failure("test_c", "RuntimeError: boom 3", "ERROR", where="run (mine/runtime.py:10)"),
            failure("test_d", "RuntimeError: boom 4", "ERROR", where="run (mine/runtime.py:12)"),
            failure("test_e", "RuntimeError: boom 4", "ERROR", where="compile (mine/compiler.py:3)"),
            result(MINE.format(family="F", test="test_f"), "PASS", backend="mine"),
            result("test.dynamo.m.F_eager.test_a", "FAIL", reason="AssertionError: output: values differ from eager"),
        ]

    def test_same_backend_outcome_check_and_raising_function(self):
        found = problems.group(self.tests)
        members = sorted(sorted(test.id.rsplit(".", 1)[1] + "@" + test.backend for test in problem.tests)
                         for problem in found)
        self.assertEqual(members, [["test_a@eager"], ["test_a@mine", "test_b@mine"], ["test_c@mine", "test_d@mine"],
                                   ["test_e@mine"]])

    def test_representative_is_the_simplest_test(self):
        values = next(problem for problem in problems.group(self.tests) if problem.outcome == "FAIL" and len(problem.tests) == 2)
        self.assertEqual(values.representative.id, MINE.format(family="F", test="test_b"))

    def test_ids_are_stable_and_readable(self):
        first = {problem.id for problem in problems.group(self.tests)}
        again = problems.group([failure("test_z", "AssertionError: output[3]: values differ from eager")])
        self.assertIn(again[0].id, first)
        self.assertRegex(again[0].id, r"^mine-fail-output-values-differ-from-eager-[0-9a-f]{6}$")

    def test_reports_open_with_the_problems(self):
        results = RunResults(run={"backends": [{"name": "mine", "spec": "pkg:mine"}]}, tests=self.tests)
        problems.assign(results.tests)
        self.assertEqual(results.tests[0].problem, results.tests[1].problem)
        self.assertIsNone(results.tests[5].problem)
        text = console.summary(results)
        self.assertIn("4 problems in 6 unexpected results, by the clause", text)
        self.assertIn("] mine: FAIL AssertionError: output: values differ from eager\n"
                      "      2 tests; simplest: test.dynamo.m.F_mine.test_b\n", text)
        self.assertIn("] mine: ERROR RuntimeError: boom 3\n      2 tests; simplest: test.dynamo.m.F_mine.test_c\n"
                      "      in run (mine/runtime.py)\n", text)
        page = html_report.render(RunReport(results))
        self.assertLess(page.index("4 problems in 6 unexpected results"), page.index("<table"))
        self.assertIn("### 4 problems in 6 unexpected results", markdown.render(RunReport(results)))

    def test_baseline_names_new_and_fixed_problems(self):
        old = RunResults(run={}, tests=self.tests[:2] + self.tests[4:5])
        new = RunResults(run={}, tests=self.tests[:4])
        difference = difference_between(old, new)
        self.assertEqual([problem.signature for problem in difference.new_problems], ["RuntimeError: boom #"])
        self.assertEqual([problem.where for problem in difference.fixed_problems], ["compile (mine/compiler.py)"])
        self.assertIn("new problems: 1", difference.render("old.json"))


class CollateralTests(unittest.TestCase):
    def setUp(self):
        culprit = MINE.format(family="F", test="test_float64")
        self.results = RunResults(run={"backends": [{"name": "mine", "spec": "pkg:mine"}]}, tests=[
            failure("test_float64", "RuntimeError: float64 is not supported", "ERROR"),
            failure("test_after_1", f"ERROR only after {culprit} failed earlier in its worker; passes alone",
                    "COLLATERAL", after=culprit, rerun="alone"),
            failure("test_after_2", "AssertionError: output: values differ from eager", after=culprit, rerun="alone"),
        ])

    def test_collateral_is_counted_apart_and_not_unexpected(self):
        summary = self.results.summary()
        self.assertEqual((summary["unexpected"], summary["COLLATERAL"]), (2, 1))
        self.assertEqual(self.results.left_broken(), {self.results.tests[0].id: (2, 1)})
        text = console.summary(self.results)
        self.assertIn("left its worker broken: after it, 2 later tests failed in the same worker; 1 of them pass alone",
                      text)
        self.assertTrue(text.splitlines()[-1].startswith("3 tests, 2 unexpected, 1 collateral"))

    def test_junit_reports_collateral_as_skipped_with_its_type(self):
        import xml.etree.ElementTree as ET

        suite = ET.fromstring(junit.render(RunReport(self.results)).encode()).find("testsuite")
        self.assertEqual((suite.get("errors"), suite.get("failures"), suite.get("skipped")), ("1", "1", "1"))
        skipped = [case.find("skipped") for case in suite.iter("testcase") if case.find("skipped") is not None]
        self.assertEqual(skipped[0].get("type"), "COLLATERAL")


if __name__ == "__main__":
    unittest.main()
