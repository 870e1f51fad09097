"""The base TestCase every scenario builds on, and per-backend class generation.

A scenario family is written once, as a subclass of ``BackendTestCase`` decorated with
``@for_each_backend``; the decorator generates one concrete class per backend under test
(``Family_<backend>``) with ``parameterized``. Around every test the base class

* resets Dynamo, clears its counters and seeds the RNGs,
* records every guard failure (``self.guard_failures``),
* applies the expectations data (xfail / skip, decided per backend and torch version),
* after a passing body, fails the test if the backend under test received no graph
  (Dynamo falls back to eager silently; a scenario must prove it compiled), and
* fails the test that leaked global state (grad mode, default dtype, configs...), naming
  what leaked, after putting it back.
"""

from __future__ import annotations

import functools
import itertools
import sys
import time
import unittest
from typing import Any, Callable

import torch
from parameterized import parameterized_class

from harness import compat, outcomes, settings, state
from harness.axes import axis, device, dtypes, registry
from harness.axes.backends import Backend, BackendProfile, probe_backend
from harness.axes.variants import STATIC, VARIANTS, Variant
from harness.checks.observations import watched_calls
from harness.errors import innermost
from harness.features import scope
from harness.measure import eager_share, share_limit, stages
from harness.measure.counters import CompileCounterWithBackend
from harness.measure.guards import GuardFailureRecorder
from harness.testcase import default_tier, expectations, tiers


