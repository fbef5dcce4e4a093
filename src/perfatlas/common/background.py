"""Work done in a thread while the caller waits on something else: `perfatlas profile` imports
what its report draws with while the profiled program runs, instead of after it ends.

Where this process may raise a thread's priority again (sched(7): CAP_SYS_NICE, or an RLIMIT_NICE
that reaches back), the work runs at the lowest priority (nice 19, Linux's per-thread nice value),
taking only the CPU the profiled program leaves idle, until the caller asks for its result: it is
then what the caller waits for, and gets the caller's priority back. Elsewhere it runs at the
caller's priority throughout: lowered for good, it would crawl after the program wherever other
processes keep every core busy. Nothing it says is written while it runs, so that no line of
perfatlas falls amid the program's output: its log records and its warnings (the two ways a
library speaks; it must not print) are held and given to their handlers in the caller's thread
by `result()`, which also raises what the work raised.
"""

from __future__ import annotations

import contextlib
import logging
import os
import resource
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, TypeVar

T = TypeVar("T")

LOWEST_PRIORITY = 19  # nice value: beside a busy process at nice 0, 1.4 % of the CPU (CFS weights)
PER_THREAD_NICE = sys.platform.startswith("linux")  # elsewhere nice belongs to the process
CAP_SYS_NICE = 23  # its bit in /proc/self/status's CapEff (linux/capability.h)


def may_raise_priority(nice: int) -> bool:
    """Whether this process may set a thread's nice value back to `nice` from 19 (sched(7)):
    with CAP_SYS_NICE, or where RLIMIT_NICE allows 20 - nice."""
    soft = resource.getrlimit(resource.RLIMIT_NICE)[0]
    if soft == resource.RLIM_INFINITY or soft >= 20 - nice:
        return True
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return False
    effective = [line.split()[1] for line in status.splitlines() if line.startswith("CapEff:")]
    return bool(effective) and bool(int(effective[0], 16) >> CAP_SYS_NICE & 1)


def _handlers() -> set[logging.Handler]:
    """Every handler a record can reach now: each logger's, and the last resort (stderr)."""
    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    found = {h for logger in loggers if isinstance(logger, logging.Logger) for h in logger.handlers}
    return found | ({logging.lastResort} if logging.lastResort else set())


class Background(Generic[T]):
    """`work()` in a thread from `with Background(work) as job:` on; `job.result()` waits for it.
    Leaving the block waits too (an error of the work is then raised by result() alone)."""

    def __init__(self, work: Callable[[], T]):
        self._work = work
        self._value: T | None = None
        self._error: BaseException | None = None
        self._records: list[logging.LogRecord] = []
        self._warnings: list[tuple[Any, ...]] = []
        self._thread = threading.Thread(target=self._run, name="perfatlas-background")
        self._held_at: set[logging.Handler] = set()
        self._shown = warnings.showwarning
        self._done = False
        self._own = os.getpriority(os.PRIO_PROCESS, 0) if PER_THREAD_NICE else 0  # the caller's
        self._lowered = PER_THREAD_NICE and may_raise_priority(self._own)

    def __enter__(self) -> Background[T]:
        self._held_at = _handlers()
        for handler in self._held_at:
            handler.addFilter(self._hold)
        self._shown = warnings.showwarning
        warnings.showwarning = self._show  # the documented hook (warnings.showwarning)
        try:
            self._thread.start()
        except BaseException:  # no thread to be had: nothing held
            self._release()
            raise
        if self._lowered:
            with contextlib.suppress(OSError):  # the work may have ended already
                os.setpriority(os.PRIO_PROCESS, self._thread.native_id, LOWEST_PRIORITY)
        return self

    def __exit__(self, *exc: object) -> None:
        self._finish()

    def result(self) -> T:
        """What the work returned, once it is done; what it raised is raised here."""
        self._finish()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]

    def _run(self) -> None:
        try:
            self._value = self._work()
        except BaseException as error:  # raised again by result(), in the caller's thread
            self._error = error

    def _hold(self, record: logging.LogRecord) -> bool:
        """A handler's filter: the work's records are held (once: every handler a record reaches
        sees it, one after the other), the others pass."""
        if record.thread != self._thread.ident:
            return True
        if not self._records or self._records[-1] is not record:
            self._records.append(record)
        return False

    def _show(self, *shown: Any) -> None:
        if threading.get_ident() == self._thread.ident:
            self._warnings.append(shown)
        else:
            self._shown(*shown)

    def _finish(self) -> None:
        if self._done:
            return
        self._done = True
        if self._lowered and self._thread.is_alive():
            with contextlib.suppress(OSError):  # it has just ended, or a sandbox refuses
                os.setpriority(os.PRIO_PROCESS, self._thread.native_id, self._own)
        self._thread.join()
        self._release()
        for record in self._records:
            logging.getLogger(record.name).handle(record)
        for shown in self._warnings:
            warnings.showwarning(*shown)

    def _release(self) -> None:
        """The handlers and the warnings hook as they were."""
        for handler in self._held_at:
            handler.removeFilter(self._hold)
        if warnings.showwarning == self._show:
            warnings.showwarning = self._shown
