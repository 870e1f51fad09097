"""Workers forked from the collecting process (harness.worker.forkserver): a client stands in
for each worker's interpreter, exactly (its exit code, its death by a signal, the signals
sent to it), and a request the server cannot serve as a fresh interpreter would gets one.
The whole runner's crash, hang and isolation tests (test_runner, test_isolation) run on
forked workers too."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from pathlib import Path

from harness import settings
from harness.run import collection
from harness.worker import fork_client, forkserver

# Its own seconds (test/harness/budgets.py): 6 s measured 2026-11-29.
TIME_BUDGET_S = 20


def _client(server: Path, code: str, env: dict[str, str] | None = None, **popen) -> subprocess.Popen:
    """The client as xdist starts it: the interpreter it stands in for gets ``-u -c CODE``."""
    command = [sys.executable, str(forkserver.CLIENT), str(server), "-u", "-c", code]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def _ask(server: Path, env: dict[str, str]) -> str:
    """The server's first answer to a request made with ``env``."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with connection:
        connection.connect(str(server))
        message = json.dumps({"code": "pass", "cwd": os.getcwd(), "env": env}).encode()
        socket.send_fds(connection, [message], [0, 1, 2])
        return connection.recv(fork_client.MAX_MESSAGE).decode()


class ForkServerTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # The server's environment is this process's, as it is the runner's in a run.
        cls.collected = collection.collect(settings.Settings({settings.BACKENDS: "eager"}), serve=True)
        cls.addClassCleanup(cls.collected.close)
        cls.server = cls.collected.fork_server.path

    def test_the_collection_serves_forked_workers(self):
        self.assertEqual(self.collected.worker_start, "forked")
        client = _client(self.server, "import os, sys; print(os.getppid(), 'torch' in sys.modules)")
        out, err = client.communicate(timeout=60)
        self.assertEqual(client.returncode, 0, err)
        parent, has_torch = out.split()
        # A fork of the server, torch already imported: not a new interpreter of the client's.
        self.assertEqual(int(parent), self.collected.fork_server.process.pid)
        self.assertEqual(has_torch, "True")

    def test_the_client_ends_as_its_worker_did(self):
        for code, expected in (("raise SystemExit(3)", 3), ("import os; os.kill(os.getpid(), 11)", -11),
                               ("raise ValueError('boom')", 1)):
            with self.subTest(code=code):
                client = _client(self.server, code)
                _, err = client.communicate(timeout=60)
                self.assertEqual(client.returncode, expected, err)

    def test_signals_to_the_client_reach_its_worker(self):
        client = _client(self.server, "import os, time; print(os.getpid(), flush=True); time.sleep(60)")
        worker = int(client.stdout.readline())
        client.send_signal(signal.SIGTERM)
        client.communicate(timeout=30)
        self.assertEqual(client.returncode, -signal.SIGTERM)
        self.assertFalse(_alive(worker))

    def test_arguments_and_inherited_descriptors_reach_the_fork(self):
        # As the collecting child is started: ``-c CODE ARGS``, with a pipe's end passed down.
        read, write = os.pipe()
        code = "import os, sys; os.write(int(sys.argv[2]), sys.argv[1].encode()); os.close(int(sys.argv[2]))"
        command = [sys.executable, str(forkserver.CLIENT), str(self.server), "-c", code, "hello", str(write)]
        client = subprocess.Popen(command, pass_fds=(write,), stderr=subprocess.PIPE, text=True)
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            self.assertEqual(pipe.read(), b"hello")
        self.assertEqual(client.wait(timeout=60), 0, client.stderr.read())
        client.stderr.close()

    def test_a_fork_started_with_its_clients_environment(self):
        # Not with what imports add to os.environ after it started (torch's do, when the
        # inductor cache is not set): the fork adds one, and must not report it.
        code = ("import json, os; os.environ['ADDED_BY_AN_IMPORT'] = '1'; from harness.worker import forkserver; "
                "print(json.dumps(forkserver.environment_at_start()))")
        client = _client(self.server, code)
        out, err = client.communicate(timeout=60)
        def own(environment: dict) -> dict:  # less what pytest sets, as the server compares them
            return {name: value for name, value in environment.items() if not name.startswith(forkserver._SET_BY_PYTEST)}

        self.assertEqual(own(json.loads(out)), own(os.environ), err)

    def test_a_worker_whose_client_died_is_killed(self):
        client = _client(self.server, "import os, time; print(os.getpid(), flush=True); time.sleep(60)")
        worker = int(client.stdout.readline())
        client.kill()  # SIGKILL: nothing is forwarded
        client.communicate(timeout=30)
        self.assertTrue(_gone_within(worker, 10), "the worker outlived its client")

    def test_another_environment_is_refused_and_gets_an_interpreter(self):
        env = {**os.environ, "TORCH_LOGS": "dynamo"}  # torch reads it on import: a fork would not see it
        self.assertRegex(_ask(self.server, env), r"^refused: another environment \(TORCH_LOGS\)")
        client = _client(self.server, "import os, sys; print(os.getppid(), 'torch' in sys.modules)", env=env)
        out, err = client.communicate(timeout=60)
        self.assertEqual(client.returncode, 0, err)
        parent, has_torch = out.split()
        self.assertEqual((int(parent), has_torch), (os.getpid(), "False"))  # the client became the interpreter

    def test_what_pytest_sets_for_its_workers_reaches_a_fork(self):
        env = {**os.environ, "COLUMNS": "123", "PYTEST_VERSION": "0"}
        client = _client(self.server, "import os; print(os.environ['COLUMNS'], os.getppid())", env=env)
        out, err = client.communicate(timeout=60)
        self.assertEqual(out.split(), ["123", str(self.collected.fork_server.process.pid)], err)

    def test_a_source_changed_since_it_was_imported_is_refused(self):
        with tempfile.TemporaryDirectory() as directory:
            source = Path(directory) / "imported.py"
            source.write_text("VALUE = 1\n")
            started = (os.getcwd(), dict(os.environ))
            request = {"cwd": os.getcwd(), "env": dict(os.environ)}
            imported = {str(source): source.stat().st_mtime_ns}
            self.assertEqual(forkserver._differs(request, started, imported), "")
            os.utime(source, ns=(0, source.stat().st_mtime_ns + 1_000_000_000))
            self.assertEqual(forkserver._differs(request, started, imported),
                             f"{source} changed since it was imported")

    def test_no_server_means_an_interpreter(self):
        nowhere = Path(tempfile.gettempdir()) / "no-such-server.sock"
        client = _client(nowhere, "import sys; print('torch' in sys.modules)")
        out, err = client.communicate(timeout=60)
        self.assertEqual((client.returncode, out.strip()), (0, "False"), err)


