"""Workers forked from the process that collected the tests, instead of each starting an
interpreter of its own.

A worker that starts its own interpreter imports torch, Dynamo, pytest and every test module
before its first test: 7 to 9 s of one core on 2 cores (measured 2026-11-29), paid by every
worker of every run, by every worker xdist starts again after a crash and by every rerun
pass of the isolation. The process that collected the tests holds all of that already. Once
it has written what it collected it can stay, as this fork server, for the rest of the run:
each worker is a fork of it, ready in a fraction of a second, with the modules imported
under the same settings and nothing run yet.

How a worker comes to be: pytest-xdist starts ``harness/worker/fork_client.py`` as the
worker's interpreter; the client passes its stdin, stdout and stderr here over a Unix
socket; the server forks, and the child takes those as its own and runs xdist's bootstrap,
as ``python -u -c BOOTSTRAP`` would. The server tells the client the child's exit status
when it ends, and kills the child when its client dies first.

Only where a fork is known to be safe (``unsafe_reason``): on Linux, on the CPU (a process
that touched CUDA cannot be forked), and when collecting started no thread beyond those
importing torch starts (a backend's runtime with threads of its own may not survive a
fork). Otherwise, or with DYNAMO_SUITE_FORK=0, each worker starts its own interpreter, as
before.
"""

from __future__ import annotations

import builtins
import fcntl
import io
import json
import os
import selectors
import signal
import socket
import sys
import traceback
import types
import warnings
from pathlib import Path

from harness import settings
from harness.worker import fork_client
from harness.worker.protocol import exit_at_once

FORK = settings.FORK
# What pytest and xdist set in the controller for its workers, and nothing imported before
# a fork reads: a forked worker takes the client's values.
_SET_BY_PYTEST = ("COLUMNS", "LINES", "PYTEST_")
CLIENT = Path(fork_client.__file__).resolve()
# The descriptors a request may hand over beyond stdin, stdout and stderr (a pipe or two).
_MAX_INHERITED = 8


