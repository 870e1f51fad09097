"""The expectations data: validation with file:line errors, and matching."""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
import unittest
from pathlib import Path
from unittest import mock

from packaging.version import Version

from harness.testcase import expectations
from harness.testcase.expectations import (Expectation, ExpectationError, candidates, decide, parse,
                                           parse_value_differences)

# Its own seconds (test/harness/budgets.py): 0 s measured 2026-11-29.
TIME_BUDGET_S = 10

FILE = "exp.toml"

VALID = textwrap.dedent(
    """\
    # a comment
    [[expect]]
    test = "test_aot_autograd.LSTMTests.*"
    torch = ">=2.9,<2.14"
    status = "xfail"
    reason = "rnn under grad"

    [[expect]]
    test = "test_python_autograd.*"
    backend = "inductor"
    aot_autograd = true
    status = "skip"
    reason = "slow"
    """
)


def _entry(**fields) -> str:
    body = {"test": '"m.F.test_x"', "status": '"xfail"', "reason": '"because"'}
    body.update(fields)
    lines = [f"{key} = {value}" for key, value in body.items() if value is not None]
    return "\n".join(["# header comment", "", "[[expect]]", *lines]) + "\n"


class ParseTests(unittest.TestCase):
    def assertParseError(self, text: str, line: int, pattern: str) -> None:
        with self.assertRaises(ExpectationError) as caught:
            parse(text, FILE)
        message = str(caught.exception)
        self.assertTrue(message.startswith(f"{FILE}:{line}: "), message)
        self.assertRegex(message, pattern)
        self.assertNotIn("\n", message)

    def test_valid(self):
        first, second = parse(VALID, FILE)
        self.assertEqual(
            first,
            Expectation(test="test_aot_autograd.LSTMTests.*", status="xfail", reason="rnn under grad",
                        torch=">=2.9,<2.14", source=f"{FILE}:2"),
        )
        self.assertEqual((second.pattern("backend"), second.aot_autograd, second.status), ("inductor", True, "skip"))
        self.assertEqual(second.source, f"{FILE}:8")

    def test_defaults(self):
        (entry,) = parse(_entry(), FILE)
        self.assertEqual((entry.pattern("backend"), entry.torch, entry.aot_autograd), ("*", "", None))

    def test_empty_file(self):
        self.assertEqual(parse("# nothing yet\n", FILE), [])

    def test_bad_status(self):
        self.assertParseError(_entry(status='"xpass"'), 5, r"status 'xpass' is not one of xfail, skip")

    def test_unknown_key(self):
        self.assertParseError(_entry(reasn='"typo"'), 7, r"unknown key 'reasn'; allowed: test, backend")

    def test_missing_reason(self):
        self.assertParseError(_entry(reason=None), 3, r"missing 'reason'")

    def test_empty_reason(self):
        self.assertParseError(_entry(reason='"  "'), 6, r"reason is empty")

    def test_bad_torch_specifier(self):
        self.assertParseError(_entry(torch='"2.13+"'), 7, r"torch '2\.13\+' is not a version specifier")

    def test_wrong_type(self):
        self.assertParseError(_entry(aot_autograd='"yes"'), 7, r"'aot_autograd' must be a bool, not str")

    def test_number_for_a_string(self):
        self.assertParseError(_entry(torch="2.13"), 7, r"'torch' must be a str, not float")

    def test_error_in_a_later_entry_names_its_line(self):
        text = VALID + "\n" + _entry(status='"flaky"')
        self.assertParseError(text, 19, r"status 'flaky'")

    def test_invalid_toml(self):
        self.assertParseError('[[expect]]\ntest = "a"\nstatus = xfail\n', 3, r"not valid TOML")

    def test_unknown_table(self):
        self.assertParseError('[expected]\ntest = "a"\n', 1, r"unknown table\(s\) \['expected'\]")

    def test_entry_that_is_not_a_table(self):
        self.assertParseError('expect = ["m.F.test_x"]\n', 1, r"must be a table")


class ValueDifferenceTests(unittest.TestCase):
    def test_an_entry_accepts_its_op_and_domain_and_defaults_to_every_test(self):
        entry, = parse_value_differences(
            '[[value_difference]]\nbackend = "mine"\ndomain = "sub*"\nreason = "we flush them"\n', FILE)
        self.assertEqual((entry.test, entry.status, entry.pattern("backend"), entry.source),
                         ("*", "accept", "mine", f"{FILE}:1"))
        self.assertTrue(entry.accepts("erf", "subnormal"))
        self.assertFalse(entry.accepts("erf", "negative zero"))

    def test_mistakes_are_one_line_with_their_place(self):
        for text, pattern in (('[[value_difference]]\nop = "sum"\n', r"^x\.toml:1: missing 'reason'"),
                              ('[[value_difference]]\nstatus = "xfail"\nreason = "r"\n',
                               r"^x\.toml:2: unknown key 'status'"),
                              ('[[value_difference]]\nreason = " "\n', r"^x\.toml:2: reason is empty; say why the "
                                                                        r"difference is acceptable")):
            with self.subTest(text=text), self.assertRaisesRegex(ExpectationError, pattern):
                parse_value_differences(text, "x.toml")


