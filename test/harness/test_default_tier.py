"""The default tier chosen by what each test catches (harness/testcase/default_tier.py): the
greedy cover of kills, features and real backends' problems per second of a backend's time,
its budget, the cost of a backend without recordings, the kept mutants' killers; the runner
leaving the rest to the nightly tier (but what -k names); plain unittest skipping them with
the reason (but a module, class or test it was given by name); the script merging reports."""

from __future__ import annotations

import argparse
import json
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from harness import settings
from harness.run import selection
from harness.run.collection import TestInfo
from harness.testcase import default_tier

# Its own seconds (test/harness/budgets.py): 1 s measured 2026-12-02.
TIME_BUDGET_S = 10


def entry(kills=(), covers=(), shows=(), graphs=1, kernels=(), **seconds) -> dict:
    return {"kills": list(kills), "covers": list(covers), "shows": list(shows), "graphs": graphs, "seconds": seconds,
            "kernels": list(kernels)}


SCENARIOS = {
    # cheap, and kills two mutants
    "test_x.F.test_cheap": entry(["m1", "m2"], ["nan"], aot_eager=1.0, inductor=10.0),
    # kills the same and one more, for ten times the time
    "test_x.F.test_costly": entry(["m1", "m2", "m3"], ["nan"], aot_eager=10.0, inductor=12.0),
    # the only one covering channels-last
    "test_x.F.test_layout": entry([], ["channels-last"], aot_eager=0.5, inductor=30.0),
    # adds nothing
    "test_x.F.test_nothing_new": entry(["m1"], ["nan"], aot_eager=5.0, inductor=20.0),
    # a real backend's problem, only here; costly
    "test_x.F.test_shows": entry([], [], ["openvino: FAIL output values differ"], graphs=30, aot_eager=20.0),
}


def entries() -> dict[str, default_tier.Entry]:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "tier.json"
        path.write_text(json.dumps({"scenarios": SCENARIOS}))
        return default_tier.read(str(path))