def thread_count() -> int:
    """The threads of this process, native ones included (Linux; 0 where unknown)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


def unsafe_reason(threads_with_torch: int, on_cpu: bool) -> str:
    """Why this process must not fork workers ('' when it may). ``threads_with_torch``: its
    threads right after torch was imported (torch's own, and its BLAS's, are fork-safe)."""
    if settings.current().get(FORK, "1") == "0":
        return f"{FORK}=0"
    if not sys.platform.startswith("linux") or not hasattr(socket, "send_fds"):
        return "forking workers is done on Linux only"
    if not on_cpu:
        return "the device is not the CPU"
    if not threads_with_torch or thread_count() != threads_with_torch:
        return (f"collecting started threads ({thread_count()} running, {threads_with_torch} after importing "
                "torch)")
    return ""


# The environment a forked process was asked for (its client's): what it "started with".
_requested_environment: dict[str, str] | None = None


def environment_at_start() -> dict[str, str]:
    """The environment this process started with: its client's when it was forked here
    (the server's imports may have added to os.environ since), else its own now."""
    return dict(os.environ if _requested_environment is None else _requested_environment)


def client_command(path: Path, interpreter_flags: list[str]) -> str:
    """The interpreter xdist starts for each worker (the ``python=`` of its ``--tx``)."""
    import shlex

    return " ".join(shlex.quote(part) for part in (sys.executable, *interpreter_flags, str(CLIENT), str(path)))


def listen(path: Path) -> socket.socket:
    """The socket clients connect to (OSError when there can be none at ``path``)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        listener.bind(str(path))
        listener.listen(64)
    except OSError:
        listener.close()
        raise
    return listener


def serve(listener: socket.socket, ready_fd: int, started_with: dict[str, str]) -> None:
    """Fork workers for clients connecting to ``listener`` until stdin reaches its end (the
    runner closed it, or died). Writes one byte to ``ready_fd`` once clients can connect.
    ``started_with``: the environment this process started with (its imports may add to it,
    as they would in a fresh worker)."""
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # wakes the select below
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the runner ends this process, by closing stdin
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "listener")
    selector.register(0, selectors.EVENT_READ, "runner")
    selector.register(wake_read, selectors.EVENT_READ, "child ended")
    clients: dict[int, socket.socket] = {}  # child pid -> its client's connection
    sources = _sources()
    started_in = os.getcwd()
    os.write(ready_fd, b"1")
    os.close(ready_fd)
    while True:
        for key, _ in selector.select():
            if key.data == "runner":
                if not os.read(0, 4096):
                    return
            elif key.data == "listener":
                connection, _ = listener.accept()
                inherited = [listener, selector, wake_read, wake_write, *clients.values()]
                pid = _fork(connection, (started_in, started_with), sources, inherited)
                if pid is None:
                    connection.close()
                    continue
                clients[pid] = connection
                selector.register(connection, selectors.EVENT_READ, pid)
            elif key.data == "child ended":
                _drain(wake_read)
                _reap(clients, selector)
            else:  # a client: it says nothing more, so this is its end
                pid = key.data
                selector.unregister(key.fileobj)
                try:
                    os.kill(pid, signal.SIGKILL)  # a worker outliving its stand-in would never be stopped
                except ProcessLookupError:
                    pass


def _fork(connection: socket.socket, started: tuple[str, dict[str, str]], sources: dict[str, int],
          inherited: list) -> int | None:
    """Fork a worker for the client on ``connection``; its pid, or None for a bad request."""
    try:
        message, fds, _, _ = socket.recv_fds(connection, fork_client.MAX_MESSAGE, 3 + _MAX_INHERITED)
        request = json.loads(message.decode())
    except (OSError, ValueError):
        return None
    wanted = 3 + len(request.get("fds", []))
    refusal = "" if len(fds) == wanted else f"{len(fds)} descriptors came with the request, not {wanted}"
    refusal = refusal or _differs(request, started, sources)
    if refusal:
        for fd in fds:
            os.close(fd)
        try:
            connection.send(f"refused: {refusal}".encode())
        except OSError:
            pass
        return None
    for stream in (sys.stdout, sys.stderr):
        stream.flush()  # or the child would write this process's buffered output again
    with warnings.catch_warnings():
        # Python 3.12+ warns on fork with threads running; torch's BLAS threads are fork-safe.
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:
        _become_worker(request, fds, [connection, *inherited])
    for fd in fds:
        os.close(fd)
    try:
        connection.send(str(pid).encode())
    except OSError:
        pass
    return pid


def _sources() -> dict[str, int]:
    """The source file of every module imported here -> when it was last changed."""
    found = {}
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path:
            try:
                found[path] = os.stat(path).st_mtime_ns
            except OSError:
                pass
    return found


def _differs(request: dict, started: tuple[str, dict[str, str]], sources: dict[str, int]) -> str:
    """Why a worker forked from here would not be the worker the client asks for ('' when it
    would): torch and the test modules read the environment and the working directory as
    they were imported here, and a fresh worker would import a changed file again."""
    cwd, environment = started
    if request.get("cwd") != cwd:
        return "another working directory"
    env = request.get("env", {})
    changed = sorted(name for name in set(env) | set(environment)
                     if env.get(name) != environment.get(name) and not name.startswith(_SET_BY_PYTEST))
    if changed:
        return f"another environment ({', '.join(changed[:3])})"
    for path, changed_ns in sources.items():
        try:
            if os.stat(path).st_mtime_ns != changed_ns:
                return f"{path} changed since it was imported"
        except OSError:
            return f"{path} is gone"
    return ""


# What execnet runs as ``python -c`` in each worker: it reads the source to run from stdin.
_EXECNET_BOOTSTRAP = "import sys;exec(eval(sys.stdin.readline()))"


def _source_file(source: str) -> str:
    """The file to compile execnet's bootstrap ``source`` under. Given an interpreter to
    start (as here), execnet sends its gateway module's source rather than importing it;
    compiled as ``<string>``, each of its frames under every test costs torch's
    ``inspect.stack()`` a search through sys.modules (op-sweep tests ran 30 % slower,
    measured 2026-11-29). Under the module's own file name they resolve to it at once, as
    in a worker of xdist's own, which imports it."""
    from execnet import gateway_base

    path = gateway_base.__file__
    try:
        with open(path, encoding="utf-8") as module_source:
            return path if source.startswith(module_source.read()) else "<string>"
    except OSError:
        return "<string>"


def _drain(fd: int) -> None:
    try:
        while len(os.read(fd, 4096)) == 4096:
            pass
    except BlockingIOError:
        pass


def _reap(clients: dict[int, socket.socket], selector: selectors.BaseSelector) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        connection = clients.pop(pid, None)
        if connection is None:
            continue
        try:
            selector.unregister(connection)
        except (KeyError, ValueError):
            pass  # unregistered already: its client ended first
        try:
            connection.send(str(status).encode())
        except OSError:
            pass
        connection.close()


def _become_worker(request: dict, fds: list[int], inherited: list) -> None:
    """In the child: take the client's stdin, stdout and stderr, and run its ``-c`` code as a
    fresh interpreter would; never returns. (Its working directory and environment are those
    this process started with, but for what pytest sets: ``_differs`` refuses any other.)

    Leaves with ``os._exit``: the exit handlers the server's imports registered are the
    server's (a fresh worker registers its own, and pytest's plugin ends the worker at once)."""
    global _requested_environment
    code = 1
    try:
        for thing in inherited:
            thing.close() if hasattr(thing, "close") else os.close(thing)
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        # Each received descriptor to the number the client had it under: first out of the
        # way, so that placing one cannot close another not yet placed.
        targets = [0, 1, 2, *request.get("fds", [])]
        moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, max(targets) + 1) for fd in fds]
        for fd in fds:
            os.close(fd)
        for target, fd in zip(targets, moved):
            os.dup2(fd, target)
            os.close(fd)
        for name in [name for name in os.environ if name.startswith(_SET_BY_PYTEST)]:
            del os.environ[name]
        os.environ.update({name: value for name, value in request["env"].items() if name.startswith(_SET_BY_PYTEST)})
        _requested_environment = dict(request["env"])
        # As ``python -u``: unbuffered output, over the new file descriptors.
        encoding = sys.stdout.encoding
        sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding=encoding)
        sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding=encoding,
                                                       write_through=True)
        sys.stderr = sys.__stderr__ = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding=encoding,
                                                       errors="backslashreplace", write_through=True)
        sys.argv = ["-c", *request.get("args", [])]
        main = types.ModuleType("__main__")  # a fresh one, as ``python -c`` has
        main.__dict__["__builtins__"] = builtins
        sys.modules["__main__"] = main
        if request["code"] == _EXECNET_BOOTSTRAP:
            source = eval(sys.stdin.readline())  # what the bootstrap line itself does
            exec(compile(source, _source_file(source), "exec"), main.__dict__)
        else:
            exec(compile(request["code"], "<string>", "exec"), main.__dict__)
        code = 0
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        exit_at_once(code)