class MatchTests(unittest.TestCase):
    V213 = Version("2.13.0")

    def entry(self, **fields) -> Expectation:
        fields.setdefault("test", "test_mod.Family.test_*")
        fields.setdefault("reason", "r")
        return Expectation.of(status="xfail", **fields)

    def test_test_glob(self):
        entry = self.entry()
        self.assertTrue(entry.applies_to("test_mod.Family.test_one", self.V213, {"backend": "eager"}))
        self.assertFalse(entry.applies_to("test_mod.Other.test_one", self.V213, {"backend": "eager"}))
        # Case matters: ids are case-sensitive everywhere else too.
        self.assertFalse(entry.applies_to("test_mod.family.test_one", self.V213, {"backend": "eager"}))

    def test_backend_glob(self):
        entry = self.entry(backend="aot_*")
        self.assertTrue(entry.applies_to("test_mod.Family.test_one", self.V213, {"backend": "aot_eager"}))
        self.assertFalse(entry.applies_to("test_mod.Family.test_one", self.V213, {"backend": "inductor"}))
        self.assertFalse(entry.applies_to("test_mod.Family.test_one", self.V213, {"backend": None}))
        self.assertTrue(self.entry().applies_to("test_mod.Family.test_one", self.V213, {"backend": None}))

    def test_torch_specifier(self):
        entry = self.entry(torch=">=2.9,<2.14")
        self.assertTrue(entry.applies_to("test_mod.Family.test_one", self.V213, {"backend": "eager"}))
        self.assertFalse(entry.applies_to("test_mod.Family.test_one", Version("2.14.1"), {"backend": "eager"}))
        # Nightlies are pre-releases and must still match a plain range.
        self.assertTrue(entry.applies_to("test_mod.Family.test_one", Version("2.13.0.dev20250101"), {"backend": "eager"}))

    def test_onednn_bfloat16_condition(self):
        entry = self.entry(onednn_bf16=False)
        for supported in (False, True):
            with mock.patch("harness.compat.onednn_has_bfloat16", return_value=supported):
                self.assertEqual(entry.applies_to("test_mod.Family.test_one", self.V213, {"backend": "eager"}),
                                 not supported)

    def test_cpu_vector_isa_condition(self):
        # The amax gradient's NaN from inductor shows only in AVX2 code (2026-12-03).
        entry = self.entry(cpu_vec_isa="avx2")
        for isa, applies in (("avx2", True), ("avx512", False), ("none", False)):
            with mock.patch("harness.compat.cpu_vec_isa", return_value=isa):
                self.assertEqual(entry.applies_to("test_mod.Family.test_one", self.V213, {"backend": "eager"}), applies)

    def test_candidates_keep_file_order(self):
        entries = [self.entry(backend="inductor"), self.entry(reason="second"), self.entry(reason="third")]
        found = candidates("test_mod.Family.test_one", self.V213, {"backend": "eager"}, entries)
        self.assertEqual([e.reason for e in found], ["second", "third"])

    def test_decide_probes_only_when_an_entry_needs_it(self):
        probe = mock.Mock(return_value=True)
        plain = self.entry(reason="plain")
        self.assertIs(decide([plain, self.entry(aot_autograd=True)], probe), plain)
        probe.assert_not_called()

    def test_decide_on_aot_autograd(self):
        only_aot = self.entry(aot_autograd=True, reason="aot")
        only_other = self.entry(aot_autograd=False, reason="not aot")
        self.assertIs(decide([only_aot, only_other], lambda: True), only_aot)
        self.assertIs(decide([only_aot, only_other], lambda: False), only_other)
        self.assertIsNone(decide([only_aot], lambda: False))
        self.assertIsNone(decide([], lambda: True))


class LoadTests(unittest.TestCase):
    def test_bundled_file_loads(self):
        entries = expectations.load(expectations.DEFAULT_FILE)
        for entry in entries:
            self.assertTrue(entry.source.startswith(str(expectations.DEFAULT_FILE)), entry.source)

    def test_environment_names_the_projects_file_read_over_the_bundled_one(self):
        folder = Path(tempfile.mkdtemp(prefix="dynamo_suite_expect_"))
        self.addCleanup(shutil.rmtree, folder, True)
        path = folder / "mine.toml"
        path.write_text(VALID, encoding="utf-8")
        with mock.patch.dict(os.environ, {expectations.EXPECTATIONS_ENV: str(path)}):
            entries = expectations.load()
        self.assertEqual(entries[0].source, f"{path}:2")
        self.assertEqual(entries[2:], expectations.load(expectations.DEFAULT_FILE))

    def test_missing_file(self):
        with self.assertRaisesRegex(ExpectationError, r"absent\.toml:0: cannot read expectations"):
            expectations.load(Path(tempfile.gettempdir()) / "dynamo_suite_absent.toml")


if __name__ == "__main__":
    unittest.main()


class ShippedExpectationsTests(unittest.TestCase):
    def test_quick_sweep_ops_have_no_entries(self):
        # The tiers share test ids: an op listed for the full tier and also in the quick tier
        # could pass its two quick samples and XPASS.
        from harness.axes.backends import DEFAULT_BACKENDS
        from test.dynamo.test_op_sweep import QUICK_TIER

        entries = expectations.load(expectations.DEFAULT_FILE)
        for op in (op for ops in QUICK_TIER.values() for op in ops):
            key = "test_op_sweep.OpSweepTests.test_op_" + op.replace(".", "_")
            for backend in DEFAULT_BACKENDS:
                for version in ("2.9.1", "2.13.0", "2.14.1"):
                    with self.subTest(op=op, backend=backend, torch=version):
                        self.assertEqual(candidates(key, Version(version), {"backend": backend}, entries), [])