class PreforkedCollectionTests(unittest.TestCase):
    def test_a_collecting_child_forked_from_the_preforked_server_serves_forked_workers(self):
        from test.harness import preforked

        preforked.interpreter()  # a combination's first collection starts an interpreter of its own
        interpreter = preforked.interpreter()
        self.assertEqual(interpreter[-2:-1], [str(forkserver.CLIENT)])
        collected = collection.collect(settings.Settings({settings.BACKENDS: "eager"}), serve=True,
                                       interpreter=interpreter)
        self.addCleanup(collected.close)
        self.assertEqual(collected.worker_start, "forked")
        self.assertTrue(collected.tests)
        # A worker's parent collected; the collecting process's own parent is the preforked server.
        code = ("import os, sys; collector = os.getppid(); "
                "print('harness.testcase.base' in sys.modules, open(f'/proc/{collector}/stat').read().rsplit(')', 1)[1].split()[1])")
        client = _client(collected.fork_server.path, code)
        out, err = client.communicate(timeout=60)
        imported, grandparent = out.split()
        self.assertEqual(imported, "True", err)
        self.assertIn(int(grandparent), {server.process.pid for server in preforked._servers.values()})


class ExecnetBootstrapTests(unittest.TestCase):
    def test_the_gateway_execnet_sends_a_named_interpreter_compiles_under_its_own_file(self):
        # Compiled as <string>, its frames under every test made torch's inspect.stack()
        # search sys.modules, and op-sweep tests ran 30 % slower in forked workers.
        import execnet
        from execnet import gateway_base, gateway_bootstrap

        class Captured:
            written = b""

            def write(self, data: bytes) -> None:
                self.written += data

            def read(self, size: int) -> bytes:
                return b"1"

        io = Captured()
        spec = execnet.XSpec(f"popen//python={forkserver.client_command(Path('fork.sock'), [])}")
        self.assertTrue(spec.python)  # execnet sends its source, rather than an import, to such a worker
        gateway_bootstrap.bootstrap_exec(io, spec)
        source = eval(io.written.decode().splitlines()[0])
        self.assertEqual(forkserver._source_file(source), gateway_base.__file__)
        self.assertEqual(forkserver._source_file("print('another program')"), "<string>")


class UnsafeTests(unittest.TestCase):
    def test_only_a_process_with_the_threads_of_torch_alone_forks(self):
        threads = forkserver.thread_count()
        self.assertEqual(forkserver.unsafe_reason(threads, on_cpu=True), "")
        self.assertEqual(forkserver.unsafe_reason(threads, on_cpu=False), "the device is not the CPU")
        stop = threading.Event()
        extra = threading.Thread(target=stop.wait)
        extra.start()
        try:
            self.assertRegex(forkserver.unsafe_reason(threads, on_cpu=True), r"^collecting started threads")
        finally:
            stop.set()
            extra.join()

    def test_it_can_be_turned_off(self):
        with settings.using(settings.Settings({settings.FORK: "0"})):
            self.assertEqual(forkserver.unsafe_reason(forkserver.thread_count(), on_cpu=True), f"{settings.FORK}=0")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie not yet reaped by the server counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _alive(pid):
            return True
        time.sleep(0.05)
    return False


if __name__ == "__main__":
    unittest.main()