class DynamoTestCase(unittest.TestCase):
    """Isolation, expectations and guard-failure capture; no backend axis."""

    backend: Backend | None = None
    family: str | None = None  # the scenario family a generated class came from
    axis_values: dict[str, str] = {}  # a generated class's value of each per-test axis (harness.axes.registry)

    @classmethod
    def expectation_key(cls, method_name: str) -> str:
        """The name expectations match: ``<module>.<Family>.<test method>``."""
        module = cls.__module__.rsplit(".", 1)[-1]
        return f"{module}.{cls.family or cls.__name__}.{method_name}"

    # -- expectations --------------------------------------------------------------------

    def axis_value(self, axis_: axis.Axis) -> str | None:
        """This test's value of ``axis_``: the run's for a per-run axis, the generated class's
        for a per-test one (its default in a class generated without it; None for the backend
        of a test that has none)."""
        if axis_.per_run:
            return registry.selected(axis_)[0]
        if axis_ is registry.BACKEND and axis_.name not in self.axis_values:
            return None
        return self.axis_values.get(axis_.name, axis_.first)

    def _matching_expectations(self, entries: list[expectations.Expectation] | None = None) -> list:
        """Those of ``entries`` (the [[expect]] entries by default) matching this test, in
        order, but for the AOTAutograd condition."""
        values = {axis_.name: self.axis_value(axis_) or "" for axis_ in registry.AXES}
        return expectations.candidates(self.expectation_key(self._testMethodName), compat.TORCH_VERSION, values,
                                       entries)

    def _decide_expectation(self, entries: list[expectations.Expectation] | None = None) -> expectations.Expectation | None:
        """The first of ``entries`` (the [[expect]] entries by default) matching this test."""
        return expectations.decide(self._matching_expectations(entries), lambda: self.backend_profile.uses_aot_autograd)

    def run(self, result=None):
        started = time.perf_counter()
        self.timing = {"run_s": 0.0, "body_s": 0.0}  # read by the runner's pytest plugin
        self.expectation = None
        self.failure_stage: str | None = None  # harness.measure.stages, when the body raised
        # The outcome its skip stands for (a refusal), for harness.worker.classify: unittest
        # keeps only a skip's message.
        self.skipped_as: outcomes.Skipped | None = None
        # harness.features, for results.json: what the test's graphs and calls showed, what of
        # that it needed of the backend, and which of that the project declared unsupported.
        self.covers: list[str] | None = None
        self.needs: list[str] | None = None
        self.needs_unsupported: list[str] = []
        self.dynamo_metrics: dict[str, float] | None = None
        self._own_metrics: dict[str, float] = {}  # record_metric's, beside Dynamo's
        self.eager_share: dict[str, Any] | None = None  # harness.measure.eager_share.summarize, for results.json
        self._compile_s_before_resets = 0.0
        self._setup_error: BaseException | None = None
        try:
            self.expectation = self._decide_expectation()
        except Exception as error:  # a backend that crashes while probed fails its tests
            self._setup_error = error
        if self.expectation is not None and self.expectation.status == "xfail":
            # Read by unittest (and pytest's unittest support) when the test starts.
            self.__unittest_expecting_failure__ = True
        try:
            return super().run(result)
        finally:
            self.timing["run_s"] = time.perf_counter() - started

    def _callTestMethod(self, method):
        # The scenario's own time (compiling and running); the rest of run() is the harness's.
        started = time.perf_counter()
        try:
            return super()._callTestMethod(method)
        except unittest.SkipTest:
            raise
        except BaseException as error:
            test_file = getattr(sys.modules.get(type(self).__module__), "__file__", None) or ""
            self.failure_stage = stages.of(error, stages.is_check_failure(error, test_file))
            refusal = self._clean_refusal(error)
            if refusal is not None:
                self.skipped_as = outcomes.Skipped(outcomes.REFUSED, refusal)
                raise unittest.SkipTest(self.skipped_as.message) from error
            self._expect_only_its_stage()
            raise
        finally:
            self.timing["body_s"] = time.perf_counter() - started

    def _clean_refusal(self, error: BaseException) -> str | None:
        """The reason a test reports REFUSED with when its backend refused what the project
        declared it does not do (harness.features.scope), else None."""
        return None

    def _expect_only_its_stage(self) -> None:
        """An xfail entry naming a stage expects a failure from that stage only: one from
        another stage is unexpected (unittest reads whether a failure was expected when it
        records it, just after this)."""
        expected = self.expectation.stage if self.expectation is not None else ""
        outcome = getattr(self, "_outcome", None)
        if expected and self.failure_stage != expected and outcome is not None:
            outcome.expecting_failure = False

    # -- per-test isolation --------------------------------------------------------------

    def setUp(self) -> None:
        super().setUp()
        if self._setup_error is not None:
            raise self._setup_error
        if self.expectation is not None and self.expectation.status == "skip":
            self.skipTest(f"{self.expectation.reason} [{self.expectation.source}]")
        applied = [(axis_, value) for axis_ in registry.AXES if (value := self.axis_value(axis_)) is not None]
        for axis_, value in applied:
            reason = axis.opt_out_reason(type(self), getattr(self, self._testMethodName), axis_.name,
                                         value.split(":")[0] if axis_.by_type else value)
            if reason:
                self.skipTest(f"not run under {axis_.name} '{value}': {reason}")
        scenario = self.expectation_key(self._testMethodName)
        backend = self.axis_value(registry.BACKEND) or registry.BACKEND_INDEPENDENT
        chosen_by_the_runner = settings.current().given(settings.TESTS_CHOSEN)
        if tiers.current() == "default" and not chosen_by_the_runner and not default_tier.includes(scenario, backend) \
                and not default_tier.named_on_the_command_line(self.id()):
            self.skipTest(f"nightly tier ({default_tier.why(scenario, backend)}); run it with --tier nightly "
                          f"(under plain unittest: {tiers.TIER_ENV}=nightly)")
        compat.reset_dynamo()
        compat.dynamo_counters().clear()
        state.seed_everything()
        self._state_before = state.snapshot()
        self.guard_failures = GuardFailureRecorder().start()
        self.addCleanup(self._leave_state_as_found)
        self._axes = [(axis_.load_behaviour(), value) for axis_, value in applied]
        self._before_axes()
        for behaviour, value in self._axes:
            # After the snapshot, and left before the state is compared (cleanups run last in,
            # first out): an axis's own settings are never a leak.
            behaviour.set_up(self, value)

    def _before_axes(self) -> None:
        """What a subclass prepares before the axes set the test up."""

    def _leave_state_as_found(self) -> None:
        self.guard_failures.stop()
        # Read by the runner's pytest plugin for the test's report.
        self.dynamo_metrics = {**compat.dynamo_metrics(), "recompiles": len(self.guard_failures.raw_reasons),
                               "compile_s": round(self._compile_s_before_resets + compat.compile_seconds(), 3),
                               **self._own_metrics}
        compat.reset_dynamo()
        changes = state.leaked(self._state_before, state.snapshot())
        state.restore(self._state_before)
        if changes:
            self.fail("test leaked global state (now restored): " + "; ".join(changes))

    def record_metric(self, name: str, value: float) -> None:
        """A count of the test's own, kept with Dynamo's metrics in results.json (the error
        inputs that reached the backend's code, and those Dynamo rejected first)."""
        self._own_metrics[name] = value

    def enter_context(self, context):
        """Enter ``context`` until the test ends (``enterContext`` exists only from 3.11)."""
        value = context.__enter__()
        self.addCleanup(context.__exit__, None, None, None)
        return value

    def reset_dynamo(self) -> None:
        """Reset Dynamo mid-test without losing the guard failures recorded so far."""
        self.guard_failures.collect()
        self._compile_s_before_resets += compat.compile_seconds()
        compat.reset_dynamo()

    # -- guard failures ------------------------------------------------------------------

    def assertGuardFailure(self, pattern: str, count: int | None = None) -> list[str]:
        """Assert a recorded (normalized) guard-failure reason matches regex ``pattern``."""
        found = self.guard_failures.matching(pattern)
        if not found:
            self.fail(f"no guard failure matches {pattern!r}; recorded: {self.guard_failures.reasons}")
        if count is not None:
            self.assertEqual(len(self.guard_failures.reasons), count,
                             f"guard failures recorded: {self.guard_failures.reasons}")
        return found

    def assertNoGuardFailure(self) -> None:
        self.assertEqual(self.guard_failures.reasons, [], "unexpected recompilation")

    @property
    def backend_profile(self) -> BackendProfile:
        if self.backend is None:
            raise AttributeError("this test has no backend under test")
        return probe_backend(self.backend)


