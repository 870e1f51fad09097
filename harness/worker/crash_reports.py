"""A dead worker's last words, read by the controller (``harness.run.engine``) from the
worker's log: what the test printed since its ``START_MARK``, then faulthandler's dump of a
fatal signal or of the watchdog that ended a stuck test. Plain text in, plain text out: no
torch, no pytest."""

from __future__ import annotations

import re
from pathlib import Path

from harness.worker.frames import in_compile, in_stdlib, short_path
from harness.worker.protocol import START_MARK

_TAIL_CHARS = 6000
# faulthandler's first line when its watchdog (dump_traceback_later) fires.
_WATCHDOG_HEADER = re.compile(r"^Timeout \(\d+:\d\d:\d\d(\.\d+)?\)!", re.MULTILINE)
_FATAL_SIGNAL = re.compile(r"^Fatal Python error: (.+)$", re.MULTILINE)
_SIGNAL_NAMES = {
    "Segmentation fault": "SIGSEGV",
    "Aborted": "SIGABRT",
    "Bus error": "SIGBUS",
    "Floating-point exception": "SIGFPE",
    "Floating point exception": "SIGFPE",
    "Illegal instruction": "SIGILL",
}
# Frames of the machinery between the worker's main loop and the test: noise in a dump.
_ENGINE_FRAME = re.compile(r'File ".*[/\\](_pytest|pluggy|execnet|xdist|unittest)[/\\]|File "<string>"')
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<function>.+)$')
_DUMP_START = re.compile(r"^(Fatal Python error: |Timeout \(\d+:\d\d:\d\d)", re.MULTILINE)
_THREAD_HEADER = re.compile(r"^(Current thread|Thread) 0x[0-9a-fA-F]+ .*:$|^Stack \(most recent call first\):$")
_EXTENSION_MODULES = re.compile(r"^Extension modules: .*?(\(total: (\d+)\))?$")


def last_output(log: Path, nodeid: str) -> str:
    """What the worker wrote from the start of this test until it died."""
    try:
        text = log.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    start = text.rfind(f"{START_MARK}{nodeid} =====\n")
    return text[start:].split("\n", 2)[-1] if start >= 0 else text[-_TAIL_CHARS:]


def stopped_by_watchdog(output: str) -> bool:
    """Whether the worker's watchdog ended the test (it was stuck), rather than a crash."""
    return bool(_WATCHDOG_HEADER.search(output))


def while_compiling(output: str) -> bool:
    """Whether the thread that crashed or hung was inside a backend's compile."""
    return in_compile(_current_thread(output))


def death_cause(output: str, exit_code: int | None) -> str:
    fatal = _FATAL_SIGNAL.search(output)
    if fatal:
        message = fatal.group(1).strip()
        name = _SIGNAL_NAMES.get(message)
        return f"{name} ({message})" if name else message
    if exit_code is not None and exit_code < 0:
        import signal

        try:
            return f"killed by {signal.Signals(-exit_code).name}"
        except ValueError:
            return f"killed by signal {-exit_code}"
    if exit_code is not None:
        return f"process exited with code {exit_code} in the middle of the test (os._exit or exit() from native code)"
    return "process ended in the middle of the test (cause unknown)"


def _tidy_dump(output: str) -> str:
    """A faulthandler dump without the test runner's frames, which only bury the test's."""
    lines, skipped = [], 0
    for line in output.splitlines():
        if _ENGINE_FRAME.search(line):
            skipped += 1
            continue
        if skipped:
            lines.append(f"  ... ({skipped} test-runner frames)")
            skipped = 0
        lines.append(line)
    if skipped:
        lines.append(f"  ... ({skipped} test-runner frames)")
    return "\n".join(lines).strip()


def crash_details(output: str) -> str:
    """A dead worker's last words, most useful first: the faulthandler header and the Python
    stack of the thread that crashed (or hung), then the other threads, then what the test
    printed before. faulthandler writes the list of loaded extension modules last, where a
    tail would keep it and cut the stack; it is reduced to a count."""
    start = _DUMP_START.search(output)
    if start is None:
        return _tidy_dump(output)[-_TAIL_CHARS:]
    printed, dump = output[: start.start()], output[start.start():]
    header, current, others, block, modules_line = [], [], [], None, ""
    for line in dump.splitlines():
        modules = _EXTENSION_MODULES.match(line)
        if modules:
            modules_line = f"Extension modules: {modules.group(2) or 'many'} loaded (list left out)"
            block = None
            continue
        if _THREAD_HEADER.match(line):
            block = current if not line.startswith("Thread ") else others
            if block is others and others:
                others.append("")
        elif block is not None and not line.startswith("  "):
            block = None
        (block if block is not None else header).append(line)
    parts = [_tidy_dump("\n".join(header + [""] + current)), _tidy_dump("\n".join(others)), modules_line]
    text = "\n\n".join(part for part in parts if part)
    room = _TAIL_CHARS - len(text)
    if printed.strip() and room > 200:
        text += "\n\n--- output of the test before it ended ---\n" + _tidy_dump(printed)[-(room - 50):]
    return text[: 2 * _TAIL_CHARS]


def _current_thread(output: str) -> str:
    current = output.find("Current thread")
    return output[current:] if current >= 0 else output


def innermost_frame(output: str) -> str:
    """Where the thread that crashed or hung was: its newest frame outside the standard
    library (a backend's code, or torch's)."""
    section = _current_thread(output)
    frames = [match for match in map(_FRAME.match, section.splitlines())
              if match and not _ENGINE_FRAME.search(match.group(0))]
    chosen = next((frame for frame in frames if not in_stdlib(frame["file"])), frames[0] if frames else None)
    return f"{chosen['function']} ({short_path(chosen['file'])}:{chosen['line']})" if chosen else ""
