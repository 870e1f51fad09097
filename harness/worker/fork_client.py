"""The process pytest-xdist starts for a worker when the run has a fork server
(``harness.worker.forkserver``): it stands in for the worker's interpreter.

xdist (through execnet) starts ``PYTHON -u -c BOOTSTRAP`` and talks to it over its stdin and
stdout. With a fork server, PYTHON is ``python .../harness/worker/fork_client.py SOCKET``: this
process hands its stdin, stdout and stderr to the server, which forks a worker that already
holds torch and the test modules and runs the bootstrap there. This process then stays as
the worker's stand-in for xdist: a signal sent to it goes on to the worker, and it ends
the way the worker ended (the same exit code, or killed by the same signal), so that a
crash reads exactly as it would without a fork server.

Run as a script, not as a module of the package: the standard library only, so it starts
in milliseconds from any working directory.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

# What the client and the server send each other, one message per packet.
MAX_MESSAGE = 1 << 20
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2)


def request(code: str, args: list[str], fds: list[int]) -> bytes:
    """What a client asks for: a process running ``code`` as ``python -c CODE ARGS`` would, in
    this process's working directory and environment, holding the descriptors ``fds`` it
    inherited beyond stdin, stdout and stderr (sent with the request, under the same numbers)."""
    return json.dumps({"code": code, "args": args, "fds": fds, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()


def inherited_fds() -> list[int]:
    """The descriptors this process was started with beyond 0, 1 and 2 (Linux)."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            os.fstat(fd)  # the listing's own descriptor is closed by now
        except OSError:
            continue
        if fd > 2:
            found.append(fd)
    return sorted(found)


def main(argv: list[str]) -> int:
    # argv: SOCKET, then what execnet appends to the interpreter: -u [-B] -c BOOTSTRAP (or
    # any other interpreter flags, -c CODE and the code's arguments).
    path, interpreter_args = argv[0], argv[1:]
    at = interpreter_args.index("-c") + 1
    code, args = interpreter_args[at], interpreter_args[at + 1:]
    extra = inherited_fds()
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        connection.connect(path)
        socket.send_fds(connection, [request(code, args, extra)], [0, 1, 2, *extra])
        answer = connection.recv(MAX_MESSAGE).decode()
        pid = int(answer)
    except (OSError, ValueError):
        # No server, or one that cannot fork this process as it is (answer says why): it
        # starts its own interpreter instead, as it would with no server at all.
        connection.close()
        _start_interpreter(interpreter_args)
    for fd in extra:  # the child holds them now: a pipe's end must close when the child's does
        os.close(fd)
    for signum in FORWARDED:
        signal.signal(signum, lambda number, frame: _forward(pid, number))
    status = b""
    while not status:
        try:
            status = connection.recv(MAX_MESSAGE)
        except InterruptedError:
            continue
        if not status:  # the server is gone: so is the worker's keeper
            _forward(pid, signal.SIGKILL)
            return 1
    code = os.waitstatus_to_exitcode(int(status.decode()))
    if code < 0:  # killed by a signal: so is its stand-in
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code if code >= 0 else 128 - code


def _start_interpreter(interpreter_args: list[str]) -> None:
    import subprocess

    executable = sys.executable
    os.execv(executable, [executable, *subprocess._args_from_interpreter_flags(), *interpreter_args])


def _forward(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


if __name__ == "__main__":
    sys.stdout.flush()
    os._exit(main(sys.argv[1:]))
