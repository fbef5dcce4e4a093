"""perfatlas.common.background: work in a thread whose value and errors come back to the caller,
and whose log records and warnings are held until then, at the lowest priority meanwhile."""

from __future__ import annotations

import logging
import os
import sys
import threading
import warnings

import pytest

from perfatlas.common import background
from perfatlas.common.background import LOWEST_PRIORITY, Background, may_raise_priority

WAIT_S = 60.0  # a bound on waiting for the other thread, not a measured time


class Emitted(logging.Handler):
    """Records as they reach a handler, with the thread that wrote them."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, int]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.seen.append((record.getMessage(), threading.get_ident()))


def test_the_value_comes_back_and_the_work_ran_in_another_thread():
    with Background(threading.get_ident) as job:
        assert job.result() != threading.get_ident()


def test_an_error_of_the_work_is_raised_by_result_and_not_by_leaving_the_block():
    def fails() -> None:
        raise ValueError("no matplotlib here")

    with Background(fails) as job:
        pass  # leaving waits for the work, and raises nothing
    with pytest.raises(ValueError, match="no matplotlib here"):
        job.result()


def test_log_records_of_the_work_are_held_and_written_by_result_in_the_caller_s_thread():
    logger = logging.getLogger("perfatlas.test.background")
    handler, logged, checked = Emitted(), threading.Event(), threading.Event()
    logger.addHandler(handler)

    def speaks() -> None:
        logger.warning("building the font cache")
        logged.set()
        checked.wait(WAIT_S)

    try:
        with Background(speaks) as job:
            assert logged.wait(WAIT_S)
            logger.warning("the caller's own")  # the caller's records pass at once
            assert handler.seen == [("the caller's own", threading.get_ident())]
            checked.set()
            job.result()
        assert handler.seen[1:] == [("building the font cache", threading.get_ident())]
        assert job._hold not in handler.filters  # the handler is as it was
    finally:
        logger.removeHandler(handler)


def test_warnings_of_the_work_are_held_and_shown_by_result(monkeypatch):
    shown: list[tuple[str, int]] = []

    def show(message, *where) -> None:
        shown.append((str(message), threading.get_ident()))

    monkeypatch.setattr(warnings, "showwarning", show)
    warned, checked = threading.Event(), threading.Event()

    def warns() -> None:
        warnings.warn("a cache directory that cannot be written", stacklevel=1)
        warned.set()
        checked.wait(WAIT_S)

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        with Background(warns) as job:
            assert warned.wait(WAIT_S)
            assert shown == []
            checked.set()
            job.result()
        assert shown == [("a cache directory that cannot be written", threading.get_ident())]
        assert warnings.showwarning is show  # the hook is given back


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread nice is Linux's")
def test_the_work_runs_at_the_lowest_priority_where_it_can_be_raised_again():
    entered, read = threading.Event(), threading.Event()
    own = os.getpriority(os.PRIO_PROCESS, 0)
    seen: list[int] = []

    def priority() -> None:
        entered.wait(WAIT_S)  # lowered by the time the block is entered
        seen.append(os.getpriority(os.PRIO_PROCESS, 0))
        read.set()

    with Background(priority) as job:
        entered.set()
        assert read.wait(WAIT_S)  # read before result() gives it the caller's priority back
        job.result()
    assert seen == [LOWEST_PRIORITY if may_raise_priority(own) else own]
    assert os.getpriority(os.PRIO_PROCESS, 0) == own


@pytest.mark.parametrize(
    "limit, capabilities, may",
    [
        ((0, 0), "0000000000000000", False),  # an ordinary user: RLIMIT_NICE 0, no capability
        ((0, 0), f"{1 << 23:016x}", True),  # CAP_SYS_NICE alone
        ((20, 20), "0000000000000000", True),  # RLIMIT_NICE reaching nice 0
        ((15, 15), "0000000000000000", False),  # reaching nice 5 only
    ],
)
def test_the_priority_is_lowered_only_where_it_can_be_raised_again(
    monkeypatch, limit, capabilities, may
):
    monkeypatch.setattr(background.resource, "getrlimit", lambda which: limit)
    status = f"Name:\tperfatlas\nCapInh:\t0000000000000000\nCapEff:\t{capabilities}\n"
    monkeypatch.setattr(background.Path, "read_text", lambda path: status)
    assert may_raise_priority(0) is may
