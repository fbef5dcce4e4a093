"""What may reach a batch script, and how it is written there (docs/safety/launch.md).

bash reads a `#SBATCH` line as a comment and sbatch reads it as options: sbatch splits it into
words as a shell would (quotes group, a backslash escapes the next character, an unescaped '#'
starts a comment: Slurm's sbatch/opt.c, _get_argument), but never across a line. A newline in a
value would therefore end the comment and make the rest a command of the script. So the values
of `#SBATCH` lines are checked (a Slurm time, a Slurm name) and paths are double-quoted for
sbatch; command lines are written with shlex.join, which quotes every word for bash.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from perfatlas.common.errors import UserError
from perfatlas.common.safe_names import check_name, check_path_text, shown

# sbatch --time: MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES,
# DAYS-HOURS:MINUTES:SECONDS, or no limit (man sbatch).
_TIME = re.compile(r"\d{1,9}(?::\d{1,9}){0,2}|\d{1,9}-\d{1,9}(?::\d{1,9}){0,2}|INFINITE|UNLIMITED")
_PLAIN = re.compile(r"[A-Za-z0-9._:/@%+=,-]+")  # written as it is: nothing sbatch would read
TIME_FORMS = (
    "MINUTES, MINUTES:SECONDS, HOURS:MINUTES:SECONDS, DAYS-HOURS, DAYS-HOURS:MINUTES or "
    "DAYS-HOURS:MINUTES:SECONDS (e.g. 30:00 or 1-12:00:00)"
)


def check_time(value: str) -> str:
    if not isinstance(value, str) or not _TIME.fullmatch(value):
        raise UserError(f"--time {shown(value)} is not a Slurm time limit: write {TIME_FORMS}")
    return value


def check_slurm_values(partition: str | None, account: str | None, time: str | None) -> None:
    """The values of --partition, --account and --time, before anything is written."""
    for option, value in (("--partition", partition), ("--account", account)):
        if value is not None:
            check_name(value, option)
    if time is not None:
        check_time(time)


def directive(option: str, value: object, pattern: bool = False) -> str:
    """`#SBATCH --OPTION=VALUE`; a value with anything but plain characters double-quoted for
    sbatch (a backslash before '"' and '\\'); `pattern`: a file name pattern (--output), whose '%' is written '%%'."""
    text = check_path_text(value, f"the value of #SBATCH --{option}")
    if pattern:
        text = text.replace("%", "%%")
    if _PLAIN.fullmatch(text):
        return f"#SBATCH --{option}={text}"
    quoted = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'#SBATCH --{option}="{quoted}"'


def check_words(words: Sequence[str]) -> None:
    """Words of a command line: NUL, which no argument can hold, is refused."""
    for word in words:
        if "\0" in word:
            raise UserError(f"the command word {shown(word)} holds NUL, which no argument can hold")


def command_line(words: Sequence[str]) -> str:
    """One bash command line, every word quoted (shlex.join)."""
    check_words(words)
    return shlex.join(words)
