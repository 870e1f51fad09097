"""Finding the tests: import torch, check the backends, discover the suite's scenarios
(``test/dynamo`` of the suite root, harness.project.layout) and the project's own
(harness.project.extensions); each is described by a ``TestInfo``, which the rest of the
runner passes around.

``run_tests.py`` does this in a short-lived child process (``collect``)
and never imports torch itself: the runner stays a small process for the whole run, instead
of holding a third copy of torch and every test module beside its workers.

The child writes one JSON object to the file it is given (stdout is left to whatever the
test modules print); a problem the user must fix is one line on stderr and exit code 2.
Asked to, and where it is safe, the child then stays for the run as the server the workers
are forked from (``harness.worker.forkserver``): it holds torch and the test modules already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import unittest
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness import settings
from harness.project import layout
from harness.report.results import BACKEND_INDEPENDENT, TestResult

ROOT = layout.SUITE_ROOT


class CollectionError(Exception):
    """What stops the tests from being collected; the message is the one line the user sees.
    ``setting`` names the setting at fault, when one is (the runner says where it was set)."""

    def __init__(self, message: str, setting: str = "") -> None:
        super().__init__(message)
        self.setting = setting


@dataclass(frozen=True)
class TestInfo:
    """A selected test, as the runner collected it."""

    id: str  # unittest id
    nodeid: str  # pytest node id
    scenario: str
    backend: str
    backend_spec: str
    tier: str = "default"  # harness.testcase.tiers: the tier that runs it
    axes: dict[str, str] = field(default_factory=dict)  # per-test axes beside the backend (harness.axes.registry)
    timeout: float = 0.0  # its own time limit, from its recorded duration; 0: engine.EngineOptions.timeout

    def result(self, outcome: str, reason: str = "", **fields: Any) -> TestResult:
        if outcome == "TIMEOUT" and self.timeout:
            reason += "; the limit comes from the test's recorded duration, --timeout S sets another"
        return TestResult(id=self.id, scenario=self.scenario, backend=self.backend,
                          backend_spec=self.backend_spec, axes=self.axes, outcome=outcome, reason=reason,
                          time_limit_s=self.timeout or None, **fields)


@dataclass
class Collected:
    torch_version: str
    backends: list[dict[str, str]]  # name, spec, package (the distribution providing it: "openvino 2026.4.1")
    tests: list[TestInfo]  # in unittest's order
    root: str = str(ROOT)  # the directory test node ids are relative to: pytest's root for the workers
    # How the workers start: "forked" from the collecting process (collect(serve=True),
    # harness.worker.forkserver), or "interpreters: " and why not.
    worker_start: str = "interpreters"
    fork_server: "ForkServer | None" = None  # the collecting process, serving the workers

    def close(self) -> None:
        if self.fork_server is not None:
            self.fork_server.close()
            self.fork_server = None


@dataclass
class ForkServer:
    """The child that collected, serving the run's workers at ``path`` until ``close``."""

    path: Path
    process: subprocess.Popen
    directory: tempfile.TemporaryDirectory

    def close(self) -> None:
        _close_input(self.process)  # the server's signal to stop
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.directory.cleanup()


# The threads of the collecting process right after it imported torch (harness.worker.forkserver).
_threads_with_torch = 0


def check_torch() -> str:
    # torch warns on import when NumPy is absent; the suite does not use NumPy.
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    global _threads_with_torch
    try:
        import torch
    except ImportError as error:
        raise CollectionError(f"torch cannot be imported ({error}); install it: pip install -r requirements.txt -e .")
    from harness import compat
    from harness.worker import forkserver

    _threads_with_torch = forkserver.thread_count()

    if compat.TORCH_VERSION < compat.MINIMUM_TORCH:
        raise CollectionError(f"torch {torch.__version__} is too old; dynamo-aot-suite needs torch >= {compat.MINIMUM_TORCH}")
    return torch.__version__


def collect_here() -> Collected:
    """Collect in this process (which then holds torch and every test module)."""
    torch_version = check_torch()
    from harness.axes import backends, device, registry
    from harness.testcase import tiers

    from harness.project import extensions

    try:
        chosen = backends.selected_backends()
    except backends.BackendSpecError as error:
        imports_failed = str(error).startswith(settings.IMPORTS)
        raise CollectionError(str(error), settings.IMPORTS if imports_failed else settings.BACKENDS)
    try:
        device.selected()  # after the backends: their imports may register an out-of-tree device
    except device.DeviceError as error:
        raise CollectionError(f"--device / {error}", settings.DEVICE)
    try:
        extensions.models()  # test_models.py adds them; a mistake is the user's, said here in one line
    except extensions.ExtensionError as error:
        raise CollectionError(str(error), settings.MODELS)
    loader = unittest.TestLoader()
    suite = loader.discover(str(layout.SCENARIO_DIR), top_level_dir=str(ROOT))
    if loader.errors:
        last_line = loader.errors[0].strip().splitlines()[-1]
        raise CollectionError(f"a test module failed to import: {last_line}")
    try:
        project = extensions.scenario_modules()
    except extensions.ExtensionError as error:
        raise CollectionError(str(error), settings.SCENARIOS)
    suite.addTests(loader.loadTestsFromModule(module) for module in project)
    root = layout.common_root([ROOT, *(extensions.module_name(Path(module.__file__))[0] for module in project)])
    tests = []
    for test in flatten(suite):
        cls, method = type(test), test._testMethodName
        backend, spec = backend_of(cls)
        key = cls.expectation_key(method) if hasattr(cls, "expectation_key") else \
            f"{cls.__module__.rsplit('.', 1)[-1]}.{cls.__name__}.{method}"
        tests.append(TestInfo(id=test.id(), nodeid=pytest_nodeid(root, cls, method), scenario=key,
                              backend=backend, backend_spec=spec, tier=tiers.tier_of(test),
                              axes={name: value for name, value in getattr(cls, "axis_values", {}).items()
                                    if name != registry.BACKEND.name}))
    return Collected(torch_version, [{"name": b.name, "spec": b.spec, "package": backends.package_of(b)} for b in chosen],
                     tests, str(root))


