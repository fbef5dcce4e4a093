"""What a user gives that becomes part of a file name, a folder name or a script line, checked
before any file is made (docs/safety/launch.md).

A *name* (a scenario's, a scenario job's, a Slurm account or partition, a job folder's) becomes
one path component as it is: 1 to 64 characters from A-Z a-z 0-9 . _ -, the first a letter or a
digit. So no name is '.', '..' or hidden, none holds a '/', none reads as a command-line option,
and none needs quoting anywhere. A *path* a script names (a job folder) may hold any character
but the control characters (a newline would end the script line it is on; NUL ends a C string).
"""

from __future__ import annotations

import re

from perfatlas.common.errors import UserError

MAX_NAME = 64
MAX_PATH = 4096  # PATH_MAX on Linux
NAME_RULE = f"1 to {MAX_NAME} letters, digits, '.', '_' or '-', the first a letter or a digit"
_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_NAME - 1}}}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
SHOWN = 40  # characters of a refused value quoted in the sentence


def shown(value: object) -> str:
    """A value quoted on one line (control characters escaped), cut after SHOWN characters."""
    if isinstance(value, str) and len(value) > SHOWN:
        return repr(value[:SHOWN]) + f"... ({len(value)} characters)"
    text = repr(value)
    return text if len(text) <= 2 * SHOWN else text[: 2 * SHOWN] + "..."


def name_problem(value: object) -> str | None:
    """Why `value` cannot be a name, or None."""
    if not isinstance(value, str):
        return f"is a {type(value).__name__}, not a name"
    if _NAME.fullmatch(value):
        return None
    return f"is not a safe name: use {NAME_RULE}"


def check_name(value: object, field: str) -> str:
    """`value` as it is, or one sentence naming `field` and what it may hold."""
    problem = name_problem(value)
    if problem:
        raise UserError(f"{field} {shown(value)} {problem}")
    return value  # type: ignore[return-value]


def check_path_text(path: object, field: str) -> str:
    """A path that a script or a command line will name: no control character, at most
    MAX_PATH characters."""
    text = str(path)
    if _CONTROL.search(text):
        raise UserError(
            f"{field} {shown(text)} holds a control character (a newline, a tab, NUL ...), "
            "which no script line can carry: choose a path without one"
        )
    if len(text) > MAX_PATH:
        raise UserError(
            f"{field} is {len(text)} characters long, more than the {MAX_PATH} a path may have"
        )
    return text