class ChooseTests(unittest.TestCase):
    def setUp(self):
        # The cover's own rules, each element wanted once (redundancy has a test of its own), a
        # fifth of the cost.
        for name, value in (("REDUNDANCY", 1), ("SHARE", 0.2)):
            patcher = mock.patch.object(default_tier, name, value)
            patcher.start()
            self.addCleanup(patcher.stop)

    def test_redundancy_takes_a_second_test_of_each_kill_and_feature(self):
        with mock.patch.object(default_tier, "REDUNDANCY", 2):
            chosen = default_tier.choose(entries(), "aot_eager", budget=1e9)
        # It shows m1 and nan, as the cheap test does: a second way to meet them.
        self.assertIn("test_x.F.test_nothing_new", chosen)
        self.assertNotIn("test_x.F.test_nothing_new", default_tier.choose(entries(), "aot_eager", budget=1e9))

    def test_the_most_new_kills_and_features_per_second_first_until_nothing_is_new(self):
        chosen = default_tier.choose(entries(), "aot_eager", budget=1e9)
        self.assertEqual(set(chosen), {"test_x.F.test_shows", "test_x.F.test_cheap", "test_x.F.test_layout",
                                       "test_x.F.test_costly"})
        self.assertLess(chosen.index("test_x.F.test_cheap"), chosen.index("test_x.F.test_costly"))
        # A real backend's problem counts as a kill: costly, it comes last here.
        self.assertEqual(chosen[-1], "test_x.F.test_shows")

    def test_a_kernel_s_condition_no_chosen_test_meets_tells_two_tests_apart_once(self):
        # The same kill for the same time: only the conditions its kernels met tell them apart.
        kernels = ["where: zero-dim-operand", "addmm: inference-mode", "where", "addmm"]
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "tier.json"
            path.write_text(json.dumps({"scenarios": {
                "test_x.F.test_plain": entry(["k1"], aot_eager=1.0),
                "test_x.F.test_kernels": entry(["k1"], kernels=kernels, aot_eager=1.0),
                "test_x.F.test_same_kernels": entry(kernels=kernels, aot_eager=1.0)}}))
            scenarios = default_tier.read(str(path))
        self.assertEqual(default_tier.choose(scenarios, "aot_eager", budget=1e9), ["test_x.F.test_kernels"])
        # A kill is wanted from two tests; a kernel's condition from one.
        with mock.patch.object(default_tier, "REDUNDANCY", 2):
            self.assertEqual(default_tier.choose(scenarios, "aot_eager", budget=1e9),
                             ["test_x.F.test_kernels", "test_x.F.test_plain"])

    def test_a_real_backend_s_problem_is_kept_first_for_a_backend_without_recordings(self):
        chosen = default_tier.choose(entries(), "openvino")
        self.assertEqual(chosen[0], "test_x.F.test_shows")  # 20 s + 30 graphs: past a fifth, kept all the same
        # On top of the fifth, not out of it: the cover still takes the mutant only the costly test kills.
        self.assertIn("test_x.F.test_costly", chosen)

    def test_by_default_a_fifth_of_what_the_scenarios_cost(self):
        # aot_eager: 36.5 s in all, so 7.3 s: the cheap test and the layout test, not the 10 s one.
        self.assertEqual(default_tier.choose(entries(), "aot_eager"), ["test_x.F.test_cheap", "test_x.F.test_layout"])

    def test_past_the_budget_a_condition_the_cover_left_out_gets_its_cheapest_test(self):
        scenarios = {**entries(), "test_x.F.test_rare": default_tier.read(self._rare())["test_x.F.test_rare"]}
        self.assertIn("test_x.F.test_rare", default_tier.choose(scenarios, "aot_eager"))
        # --budget keeps to itself.
        self.assertNotIn("test_x.F.test_rare", default_tier.choose(scenarios, "aot_eager", budget=2.0))

    def test_each_kept_mutant_keeps_two_killers_past_the_budget(self):
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "tier.json"
            path.write_text(json.dumps({"kept_mutants": ["drops_guard__x__s0"], "scenarios": {
                **SCENARIOS, "test_x.F.test_guard": entry(["drops_guard__x__s0"], aot_eager=40.0),
                "test_x.F.test_guard_too": entry(["drops_guard__x__s0"], aot_eager=60.0),
                "test_x.F.test_guard_dear": entry(["drops_guard__x__s0"], aot_eager=90.0)}}))
            scenarios = default_tier.read(str(path))
        self.assertEqual(scenarios["test_x.F.test_guard"].kept_kills, {"drops_guard__x__s0"})
        with mock.patch.object(default_tier, "REDUNDANCY", 2):
            # The two cheapest killers, whatever they cost (the second past the budget).
            chosen = set(default_tier.choose(scenarios, "aot_eager"))
            self.assertEqual(chosen & {"test_x.F.test_guard", "test_x.F.test_guard_too", "test_x.F.test_guard_dear"},
                             {"test_x.F.test_guard", "test_x.F.test_guard_too"})
            # --budget keeps to itself.
            self.assertNotIn("test_x.F.test_guard", default_tier.choose(scenarios, "aot_eager", budget=2.0))

    def test_past_the_budget_every_operator_and_most_compile_stack_lines_of_the_pool(self):
        runs = {"test_x.F.test_stack": default_tier.encode_blocks({0, 1}),
                "test_x.F.test_cheap": default_tier.encode_blocks({1}),
                "test_x.F.test_few_lines": default_tier.encode_blocks({2})}
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "tier.json"
            path.write_text(json.dumps({"stack_lines": {"aot_eager": {"lines": 1010, "sizes": [900, 50, 60],
                                                                      "scenarios": runs}}, "scenarios": {
                **SCENARIOS, "test_x.F.test_rare_op": entry(kernels=["cube", "cube: nan"], aot_eager=40.0),
                "test_x.F.test_stack": entry(aot_eager=40.0), "test_x.F.test_few_lines": entry(aot_eager=39.0)}}))
            scenarios = default_tier.read(str(path))
        self.assertEqual(scenarios["test_x.F.test_stack"].blocks("inductor"), ((0, 900), (1, 50)))  # aot_eager's
        chosen = default_tier.choose(scenarios, "aot_eager")
        # The only caller of an operator, whatever it costs; then lines until LINES_WANTED of them
        # (950 of 1010: the 60 more are not needed).
        self.assertLessEqual({"test_x.F.test_rare_op", "test_x.F.test_stack"}, set(chosen))
        self.assertNotIn("test_x.F.test_few_lines", chosen)
        reached = default_tier.reach(scenarios, chosen, "inductor")
        self.assertEqual(reached, {"operators": [1, 1], "stack_lines": [950, 1010], "lines_from": "aot_eager"})
        self.assertNotIn("test_x.F.test_stack", default_tier.choose(scenarios, "aot_eager", budget=2.0))

    def test_a_backend_without_recordings_keeps_every_kernel_variant_of_the_pool(self):
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "tier.json"
            path.write_text(json.dumps({"scenarios": {
                **SCENARIOS, "test_x.F.test_gelu": entry(kernels=["gelu", "gelu: approximate=none"], aot_eager=0.1),
                "test_x.F.test_gelu_tanh": entry(kernels=["gelu", "gelu: approximate=tanh"], aot_eager=40.0)}}))
            scenarios = default_tier.read(str(path))
        self.assertEqual(scenarios["test_x.F.test_gelu_tanh"].variants(), {"gelu: approximate=tanh"})
        # Its kernels are its own: the variant only a costly test calls, whatever it costs.
        self.assertIn("test_x.F.test_gelu_tanh", default_tier.choose(scenarios, "openvino"))
        # eager, aot_eager and inductor: the operator is called, and the kills measure the rest.
        self.assertNotIn("test_x.F.test_gelu_tanh", default_tier.choose(scenarios, "aot_eager"))

    def test_a_test_whose_every_want_later_tests_bring_again_leaves(self):
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "tier.json"
            path.write_text(json.dumps({"scenarios": {
                **SCENARIOS, "test_x.F.test_op_x": entry(kernels=["x"], aot_eager=30.0),
                "test_x.F.test_ops_xyz": entry(kernels=["x", "y", "z"], aot_eager=100.0)}}))
            scenarios = default_tier.read(str(path))
        with mock.patch.object(default_tier, "_drop_redundant"):
            # Past the budget, the most operators per second: x alone, then y and z (and x again).
            self.assertLessEqual({"test_x.F.test_op_x", "test_x.F.test_ops_xyz"},
                                 set(default_tier.choose(scenarios, "aot_eager")))
        chosen = default_tier.choose(scenarios, "aot_eager")
        self.assertIn("test_x.F.test_ops_xyz", chosen)
        self.assertNotIn("test_x.F.test_op_x", chosen)
        # What only it shows keeps a test, however dear.
        self.assertIn("test_x.F.test_layout", chosen)

    def test_every_family_of_the_seed_modules_has_its_cheapest_test(self):
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "tier.json"
            path.write_text(json.dumps({"scenarios": {
                **SCENARIOS, "test_aot_autograd.LSTMTests.test_short": entry([], [], aot_eager=30.0),
                "test_aot_autograd.LSTMTests.test_long": entry([], [], aot_eager=90.0),
                "test_other.LSTMTests.test_short": entry([], [], aot_eager=30.0)}}))
            scenarios = default_tier.read(str(path))
        chosen = default_tier.choose(scenarios, "aot_eager")
        self.assertIn("test_aot_autograd.LSTMTests.test_short", chosen)
        self.assertNotIn("test_aot_autograd.LSTMTests.test_long", chosen)
        self.assertNotIn("test_other.LSTMTests.test_short", chosen)  # not a seed module
        self.assertNotIn("test_aot_autograd.LSTMTests.test_short", default_tier.choose(scenarios, "aot_eager", budget=2.0))

    def _rare(self) -> str:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        path = Path(directory.name) / "rare.json"
        path.write_text(json.dumps({"scenarios": {"test_x.F.test_rare": entry([], ["hooks"], aot_eager=50.0)}}))
        return str(path)

    def test_each_backend_by_its_own_costs(self):
        # On inductor the layout test is 30 s: still the only one covering channels-last.
        self.assertIn("test_x.F.test_layout", default_tier.choose(entries(), "inductor", budget=1e9))
        # Without recordings: aot_eager's seconds plus the graphs times the graph seconds.
        costs = entries()["test_x.F.test_cheap"]
        self.assertEqual(costs.cost("a new backend", 2.0), 1.0 + 2.0)
        self.assertEqual(costs.cost("inductor", 2.0), 10.0)

    def test_a_budget_keeps_the_most_per_second(self):
        chosen = default_tier.choose(entries(), "aot_eager", budget=2.0)
        self.assertEqual(chosen, ["test_x.F.test_cheap", "test_x.F.test_layout"])
        self.assertEqual(default_tier.choose(entries(), "aot_eager", budget=0.01), [])

    def test_a_file_that_cannot_be_read_is_one_line(self):
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "tier.json"
            path.write_text('{"tests": []}')
            with self.assertRaisesRegex(default_tier.TierDataError, r"not a default-tier file .*choose_default_tier"):
                default_tier.read(str(path))
        self.assertEqual(default_tier.read("/nowhere/tier.json"), {})