def backend_of(testcase_class: type) -> tuple[str, str]:
    backend = getattr(testcase_class, "backend", None)
    if backend is None:
        return BACKEND_INDEPENDENT, ""
    return backend.name, backend.spec


def pytest_nodeid(root: Path, testcase_class: type, method: str) -> str:
    module = sys.modules[testcase_class.__module__]
    path = Path(module.__file__).resolve().relative_to(root.resolve())
    return f"{path.as_posix()}::{testcase_class.__name__}::{method}"


def flatten(suite: unittest.TestSuite):
    """The test cases of a (nested) suite."""
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from flatten(item)
        else:
            yield item


def collect(run_settings: settings.Settings | None = None, serve: bool = False,
            interpreter: list[str] | None = None) -> Collected:
    """Collect in a child process with this interpreter, its flags and environment, under
    ``run_settings`` (this process's settings by default). With ``serve``, the child stays as
    the run's fork server where it can (``Collected.fork_server``; ``close`` ends it).
    ``interpreter``: the command that stands for ``python`` and its flags (the self-tests fork
    the child from a process that imported torch already, test/harness/preforked.py)."""
    run_settings = settings.current() if run_settings is None else run_settings
    # Same interpreter flags (-S, -E...) and working directory: backend paths given relative
    # to it must resolve in the child as they would here.
    interpreter = interpreter or [sys.executable, *subprocess._args_from_interpreter_flags()]
    start = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); from harness.run.collection import main; "
             "from harness.worker.protocol import exit_at_once; exit_at_once(main())")
    directory = tempfile.TemporaryDirectory(prefix="dynamo-suite-collect-")
    server = None
    try:
        work = Path(directory.name)
        out, socket_path = work / "collected.json", work / "fork.sock"
        handed = run_settings.write(work / "settings.json")
        ready_read, ready_write = os.pipe()  # one byte once the child serves; its end when it exits
        command = [*interpreter, "-c", start, str(out), str(handed),
                   str(socket_path) if serve else "", str(ready_write)]
        with open(work / "stdout", "wb") as stdout, open(work / "stderr", "wb") as stderr:
            process = subprocess.Popen(command, stdin=subprocess.PIPE if serve else subprocess.DEVNULL,
                                       stdout=stdout, stderr=stderr, pass_fds=(ready_write,))
        os.close(ready_write)
        try:
            serving = os.read(ready_read, 1)
        finally:
            os.close(ready_read)
        if serving:
            server = ForkServer(socket_path, process, directory)
        else:
            _close_input(process)
            process.wait()
        found = json.loads(out.read_text()) if out.exists() else {}
        if process.returncode == 2:
            raise CollectionError(found.get("error") or _last_line(work / "stderr"), found.get("setting", ""))
        if (process.returncode or 0) != 0 or "tests" not in found:
            raise CollectionError(f"collecting the tests failed (exit {process.returncode}): "
                                  f"{_last_line(work / 'stderr')}")
    except BaseException:
        if server is not None:
            server.close()
        elif "process" in locals():
            _close_input(process)
            if process.poll() is None:
                process.kill()
                process.wait()
            directory.cleanup()
        else:
            directory.cleanup()
        raise
    if server is None:
        directory.cleanup()
    return Collected(found["torch_version"], found["backends"], [TestInfo(**test) for test in found["tests"]],
                     found["root"], found["worker_start"], server)


def _close_input(process: subprocess.Popen) -> None:
    if process.stdin is not None and not process.stdin.closed:
        process.stdin.close()


def _last_line(path: Path) -> str:
    text = path.read_text(errors="replace") if path.exists() else ""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def main() -> int:
    """The child's side: ``sys.argv[1]`` is the file to write, ``sys.argv[2]`` the settings,
    ``sys.argv[3]`` where to serve forked workers ('' for nowhere) and ``sys.argv[4]`` the
    descriptor that says it does."""
    from harness.worker import forkserver

    # Before torch's imports add to it, as they do in a fresh worker.
    started_with = forkserver.environment_at_start()
    settings.use(settings.Settings.read(sys.argv[2]))
    try:
        collected = collect_here()
    except CollectionError as error:
        print(error, file=sys.stderr)
        Path(sys.argv[1]).write_text(json.dumps({"error": str(error), "setting": error.setting}))
        return 2
    listener, worker_start = None, "interpreters"
    if sys.argv[3]:
        from harness.axes import device

        why_not = forkserver.unsafe_reason(_threads_with_torch, device.on_cpu())
        if not why_not:
            try:
                listener = forkserver.listen(Path(sys.argv[3]))
            except OSError as error:
                why_not = f"no socket for the fork server ({error})"
        worker_start = "forked" if listener else f"interpreters: {why_not}"
    found = {**asdict(collected), "tests": [asdict(test) for test in collected.tests], "worker_start": worker_start}
    del found["fork_server"]
    Path(sys.argv[1]).write_text(json.dumps(found))
    if listener is not None:
        forkserver.serve(listener, int(sys.argv[4]), started_with)
    return 0
