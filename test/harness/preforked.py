"""The collecting child of the self-tests' and proofs' runs, forked from a process that
imported torch already.

Every run of the command starts a child that imports torch and collects the tests
(harness/run/collection.py): 3 to 5 s of a core before anything else, paid by each of the
tens of runs ``run_cli`` makes in the self-tests, one after another. Here one process
imports torch, Dynamo and pytest once, and serves as the fork server
(harness/worker/forkserver.py) those children are forked from: each starts with the
imports done, then reads its settings and imports the scenario modules as a fresh one does.

The fork server refuses what a fresh interpreter would not equal (another environment or
working directory, a source file changed since): that child then starts an interpreter of
its own, as without this module. Runs whose process boundary is under test use
``spawn_cli`` and never come here.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from harness.run.collection import ForkServer
from harness.worker import forkserver

# What the server imports before it forks anything: what every collecting child imports
# first, whatever its settings (the scenario modules and backends depend on them).
_START = ("import os, sys, warnings; started_with = dict(os.environ); "
          "warnings.filterwarnings('ignore', message='Failed to initialize NumPy'); "
          "import torch, torch._dynamo, pytest, xdist; "
          f"sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r}); "
          "from harness.worker import forkserver; from pathlib import Path; "
          "forkserver.serve(forkserver.listen(Path(sys.argv[1])), int(sys.argv[2]), started_with)")

# (working directory, environment, interpreter flags) -> its server, most recent last. The
# in-process runs change this process's environment now and then (inductor sets a variable
# or two on first use), so a server started for one combination would refuse every later one.
_servers: dict[tuple, ForkServer] = {}
_KEPT = 3  # each holds torch and Dynamo: about 400 MB
# Combinations seen once: a server costs a little more than one interpreter (it imports pytest
# too), so it is started for a combination's second collection, not for a one-off.
_seen: set[tuple] = set()


def interpreter() -> list[str] | None:
    """The command that stands for ``python`` for a collecting child in this working directory
    and environment; None where a fresh interpreter is needed (not Linux, or DYNAMO_SUITE_FORK=0)."""
    if not sys.platform.startswith("linux") or os.environ.get(forkserver.FORK) == "0":
        return None
    flags = subprocess._args_from_interpreter_flags()
    key = (os.getcwd(), tuple(sorted(os.environ.items())), tuple(flags))
    server = _servers.pop(key, None)
    if server is None and key not in _seen:
        _seen.add(key)
        return None
    if server is None or server.process.poll() is not None:
        server = _start(flags)
    _servers[key] = server
    for oldest in list(_servers)[:-_KEPT]:
        _servers.pop(oldest).close()
    return [sys.executable, *flags, str(forkserver.CLIENT), str(server.path)]


def _start(flags: list[str]) -> ForkServer:
    directory = tempfile.TemporaryDirectory(prefix="dynamo-suite-preforked-")
    path = Path(directory.name) / "fork.sock"
    ready_read, ready_write = os.pipe()
    process = subprocess.Popen([sys.executable, *flags, "-c", _START, str(path), str(ready_write)],
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               pass_fds=(ready_write,))
    os.close(ready_write)
    try:
        os.read(ready_read, 1)  # nothing: it died, and each client falls back to an interpreter
    finally:
        os.close(ready_read)
    return ForkServer(path, process, directory)


@atexit.register
def _stop() -> None:
    for server in _servers.values():
        server.close()