class RunTests(unittest.TestCase):
    def setUp(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        path = Path(directory.name) / "tier.json"
        path.write_text(json.dumps({"scenarios": SCENARIOS}))
        for patch in (mock.patch.object(default_tier, "DATA", path), mock.patch.object(default_tier, "REDUNDANCY", 1)):
            patch.start()
            self.addCleanup(patch.stop)

    def info(self, name: str, backend: str = "aot_eager") -> TestInfo:
        return TestInfo(id=f"test.dynamo.test_x.F_{backend}.{name}", nodeid=name, scenario=f"test_x.F.{name}",
                        backend=backend, backend_spec=backend)

    def chosen(self, patterns: list[str], tier: str = "default", **values: str) -> list[str]:
        tests = [self.info(name.rsplit(".", 1)[-1]) for name in SCENARIOS] + [self.info("test_new")]
        args = argparse.Namespace(patterns=patterns, durations=None, command="python run_tests.py")
        with settings.using(settings.Settings({settings.TIER: tier, **values})):
            return sorted(test.scenario.rsplit(".", 1)[-1] for test in selection.choose_tests(tests, args, None))

    def test_the_runner_leaves_the_rest_to_the_nightly_tier(self):
        self.assertEqual(self.chosen([]), ["test_cheap", "test_layout", "test_new"])
        self.assertEqual(self.chosen([], **{settings.BUDGET: "1000"}),
                         ["test_cheap", "test_costly", "test_layout", "test_new", "test_shows"])
        self.assertEqual(len(self.chosen([], tier="nightly")), 6)
        self.assertEqual(self.chosen([], **{settings.BUDGET: "2"}), ["test_cheap", "test_layout", "test_new"])

    def test_a_test_named_by_its_id_runs_whatever_its_tier(self):
        self.assertEqual(self.chosen(["test.dynamo.test_x.F_aot_eager.test_nothing_new"]), ["test_nothing_new"])

    def test_what_k_names_runs_whole(self):
        # The cover chooses for a whole-suite run only: -k F is every test of F.
        self.assertEqual(self.chosen(["F_aot_eager"]), ["test_cheap", "test_costly", "test_layout", "test_new",
                                                         "test_nothing_new", "test_shows"])
        self.assertEqual(self.chosen(["test_costly"]), ["test_costly"])

    def test_plain_unittest_skips_it_saying_how_to_run_it(self):
        from harness.testcase.base import DynamoTestCase

        class F(DynamoTestCase):
            def test_nothing_new(self):
                pass

            def test_new(self):
                pass

        F.__module__ = "test.dynamo.test_x"
        result = unittest.TestResult()
        with settings.using(settings.Settings({})):
            unittest.TestSuite([F("test_nothing_new"), F("test_new")]).run(result)
        self.assertEqual(len(result.skipped), 1, result.errors)
        self.assertRegex(result.skipped[0][1], r"^nightly tier \(what it catches .* for less\); run it with --tier "
                                               r"nightly \(under plain unittest: DYNAMO_SUITE_TIER=nightly\)")
        with settings.using(settings.Settings({settings.TESTS_CHOSEN: "1"})):  # what the runner's workers get
            result = unittest.TestResult()
            F("test_nothing_new").run(result)
        self.assertEqual(result.skipped, [])
        # Named to plain unittest, the module (or class, or test) runs whole.
        with settings.using(settings.Settings({})), \
                mock.patch("sys.argv", ["python -m unittest", "-v", "test.dynamo.test_x"]):
            result = unittest.TestResult()
            F("test_nothing_new").run(result)
        self.assertEqual(result.skipped, [])

    def test_what_plain_unittest_was_given_by_name(self):
        named = default_tier.named_on_the_command_line
        test = "test.dynamo.test_x.F_aot_eager.test_nothing_new"
        root = Path(default_tier.__file__).resolve().parents[2]
        for argv in (["python -m unittest", "test.dynamo.test_x"], ["python -m unittest", "test.dynamo.test_x.F_aot_eager"],
                     ["python -m unittest", "-k", "x", test], ["python -m unittest", "test/dynamo/test_x.py"],
                     [str(root / "test" / "dynamo" / "test_x.py")]):
            with self.subTest(argv=argv):
                self.assertTrue(named(test, argv))
        for argv in (["python -m unittest", "discover", "-s", "test"], ["python -m unittest", "test.dynamo.test_xy"],
                     ["python -m unittest", "test.dynamo.test_x.F_aot_eager.test_new"], ["run_tests.py", "-k", "x"],
                     ["python -m unittest", "-k", "test", "test.dynamo.test_y"],
                     [str(root / "run_tests.py")]):
            with self.subTest(argv=argv):
                self.assertFalse(named(test, argv))


if __name__ == "__main__":
    unittest.main()


class StackCoverageScriptTests(unittest.TestCase):
    """scripts/stack_coverage.py: lines run by the same scenarios are one block; a test that
    ends its worker is named, and its chunk runs again without it."""

    def setUp(self) -> None:
        import importlib.util

        path = Path(__file__).resolve().parents[2] / "scripts" / "stack_coverage.py"
        spec = importlib.util.spec_from_file_location("stack_coverage", path)
        self.script = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.script)

    def test_lines_run_by_the_same_scenarios_are_one_block(self):
        reached = {("torch/fx/a.py", 1): {"t.A.a", "t.A.b"}, ("torch/fx/a.py", 2): {"t.A.a", "t.A.b"},
                   ("torch/_dynamo/b.py", 7): {"t.A.b", "t.A.a"}, ("torch/_dynamo/b.py", 8): {"t.A.a"}}
        self.assertEqual(self.script.blocks(reached), {
            "lines": 4, "files": {"torch/_dynamo/b.py": 2, "torch/fx/a.py": 2},
            "blocks": [[3, ["t.A.a", "t.A.b"]], [1, ["t.A.a"]]]})

    def test_a_test_that_ends_its_worker_is_named_and_its_chunk_goes_on(self):
        import threading

        runs = []

        def run(command, input, **kwargs):  # noqa: A002 -- subprocess.run's own name
            ids = [json.loads(line)["id"] for line in input.decode().splitlines()]
            out = Path(command[command.index("--out") + 1])
            runs.append(ids)
            if "t.A.crashes" in ids:  # it ends the process after saying it started
                out.with_suffix(".progress").write_text("t.A.first\nt.A.crashes\n")
                return
            out.write_text(json.dumps({"done": ids, "outcomes": {}, "lines": {}}))

        results, crashed = [], []
        with tempfile.TemporaryDirectory() as work, mock.patch.object(self.script.subprocess, "run", run), \
                mock.patch("sys.stdout"):
            self.script._run_chunk("aot_eager", ["t.A.first", "t.A.crashes", "t.A.last"],
                                   {"t.A.first": 1.0, "t.A.crashes": 1.0, "t.A.last": 1.0}, Path(work), 0,
                                   results, crashed, threading.Lock())
        self.assertEqual(crashed, ["t.A.crashes"])
        self.assertEqual(runs, [["t.A.first", "t.A.crashes", "t.A.last"], ["t.A.first", "t.A.last"]])
        self.assertEqual([result["done"] for result in results], [["t.A.first", "t.A.last"]])


