"""Hostile input held to the README's promise: a valid value, or one sentence (a UserError, exit
status 2), never another exception, never a hang, never memory exhaustion.

`outcome(call)` runs a call under a time limit (SIGALRM) and an address-space limit (RLIMIT_AS),
so that a parser that hangs or expands a huge input fails its test instead of the machine.
"""

from __future__ import annotations

import contextlib
import resource
import signal
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

from perfatlas.common.errors import UserError

HANG_SECONDS = 20
MEMORY_HEADROOM = 2 * 2**30  # what one call may add to the address space


class Hang(Exception):
    pass


def _address_space() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    return 0


@contextlib.contextmanager
def bounded(seconds: int = HANG_SECONDS, headroom: int = MEMORY_HEADROOM) -> Iterator[None]:
    """Raise Hang after `seconds`, MemoryError past `headroom` more bytes of address space."""

    def alarm(signum, frame):
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _address_space() + headroom
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def outcome(call: Callable[[], object]) -> str:
    """'value', 'sentence' (a one-line UserError), or what went wrong: 'hang', 'out of memory',
    'traceback: <exception>', 'several lines: <message>'."""
    try:
        with bounded():
            call()
    except UserError as error:
        text = str(error)
        if not text.strip() or "\n" in text.strip():
            return f"several lines: {text!r}"
        return "sentence"
    except Hang:
        return "hang"
    except MemoryError:
        return "out of memory"
    except Exception as error:  # noqa: BLE001 - any other exception is what the tests count
        return f"traceback: {type(error).__name__}: {error}"
    return "value"


def database_dump(path: Path | str) -> list[str]:
    """Every row of a database, read without writing (to compare before and after a refusal)."""
    path = Path(path)
    if not path.exists():
        return []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return list(db.iterdump())
    finally:
        db.close()
