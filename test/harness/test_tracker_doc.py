"""docs/tracker.md and its source, docs/tracker/classes.toml, against the suite: the page is what
scripts/tracker_doc.py writes, each issue of the sample is in one class, each carrying test
exists, and each xfail entry that shows an open issue of the sample is catalogued under it.
Test ids are checked by parsing files (test/dynamo, state_changes.py, found_programs.toml,
model_zoo.py, torch's OpInfo sources) without importing them: importing test/dynamo takes seconds."""

from __future__ import annotations

import ast
import collections
import importlib.util
import json
import re
import subprocess
import sys
import tempfile
import unittest
import unittest.mock
from functools import cache
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

# Its own seconds (test/harness/budgets.py): 0.3 s measured 2026-12-07.
TIME_BUDGET_S = 5

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "tracker_doc.py"
DYNAMO = ROOT / "test" / "dynamo"

_spec = importlib.util.spec_from_file_location("tracker_doc", SCRIPT)
tracker_doc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tracker_doc)


@cache
def _methods(module: str) -> dict[str, dict[str, bool]]:
    """{class: {test method: whether parameterized}} of test/dynamo/<module>.py, read from its text."""
    classes: dict[str, dict[str, bool]] = {}
    cls, decorators = None, []
    for line in (DYNAMO / f"{module}.py").read_text().splitlines():
        if line and not line[0].isspace() and not line.startswith(("#", "@", ")", "]", "}")):
            match = re.match(r"class (\w+)\b", line)
            cls = match.group(1) if match else None  # any other top-level statement ends the class
            if cls:
                classes[cls] = {}
        elif line.startswith("    @"):
            decorators.append(line)
        elif match := re.match(r"    (?:async )?def (\w+)\(", line):
            if cls and match.group(1).startswith("test_"):
                classes[cls][match.group(1)] = any("parameterized" in d for d in decorators)
            decorators = []
    return classes


@cache
def _state_changes() -> set[str]:
    text = (DYNAMO / "state_changes.py").read_text()
    return set(re.findall(r"^@state_change\(.*?^def (\w+)\(", text, re.M | re.S))


@cache
def _found_programs() -> set[str]:
    return {p["name"] for p in tomllib.loads((DYNAMO / "found_programs.toml").read_text())["program"]}


@cache
def _models() -> set[str]:
    return set(re.findall(r"^    ModelSpec\(\"(\w+)\"", (DYNAMO / "model_zoo.py").read_text(), re.M))


@cache
def _seed_budgets() -> dict[str, int]:
    """The most seeds each generated family gets (its nightly budget)."""
    text = (DYNAMO / "test_generated_programs.py").read_text()
    number = {name: int(value) for name, value in re.findall(r"^(NIGHTLY_\w*BUDGET) = (\d+)", text, re.M)}
    return {"GeneratedProgramTests": number["NIGHTLY_BUDGET"],
            "GeneratedComputeTests": number["NIGHTLY_COMPUTE_BUDGET"]}


@cache
def _sweep_ops() -> tuple[set[str], set[str]]:
    """Labels test_op_<label> of the op sweep: its quick tier's ops and torch's OpInfos (with
    their literal variants), and the OpInfo names whose variants are computed (index_reduce's)."""
    source = (DYNAMO / "test_op_sweep.py").read_text()
    quick = ast.literal_eval(re.search(r"^QUICK_TIER = (\{.*?^\})", source, re.M | re.S).group(1))
    exact = {name for names in quick.values() for name in names}
    open_variants = set()
    internal = Path(importlib.util.find_spec("torch").origin).parent / "testing" / "_internal"  # not imported
    for path in [internal / "common_methods_invocations.py", *(internal / "opinfo" / "definitions").glob("*.py")]:
        text = path.read_text()
        starts = [(m.start(), m.group(1)) for m in re.finditer(r"\b\w*Info\(\s*['\"]([\w.]+)['\"]", text)]
        for (start, name), (end, _) in zip(starts, starts[1:] + [(len(text), "")]):
            variant = re.search(r"variant_test_name\s*=\s*(['\"]([^'\"]*)['\"]|\w+)", text[start:end])
            if variant is None:
                exact.add(name)
            elif variant.group(2) is not None:
                exact.add(f"{name}_{variant.group(2)}" if variant.group(2) else name)
            else:
                open_variants.add(name)
    label = lambda name: re.sub(r"\W", "_", name)  # noqa: E731 (the sweep's op_test_name_of)
    return {label(n) for n in exact}, {label(n) for n in open_variants}


@cache
def _measured_sweep_tests() -> set[str]:
    """The op sweep's generated tests (values, reference inputs) as test/durations.json last measured them."""
    keys = json.loads((ROOT / "test" / "durations.json").read_text())
    return {key.rsplit(".", 1)[1] for key in keys if ".test_op_sweep.OpSweepTests_" in key}


def test_exists(test_id: str) -> bool:
    module, cls, *rest = test_id.split(".")
    if not (DYNAMO / f"{module}.py").exists() or cls not in _methods(module) or len(rest) > 1:
        return False
    if not rest:  # a generated family
        return True
    name, methods = rest[0], _methods(module)[cls]
    if name in methods or any(param and name.startswith(m + "_") for m, param in methods.items()):
        return True
    if (module, cls) == ("test_state_changes", "StateChangeTests"):
        return name.removeprefix("test_") in _state_changes()
    if (module, cls) == ("test_generated_programs", "FoundProgramTests"):
        return name.removeprefix("test_") in _found_programs()
    if module == "test_generated_programs" and (seed := re.fullmatch(r"test_seed_(\d{4})", name)):
        return int(seed.group(1)) < _seed_budgets().get(cls, 0)
    if (module, cls) == ("test_models", "ModelTests") and (model := re.fullmatch(r"test_(\w+)_(eval|train)", name)):
        return model.group(1) in _models()
    if (module, cls) == ("test_op_sweep", "OpSweepTests"):
        if name.startswith("test_op_"):
            label = name.removeprefix("test_op_").removesuffix("_nan_and_inf")
            exact, open_variants = _sweep_ops()
            return label in exact or any(label.startswith(op + "_") for op in open_variants)
        return name in _measured_sweep_tests()
    return False


class TrackerDocTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.classes, cls.rows, cls.xfails, cls.evidence = tracker_doc.load()

    def test_page_is_what_the_script_writes(self):
        done = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr.strip())

    def test_check_says_stale_or_unreadable_in_one_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            stale, missing = Path(tmp) / "tracker.md", Path(tmp) / "missing.toml"
            stale.write_text("# an old page\n")
            for attr, path, code in (("OUT", stale, 1), ("CLASSES", missing, 2)):
                saved = getattr(tracker_doc, attr)
                setattr(tracker_doc, attr, path)
                try:
                    with unittest.mock.patch("sys.stderr") as stderr:
                        self.assertEqual(tracker_doc.main(["--check"]), code)
                finally:
                    setattr(tracker_doc, attr, saved)
                written = "".join(call.args[0] for call in stderr.write.call_args_list)
                self.assertEqual(written.count("\n"), 1, written)

    def test_citations_and_globs(self):
        self.assertEqual(tracker_doc.cited("x (pytorch#1, #2); fixed by #3"), [1, 2])
        self.assertEqual(tracker_doc.cited("pytorch/pytorch#4; fix proposed in pytorch#5; near pytorch#6"), [4])
        self.assertTrue(tracker_doc.names("m.C.test_f_[34]_*", "m.C.test_f"))
        self.assertTrue(tracker_doc.names("m.C.test_f*", "m.C.test_f"))
        self.assertFalse(tracker_doc.names("m.C.test_fx", "m.C.test_f"))
        self.assertFalse(tracker_doc.names("m.C.test_f_name", "m.C.test_f"))

    def test_the_id_check_rejects_what_is_not_there(self):
        for test_id in ("test_backend_contract.PythonSideEffectTests.test_no_such_test", "test_no_module.Tests.test_x",
                        "test_backend_contract.NoSuchTests", "test_state_changes.StateChangeTests.test_no_such_change",
                        "test_generated_programs.FoundProgramTests.test_no_such_program",
                        "test_generated_programs.GeneratedComputeTests.test_seed_9999",
                        "test_op_sweep.OpSweepTests.test_op_no_such_op", "test_models.ModelTests.test_no_model_eval"):
            self.assertFalse(test_exists(test_id), test_id)

    def test_each_issue_in_exactly_one_class(self):
        count = collections.Counter(n for c in self.classes for n in c["issues"])
        self.assertEqual(sorted(n for n, k in count.items() if k > 1), [], "issues in more than one class")
        self.assertEqual(sorted(set(self.rows) - set(count)), [], "issues of the sample in no class")
        self.assertEqual(sorted(set(count) - set(self.rows)), [], "issues not in the sample")

    def test_class_facts_agree_with_the_sample(self):
        order = list(tracker_doc.LAYER_WORD)
        for c in self.classes:
            rows = [self.rows[n] for n in c["issues"]]
            with self.subTest(c["id"]):
                self.assertEqual(sorted(c["open"]), sorted(r["number"] for r in rows if r["state"] == "open"))
                self.assertEqual(c["layer"], sorted({r["layer"] for r in rows}, key=order.index))
                self.assertEqual(c["cpu_repro"], any(r["cpu_repro"] is True for r in rows))

    def test_each_carrying_test_exists(self):
        missing = [(c["id"], t) for c in self.classes for t in c["carried_by"] if not test_exists(t)]
        self.assertEqual(missing, [], "carried_by names tests that test/dynamo does not have")

    def test_each_class_is_shown_failing(self):
        """Every class has a carrying test that something shows failing when the class is present:
        a mutant it kills, a proof's faulty backend naming it, or a torch release it fails on."""
        unshown = [c["id"] for c in self.classes if self.evidence.cell(c, self.xfails) == "none"]
        self.assertEqual(unshown, [], "classes whose carrying tests nothing shows failing")

    def test_evidence_reads_kills_and_proofs(self):
        evidence = tracker_doc.Evidence({"m.F.test_a_0_x": ["k1"], "m.F.test_ab": ["k2"], "m.G.test_b": ["k3"]},
                                        {"test_p": "CATCHES = ('m.G.test_b',)"})
        self.assertEqual(evidence.mutants("m.F.test_a"), {"k1"})  # a case, not another test sharing the prefix
        self.assertEqual(evidence.mutants("m.F"), {"k1", "k2"})  # a bare family: its tests
        self.assertEqual(evidence.naming("m.G.test_b"), ["test_p"])
        self.assertEqual(evidence.cell({"carried_by": ["m.H.test_c"]}, []), "none")

    def test_each_shown_open_issue_is_carried_by_its_class(self):
        class_of = {n: c for c in self.classes for n in c["issues"]}
        uncatalogued = []
        for entry in self.xfails:
            for n in tracker_doc.cited(entry["reason"]):
                carried = class_of[n]["carried_by"] if n in class_of else []  # in no class: the test above says so
                if self.rows.get(n, {}).get("state") == "open" and not any(
                        tracker_doc.names(entry["test"], t) for t in carried):
                    uncatalogued.append((entry["test"], n, class_of.get(n, {}).get("id")))
        self.assertEqual(uncatalogued, [], "xfail entries showing an open issue whose class does not carry the test")


if __name__ == "__main__":
    unittest.main()
