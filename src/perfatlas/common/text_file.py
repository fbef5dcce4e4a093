"""The one reader of text files a user names (suites, scenarios, hostfiles): a regular file of at
most MAX_TEXT_BYTES, decoded as UTF-8; anything else is one sentence before a byte is read
(a FIFO would block the open and the read, /dev/zero would never end). TOML documents nested
deeper than tomllib's recursion reaches are one sentence too. And the one writer of the files a
user names for perfatlas's output (--json, -o, --junit, --report): a failure is one sentence
naming the file."""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import Any

from perfatlas.common.errors import UserError

MAX_TEXT_BYTES = 4 * 2**20  # 4 MiB: a suite, scenario or hostfile is a few kB

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a file")


def regular_file_problem(path: str | Path) -> str | None:
    """Why `path` is not a regular file to read ('does not exist', 'is not a regular file (a
    FIFO)'), or None; for a file another program reads (mpirun's hostfile, SLURM_CONF): only
    stat'ed, never opened, so a FIFO is not waited on."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "does not exist"
    except OSError as error:
        return f"cannot be read ({error.strerror})"
    return None if stat.S_ISREG(mode) else f"is not a regular file ({_kind(mode)})"


def read_text_file(path: str | Path, what: str, limit: int = MAX_TEXT_BYTES) -> str:
    """The text of `path` (a `what`: 'suite', 'scenario', 'hostfile', 'profile document'), at
    most `limit` bytes, else UserError."""
    try:  # O_NONBLOCK: opening a FIFO does not wait for a writer; a regular file ignores it
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        raise UserError(f"cannot read {what} {path}: {error.strerror}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise UserError(
                f"{what} {path} is not a regular file ({_kind(info.st_mode)}): give a text file"
            )
        if info.st_size > limit:
            raise UserError(
                f"{what} {path} is {info.st_size} bytes, more than the {limit // 2**20} "
                f"MiB a {what} may be"
            )
        with os.fdopen(os.dup(fd), "rb") as file:
            data = file.read(limit + 1)
    except OSError as error:
        raise UserError(f"cannot read {what} {path}: {error.strerror}") from None
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while being read
        raise UserError(f"{what} {path} is more than {limit // 2**20} MiB")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(
            f"{what} {path} is not UTF-8 text (byte 0x{data[error.start]:02x} at offset "
            f"{error.start}): save it as UTF-8"
        ) from None


def parse_toml(text: str, what: str) -> dict[str, Any]:
    """tomllib.loads; nesting too deep for its recursion is one sentence. Syntax errors stay
    tomllib.TOMLDecodeError, for the caller to place (perfatlas.scenario.locate)."""
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise UserError(
            f"{what} nests arrays or tables too deeply to read (a few hundred levels at most)"
        ) from None


def write_text_file(path: str | Path, text: str, what: str) -> None:
    """Write `text` to `path`, a file the user named for `what` ('the JUnit XML (--junit)');
    a failure (a full disk, /dev/full, a file that cannot be made) is one sentence naming it."""
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as error:
        raise UserError(f"cannot write {what} to {path}: {error.strerror or error}") from None