class BackendTestCase(DynamoTestCase):
    """A scenario run against the backend under test (``self.backend``).

    Compile with ``self.compile``: it routes every graph through ``self.counter`` (a
    CompileCounterWithBackend delegating to the backend), which is how the test later
    proves the backend received a graph.
    """

    variant: Variant = VARIANTS[STATIC]
    dtype_name: str = dtypes.FLOAT32  # harness.axes.dtypes: torch's default dtype during the test
    # Each compiled call told to the observations every scenario goes through
    # (harness/checks/observations/); off where calls are timed and weighed (the perf tier).
    calls_watched: bool = True

    @property
    def dtype(self) -> torch.dtype:
        return dtypes.torch_dtype(self.dtype_name)

    def _before_axes(self) -> None:
        self._counters: list[CompileCounterWithBackend] = []
        self._graphs_elsewhere = 0
        self._no_graph_reason: str | None = None
        self.counter = self.new_counter()
        self._watchers = watched_calls.watchers(self) if self.calls_watched else []
        self.addCleanup(self._summarize_eager_share)
        self.addCleanup(self._record_needs)

    def new_counter(self, *, measure_eager_share: bool = True) -> CompileCounterWithBackend:
        """A fresh counting wrapper around the backend under test."""
        counter = CompileCounterWithBackend(self.backend, measure_eager_share=measure_eager_share)
        for behaviour, value in self._axes:
            behaviour.counter_created(self, value, counter)
        self._counters.append(counter)
        return counter

    def _eager_share_records(self) -> list[eager_share.GraphRecord]:
        return [record for counter in self._counters for record in counter.eager_share]

    def _summarize_eager_share(self) -> None:
        self.eager_share = eager_share.summarize(self._eager_share_records())

    # -- features and declared scope (harness.features) -----------------------------------

    def features_seen(self) -> set[str]:
        """What the graphs the backend received and their calls showed (harness.features)."""
        return set().union(*(counter.features.seen for counter in self._counters))

    def capabilities_needed(self) -> set[str]:
        """What this test asked of the backend: read from the graphs it received and their
        calls, and declared on the scenario with @needs."""
        method = getattr(type(self), self._testMethodName, None)
        return scope.declared_by(type(self), method) | scope.needed(self.features_seen())

    def out_of_scope(self) -> list[str]:
        """What this test needed that the project declared unsupported."""
        needed = self.capabilities_needed()
        return [name for name in scope.declared() if name in needed]

    def _record_needs(self) -> None:
        self.covers = sorted(self.features_seen() | self.capabilities_needed())
        self.needs = sorted(self.capabilities_needed())
        self.needs_unsupported = self.out_of_scope()

    def _clean_refusal(self, error: BaseException) -> str | None:
        if self.expectation is not None and self.expectation.status == "xfail":
            return None  # a known failure stays one
        out_of_scope = self.out_of_scope()
        if not out_of_scope:
            return None
        # The backend's error, or each of the errors a check caught from compiled calls to
        # report them together (scope.attach_caught): each must be a refusal.
        caught = scope.caught(error)
        errors = [(each, stages.of(each, False)) for each in caught] if caught else [(error, self.failure_stage)]
        names = []
        for each, stage in errors:
            inner = innermost(each)
            message = f"{type(inner).__name__}: {inner}"
            name = scope.refused(message, out_of_scope)
            if stage not in (stages.BACKEND_COMPILE, stages.BACKEND_RUN) or name is None:
                return None
            names.append((name, message))
        if caught:
            self.failure_stage = errors[0][1]
        name, message = names[0]
        first = next((line.strip() for line in message.splitlines() if line.strip()), "")
        return f"{name} declared unsupported, and the backend said so: {first[:300]}"

    def eager_share_limit(self) -> tuple[float, str] | None:
        """The most of a compiled call that may run eagerly, and where that limit comes from:
        the first matching [[eager_share]] entry, else --max-eager-share, else none."""
        entry = self._decide_expectation(expectations.active_share_limits())
        if entry is not None:
            return entry.max, entry.source
        limit = share_limit.configured_limit()
        return None if limit is None else (limit, "--max-eager-share")

    def accepted_value_differences(self) -> list[expectations.ValueDifference]:
        """Every [[value_difference]] entry matching this test (harness/checks/value_domains.py)."""
        return [entry for entry in self._matching_expectations(expectations.active_value_differences())
                if entry.aot_autograd is None or entry.aot_autograd == self.backend_profile.uses_aot_autograd]

    def _check_eager_share(self) -> None:
        limit = self.eager_share_limit()
        if limit is not None:
            message = eager_share.over_limit(self._eager_share_records(), limit[0])
            if message:
                self.fail(f"the backend ran part of its graphs eagerly: {message} [{limit[1]}]")
            if limit[1] != "--max-eager-share":
                return  # an [[eager_share]] entry decides for the tests it matches
        if share_limit.fallback_fails():
            message = eager_share.ran_wholly_eagerly(self._eager_share_records())
            if message:
                self.fail(f"silent fallback to eager: {message} [--eager-fallback fail: the project declared that "
                          "its backend compiles everything]")

    def compile_kwargs(self, **kwargs: Any) -> dict[str, Any]:
        """What ``torch.compile`` gets beside the backend in this test: ``kwargs``, and the
        run's compile options where the scenario gave none (harness/axes/compile_options.py)."""
        for behaviour, value in self._axes:
            kwargs = behaviour.compile_kwargs(self, value, kwargs)
        return kwargs

    def compile(self, fn: Callable, *, counter: CompileCounterWithBackend | None = None, **kwargs: Any):
        """``torch.compile(fn, **kwargs)`` with the backend under test behind a counter (and
        the run's compile options)."""
        counter = counter or self.counter
        kwargs = self.compile_kwargs(**kwargs)
        # A compiled module's mode and hooks are features of its calls (harness.features).
        counter.features.watch_module(fn if isinstance(fn, torch.nn.Module) else getattr(fn, "__self__", None))
        compiled = torch.compile(fn, backend=counter, **kwargs)
        for behaviour, value in self._axes:
            compiled = behaviour.compiled(self, value, fn, compiled, counter, kwargs)
        return watched_calls.watched(self, fn, compiled, self._watchers)

    @property
    def uses_aot_autograd(self) -> bool:
        return self.backend_profile.uses_aot_autograd

    @property
    def graphs_received(self) -> int:
        return sum(counter.frame_count for counter in self._counters) + self._graphs_elsewhere

    def count_graphs_received_elsewhere(self, count: int) -> None:
        """Graphs the backend received in processes the scenario started (the ranks of a
        distributed run), counted there by counters of their own."""
        self._graphs_elsewhere += count

    def expect_no_graph(self, reason: str) -> None:
        """Declare that this scenario legitimately ends before the backend gets a graph."""
        self._no_graph_reason = reason

    def assert_backend_received_graph(self) -> None:
        if self._no_graph_reason is not None:
            self.assertEqual(
                self.graphs_received, 0,
                f"expected no graph ({self._no_graph_reason}), but the backend received one",
            )
            return
        if self.graphs_received == 0:
            self.fail(
                f"backend '{self.backend.spec}' received no graph: Dynamo ran this scenario "
                "eagerly, so it proved nothing about the backend"
            )
        unproven = [reason for behaviour, value in self._axes if (reason := behaviour.after_body(self, value))]
        self._check_eager_share()
        if unproven:
            # It ran, and passed, exactly as without the axis's value: say so rather than count
            # it twice. (A family known to be in this case opts out instead, and is not run.)
            self.skipTest("; ".join(unproven))


