"""The Python world watcher's own rules (harness/checks/observations/python_world.py), with plain Python
functions standing in for compiled ones: no torch.compile, so each case is milliseconds."""

from __future__ import annotations

import random
import threading
import unittest

import torch

from harness.checks.observations import python_world, watched_calls

# Its own seconds (test/harness/budgets.py): under 1 s measured 2026-12-06.
TIME_BUDGET_S = 5

COUNTER = 0


class _Shared:
    """Copied as itself: what a copy that missed something looks like."""

    def __init__(self) -> None:
        self.items: list = []

    def __deepcopy__(self, memo):
        return self


def _test() -> unittest.TestCase:
    """What the watcher asks of a test: its assertions and dtype (not collected: no test method)."""
    test = unittest.TestCase()
    test.dtype = torch.float32
    return test


def _watch(eager, compiled, *args):
    """The watcher around one call of ``compiled``: (failure message or None, watcher)."""
    watcher = python_world.PythonWorldWatcher(_test())
    call = watched_calls.Call(eager, compiled, args, {}, 0)
    try:
        watcher.before(call)
        watcher.after(call, compiled(*args))
    except AssertionError as error:
        return str(error), watcher
    return None, watcher


class PythonWorldTests(unittest.TestCase):
    def test_a_side_effect_lost_is_named_by_its_path(self):
        log = []

        def fn(x):
            log.append(x.sum())
            return x + 1

        message, _ = _watch(fn, lambda x: x + 1, torch.ones(2))
        self.assertIn("closure 'log': list of 0 items, eager 1", message)

        def bump(x):
            global COUNTER
            COUNTER += 1
            return x

        message, _ = _watch(bump, lambda x: x, torch.ones(1))
        self.assertIn("global 'COUNTER': 0, eager 1", message)
        self.assertEqual(COUNTER, 0, "the eager run changed the real global")

    def test_the_same_side_effect_passes_and_leaves_one_application(self):
        log = []

        def fn(x):
            log.append(x.sum())
            return x + 1

        message, watcher = _watch(fn, fn, torch.ones(2))
        self.assertIsNone(message)
        self.assertEqual((len(log), watcher.observed), (1, 1))

    def test_tensors_and_values_only_cost_no_eager_run(self):
        weight = torch.ones(2)
        plain = lambda x: x * weight  # noqa: E731
        message, watcher = _watch(plain, plain, torch.ones(2))
        self.assertEqual((message, watcher.observed, sum(watcher.unobserved.values())), (None, 0, 0))

    def test_random_draws_are_compared_by_metadata(self):
        def fn(found):
            found.append(torch.randn(3))
            return found[0]

        def compiled(found):  # its own random numbers, as inductor draws them
            found.append(torch.randn(3) + 10)
            return found[0]

        message, _ = _watch(fn, compiled, [torch.zeros(1)])
        self.assertIsNone(message)

    def test_python_generators_are_compared_by_their_state(self):
        rng = random.Random(0)

        def draw(x, generator):
            return x + generator.random()

        def drawn_once(x, generator, value=random.Random(0).random()):
            return x + value  # the first draw baked in, the generator untouched

        message, _ = _watch(draw, drawn_once, torch.ones(2), rng)
        self.assertIn("argument 1.<generator state>", message)
        self.assertIsNone(_watch(draw, draw, torch.ones(2), random.Random(0))[0])

        def shuffled(x):
            order = [0, 1]
            random.shuffle(order)
            return x[order]

        message, _ = _watch(shuffled, lambda x: x[[1, 0]], torch.ones(2))
        self.assertIn("global random generator is not where eager's draws leave it", message)
        self.assertIsNone(_watch(shuffled, shuffled, torch.ones(2))[0])

    def test_aliasing_is_part_of_the_world(self):
        def fn(pair):
            pair[1] = pair[0]
            return torch.ones(1)

        def compiled(pair):
            pair[1] = list(pair[0])
            return torch.ones(1)

        message, _ = _watch(fn, compiled, [[1], [2]])
        self.assertIn("argument 0[1]: list of 1 items, eager the same object as argument 0[0]", message)

    def test_what_cannot_be_copied_is_not_observed(self):
        lock = threading.Lock()
        log = []

        def fn(x):
            with lock:
                log.append(1)
            return x

        message, watcher = _watch(fn, lambda x: x, torch.ones(1))
        self.assertIsNone(message)
        self.assertEqual(watcher.observed, 0)
        self.assertEqual(sum(watcher.unobserved.values()), 1, watcher.unobserved)

    def test_a_tensor_value_only_the_world_shows_is_reported_after_the_scenario_s_own_checks(self):
        kept = []

        def fn(x):
            kept.append(x * 2)
            return x

        message, watcher = _watch(fn, lambda x: (kept.append(x * 3), x)[1], torch.ones(2))
        self.assertIsNone(message)  # not during the call: the scenario's own comparison comes first
        with self.assertRaisesRegex(AssertionError, r"closure 'kept'\[0\]"):
            watcher.finish()

    def test_an_eager_run_reaching_past_the_copy_is_undone_and_not_judged(self):
        shared = _Shared()

        def fn(x):
            shared.items.append(1)
            return x

        message, watcher = _watch(fn, fn, torch.ones(1))
        self.assertIsNone(message)
        self.assertEqual(shared.items, [1])  # the compiled call's append only: eager's was put back
        self.assertEqual((watcher.observed, sum(watcher.unobserved.values())), (0, 1), watcher.unobserved)


if __name__ == "__main__":
    unittest.main()