class ConsoleTests(unittest.TestCase):
    def test_blocks_are_kept_as_a_bitmap(self):
        for blocks in (set(), {0}, {7, 8, 2279}, set(range(0, 3000, 3))):
            self.assertEqual(default_tier.decode_blocks(default_tier.encode_blocks(blocks)), sorted(blocks))

    def test_the_console_says_what_each_default_tier_reaches_of_the_pool(self):
        from harness.report import console
        from harness.report.results import RunResults

        run = {"default_tier": {
            "aot_eager": {"scenarios": 10, "default": 3, "operators": [7, 7], "stack_lines": [91, 100],
                          "lines_from": "aot_eager"},
            "inductor": {"scenarios": 10, "default": 4, "operators": [6, 7], "stack_lines": [90, 100],
                         "lines_from": "aot_eager"}}}
        lines = console.tier_lines(RunResults(run=run, tests=[]))
        self.assertIn("aot_eager 3 of 10, inductor 4 of 10", lines[0])
        self.assertEqual(lines[1:], [
            "  aot_eager's default tier reaches 7 of 7 ATen operators and 91 % of 100 lines of the compile stack "
            "the nightly pool reaches",
            "  inductor's default tier reaches 6 of 7 ATen operators and 90 % of 100 lines of the compile stack "
            "(as measured on aot_eager) the nightly pool reaches"])