def _checked(test: Callable) -> Callable:
    @functools.wraps(test)
    def run_and_check(self, *args, **kwargs):
        test(self, *args, **kwargs)
        for watcher in self._watchers:
            watcher.finish()
        self.assert_backend_received_graph()

    return run_and_check


def for_each_backend(family: type) -> type:
    """Generate a class for each combination of the per-test axes' values (harness.axes.registry):
    ``<Family>_<backend>``, then ``_<value>`` for each further axis whose value is not its
    default (``InputMutationTests_inductor_dynamic``, ``…_bfloat16``), in the family's module.

    The family itself keeps no tests (so it is not run without a backend).
    """
    if not issubclass(family, BackendTestCase):
        raise TypeError(f"{family.__name__} must subclass BackendTestCase")
    for name, member in list(vars(family).items()):
        if name.startswith("test") and callable(member):
            setattr(family, name, _checked(member))
    device.selected()  # a device that cannot be used stops the import, in one line
    axes = registry.per_test()
    behaviours = [axis_.load_behaviour() for axis_ in axes]
    values = [behaviour.values_for(family, registry.selected(axis_)) for axis_, behaviour in zip(axes, behaviours)]
    params = []
    for combination in itertools.product(*values):
        entry: dict[str, Any] = {"family": family.__name__,
                                 "axis_values": {axis_.name: value for axis_, value in zip(axes, combination)}}
        for behaviour, value in zip(behaviours, combination):
            entry.update(behaviour.class_attributes(value))
        params.append(entry)
    if not params:  # a non-numeric family when only half dtypes are selected: nothing to run
        for name in [name for name in vars(family) if name.startswith("test")]:
            delattr(family, name)
        return family
    parameterized_class(params, class_name_func=_class_name)(family)
    module = sys.modules[family.__module__]
    for entry in params:
        generated = getattr(module, _class_name(family, 0, entry))
        # parameterized copies the family's __qualname__; unittest ids are built from it.
        generated.__qualname__ = generated.__name__
    return family


def _class_name(family: type, index: int, params: dict[str, Any]) -> str:
    return family.__name__ + registry.class_suffix(params["axis_values"])