class ChooseScriptTests(unittest.TestCase):
    """scripts/choose_default_tier.py: the data from a nightly kill matrix, durations and real runs."""

    def setUp(self) -> None:
        import importlib.util

        path = Path(__file__).resolve().parents[2] / "scripts" / "choose_default_tier.py"
        spec = importlib.util.spec_from_file_location("choose_default_tier", path)
        self.script = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.script)
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.tmp = Path(directory.name)

    def write(self, name: str, data) -> Path:
        (self.tmp / name).write_text(json.dumps(data))
        return self.tmp / name

    def test_the_data_names_what_each_test_killed_covered_showed_and_costs(self):
        from harness.report.results import RunResults, TestResult

        score = self.write("score.json", {"tier": "nightly", "kills_per_mutant": 3,
                                          "score": {"killed": 2, "non_equivalent": 3, "ratio": 2 / 3}, "tests": [
            {"id": "test.dynamo.test_x.F_switch.test_a", "killed": ["m1", "m2"], "covers": ["nan", "nan@pointwise"],
             "kernels": ["where: nan", "where"], "graphs": 2, "seconds": 0.5},
            {"id": "test.dynamo.test_x.F_switch.test_b", "killed": [], "covers": [], "graphs": 1, "seconds": 0.2}]})
        durations = self.write("durations.json", {"test.dynamo.test_x.F_inductor.test_a": 9.0,
                                                  "test.dynamo.test_x.G.test_c": 3.0})
        real = self.tmp / "real"
        real.mkdir()
        failed = TestResult(id="test.dynamo.test_x.F_openvino.test_b", scenario="test_x.F.test_b", backend="openvino",
                            backend_spec="openvino", outcome="FAIL", reason="AssertionError: output: values differ",
                            stage="check")
        (real / "results.json").write_text(RunResults(run={}, tests=[failed]).dumps())
        pool = [("test.dynamo.test_x.F_aot_eager.test_a", "aot_eager"), ("test.dynamo.test_x.F_aot_eager.test_b",
                                                                          "aot_eager"),
                ("test.dynamo.test_x.F_aot_eager.test_new", "aot_eager"), ("test.dynamo.test_x.G.test_c", "-")]
        with mock.patch.object(self.script, "_pool", return_value=pool), \
                mock.patch("sys.stdout", new_callable=lambda: __import__("io").StringIO()):
            self.assertEqual(self.script.main([str(score), "--real-runs", str(real), "--durations", str(durations),
                                               "--out", str(self.tmp / "tier.json")]), 0)
        data = json.loads((self.tmp / "tier.json").read_text())["scenarios"]
        self.assertEqual(set(data), {"test_x.F.test_a", "test_x.F.test_b", "test_x.G.test_c"})  # test_new: not measured
        self.assertEqual(data["test_x.F.test_a"], {"kills": ["m1", "m2"], "covers": ["nan"],
                                                   "kernels": ["where", "where: nan"], "shows": [], "graphs": 2,
                                                   "seconds": {"inductor": 9.0, "aot_eager": 0.5}})
        self.assertEqual(data["test_x.F.test_b"]["shows"], ["openvino: check: AssertionError: output: values differ"])
        self.assertEqual(data["test_x.G.test_c"]["seconds"], {"eager": 3.0, "aot_eager": 3.0, "inductor": 3.0})

    def test_compile_stack_lines_are_kept_as_blocks_of_the_scenarios_the_data_names(self):
        score = self.write("score.json", {"tier": "nightly", "kills_per_mutant": 3,
                                          "score": {"killed": 0, "non_equivalent": 1, "ratio": 0.0}, "tests": [
            {"id": "test.dynamo.test_x.F_switch.test_a", "killed": [], "covers": [], "graphs": 1, "seconds": 0.5},
            {"id": "test.dynamo.test_x.F_switch.test_b", "killed": [], "covers": [], "graphs": 1, "seconds": 0.5}]})
        lines = self.write("lines.json", {"torch": "2.13.0", "packages": ["torch/_dynamo"], "backends": {"aot_eager": {
            "tests": 3, "wall_s": 9.0, "blocks": [[7, ["test_x.F.test_a"]], [5, ["test_x.F.test_a", "test_x.F.test_gone"]],
                                                  [2, ["test_x.F.test_gone"]], [3, ["test_x.F.test_b"]]]}}})
        pool = [("test.dynamo.test_x.F_aot_eager.test_a", "aot_eager"), ("test.dynamo.test_x.F_aot_eager.test_b",
                                                                          "aot_eager")]
        with mock.patch.object(self.script, "_pool", return_value=pool), \
                mock.patch("sys.stdout", new_callable=lambda: __import__("io").StringIO()) as out:
            self.assertEqual(self.script.main([str(score), "--stack-coverage", str(lines), "--durations",
                                               str(self.write("durations.json", {})), "--out", str(self.tmp / "tier.json"),
                                               "--real-runs"]), 0)
        data = json.loads((self.tmp / "tier.json").read_text())
        # A scenario the data does not name runs no line; blocks it leaves alike merge.
        self.assertEqual(data["stack_lines"]["aot_eager"], {"lines": 15, "sizes": [12, 3], "scenarios": {
            "test_x.F.test_a": default_tier.encode_blocks({0}), "test_x.F.test_b": default_tier.encode_blocks({1})}})
        self.assertIn("15 of 15 compile-stack lines", out.getvalue())
        with mock.patch.object(self.script, "_pool", return_value=pool), mock.patch("sys.stdout"):
            self.script.main(["--base", str(self.tmp / "tier.json"), "--durations", str(self.tmp / "durations.json"),
                              "--out", str(self.tmp / "again.json"), "--real-runs"])
        self.assertEqual(json.loads((self.tmp / "again.json").read_text())["stack_lines"], data["stack_lines"])

    def test_a_later_report_of_some_tests_replaces_their_measurement(self):
        nightly = {"tier": "nightly", "kills_per_mutant": 3, "score": {"killed": 1, "non_equivalent": 2, "ratio": 0.5}}
        first = self.write("score.json", {**nightly, "tests": [
            {"id": "test.dynamo.test_x.F_switch.test_a", "killed": ["m1"], "covers": [], "graphs": 1, "seconds": 0.5},
            {"id": "test.dynamo.test_x.F_switch.test_b", "killed": [], "covers": [], "graphs": 1, "seconds": 0.2}]})
        later = self.write("later.json", {**nightly, "tests": [
            {"id": "test.dynamo.test_x.F_switch.test_b", "killed": ["m2"], "covers": ["int16"], "graphs": 1,
             "seconds": 0.3}]})
        durations = self.write("durations.json", {})
        pool = [("test.dynamo.test_x.F_aot_eager.test_a", "aot_eager"), ("test.dynamo.test_x.F_aot_eager.test_b",
                                                                          "aot_eager")]
        with mock.patch.object(self.script, "_pool", return_value=pool), \
                mock.patch("sys.stdout", new_callable=lambda: __import__("io").StringIO()):
            self.assertEqual(self.script.main([str(first), str(later), "--real-runs", "--durations", str(durations),
                                               "--out", str(self.tmp / "tier.json")]), 0)
        data = json.loads((self.tmp / "tier.json").read_text())["scenarios"]
        self.assertEqual(data["test_x.F.test_a"]["kills"], ["m1"])
        self.assertEqual((data["test_x.F.test_b"]["kills"], data["test_x.F.test_b"]["covers"]), (["m2"], ["int16"]))

    def test_an_open_upstream_bug_every_backend_shows_is_a_problem_the_cover_keeps(self):
        path = self.tmp / "expectations.toml"
        path.write_text('[[expect]]\ntest = "test_x.F.test_a"\nstatus = "xfail"\nreason = "lost (pytorch#1)"\n'
                        '[[expect]]\ntest = "test_x.F.test_b"\nbackend = "inductor"\nstatus = "xfail"\n'
                        'reason = "inductor only (pytorch#2)"\n'
                        '[[expect]]\ntest = "test_x.F.test_c"\nstatus = "xfail"\nreason = "no issue cited"\n')
        self.assertEqual(self.script.upstream_bugs(path), {"test_x.F.test_a": {"every backend: open upstream bug pytorch#1"}})

    def test_a_report_of_one_layer_keeps_the_kills_of_the_others_and_its_score(self):
        kernel = {"tier": "nightly", "kills_per_mutant": 3, "score": {"killed": 1, "non_equivalent": 2, "ratio": 0.5},
                  "mutants": [{"name": "m1"}, {"name": "m2"}], "tests": [
                      {"id": "test.dynamo.test_x.F_switch.test_a", "killed": ["m1"], "covers": [], "graphs": 1,
                       "seconds": 0.5}]}
        stack = {"tier": "nightly", "kills_per_mutant": 3, "patterns": [], "mutants": [{"name": "drops_guard__x__s0"}],
                 "score": {"killed": 1, "non_equivalent": 1, "ratio": 1.0,
                           "layers": {"dynamo": {"killed": 1, "non_equivalent": 1, "ratio": 1.0}}}, "tests": [
                     {"id": "test.dynamo.test_x.F_switch.test_a", "killed": ["drops_guard__x__s0"], "covers": [],
                      "graphs": 1, "seconds": 0.5}]}
        pool = [("test.dynamo.test_x.F_aot_eager.test_a", "aot_eager")]
        with mock.patch.object(self.script, "_pool", return_value=pool), \
                mock.patch("sys.stdout", new_callable=lambda: __import__("io").StringIO()):
            self.assertEqual(self.script.main([str(self.write("k.json", kernel)), str(self.write("s.json", stack)),
                                               "--real-runs", "--durations", str(self.write("d.json", {})),
                                               "--out", str(self.tmp / "tier.json")]), 0)
        data = json.loads((self.tmp / "tier.json").read_text())
        self.assertEqual(data["scenarios"]["test_x.F.test_a"]["kills"], ["drops_guard__x__s0", "m1"])
        self.assertEqual(data["mutation_score"]["layers"], {"kernel": {"killed": 1, "non_equivalent": 2, "ratio": 0.5},
                                                            "dynamo": {"killed": 1, "non_equivalent": 1, "ratio": 1.0}})
        self.assertEqual(data["mutation_score"]["score"]["killed"], 2)
        self.assertIn("drops_guard__tensor_match__s0", data["kept_mutants"])
        self.assertIn("reuse_gradients__later_call__s0", data["kept_mutants"])

    def test_data_written_before_is_the_base_a_controls_only_report_updates_keeping_kills(self):
        nightly = {"tier": "nightly", "kills_per_mutant": 3, "score": {"killed": 1, "non_equivalent": 2, "ratio": 0.5}}
        first = self.write("score.json", {**nightly, "tests": [
            {"id": "test.dynamo.test_x.F_switch.test_a", "killed": ["m1"], "covers": ["int16"], "kernels": ["add"],
             "graphs": 1, "seconds": 0.5}]})
        durations = self.write("durations.json", {})
        pool = [("test.dynamo.test_x.F_aot_eager.test_a", "aot_eager")]
        controls = self.write("controls.json", {"tier": "nightly", "kills_per_mutant": 3, "controls_only": True,
                                                "score": {"killed": 0, "non_equivalent": 0, "ratio": None},
                                                "tests": [{"id": "test.dynamo.test_x.F_switch.test_a", "killed": [],
                                                           "covers": ["int16"], "graphs": 1, "seconds": 0.4,
                                                           "kernels": ["add", "gelu: approximate=tanh"]}]})
        with mock.patch.object(self.script, "_pool", return_value=pool), \
                mock.patch("sys.stdout", new_callable=lambda: __import__("io").StringIO()):
            self.script.main([str(first), "--real-runs", "--durations", str(durations), "--out", str(self.tmp / "a.json")])
            self.assertEqual(self.script.main(["--base", str(self.tmp / "a.json"), "--real-runs", "--durations",
                                               str(durations), "--out", str(self.tmp / "b.json")]), 0)
            self.script.main(["--base", str(self.tmp / "a.json"), str(controls), "--real-runs", "--durations",
                              str(durations), "--out", str(self.tmp / "c.json")])
        written = [json.loads((self.tmp / name).read_text()) for name in ("a.json", "b.json", "c.json")]
        self.assertEqual(written[1]["scenarios"], written[0]["scenarios"])
        self.assertEqual(written[1]["mutation_score"], written[0]["mutation_score"])
        self.assertEqual(written[2]["scenarios"]["test_x.F.test_a"]["kills"], ["m1"])
        self.assertEqual(written[2]["scenarios"]["test_x.F.test_a"]["kernels"], ["add", "gelu: approximate=tanh"])
        self.assertEqual(written[2]["mutation_score"], written[0]["mutation_score"])

    def test_a_flag_the_pool_sets_one_way_only_is_the_variant_none_asks_for(self):
        self.assertEqual(self.script.one_way_flags({"argmax", "argmax: keepdim=False", "var: keepdim=True",
                                                    "var: keepdim=False", "gelu: approximate=tanh",
                                                    "scatter_reduce: include_self=True"}),
                         ["argmax: keepdim=True", "scatter_reduce: include_self=False"])

    def test_a_default_tier_score_is_refused(self):
        score = self.write("score.json", {"tier": "default", "tests": []})
        with mock.patch("sys.stderr", new_callable=lambda: __import__("io").StringIO()) as err, \
                self.assertRaises(SystemExit) as exit_:
            self.script.main([str(score)])
        self.assertEqual(exit_.exception.code, 2)
        self.assertIn("the default tier is chosen from the nightly pool", err.getvalue())
