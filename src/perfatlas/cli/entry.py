"""The perfatlas command line: the parser, assembled from the command groups (the commands_*
modules, each adding its own commands and their options), and main."""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from typing import NoReturn

from perfatlas import __version__
from perfatlas.cli import (
    commands_interference,
    commands_machine,
    commands_measure,
    commands_profile,
    commands_regression,
    commands_results,
)
from perfatlas.cli.options import DEFAULT_DB, MAX_REPEAT, chosen_executor
from perfatlas.common.errors import UserError, one_line

# The groups in the order --help lists their commands.
GROUPS = (
    commands_measure,
    commands_results,
    commands_profile,
    commands_regression,
    commands_machine,
    commands_interference,
)


class _Parser(argparse.ArgumentParser):
    """argparse's own refusals (a missing argument, a value of the wrong type) in one sentence
    and exit status 2, as every other refusal: its usage block is what --help is for."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("perfatlas").strip()
        where = f"{command}: " if command else ""
        self.exit(2, f"perfatlas: {where}{one_line(message)} (see '{self.prog} --help')\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="perfatlas",
        description="Characterize parallel machines and profile parallel programs.",
    )
    parser.add_argument("--version", action="version", version=f"perfatlas {__version__}")
    parser.add_argument(
        "--db",
        default=os.environ.get("PERFATLAS_DB", DEFAULT_DB),
        help="SQLite results database (default $PERFATLAS_DB or ./perfatlas.db)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    # --db may also follow the command (`perfatlas run --db x.db`); absent there, the top-level
    # value (or its default) stands.
    db_after_command = argparse.ArgumentParser(add_help=False)
    db_after_command.add_argument("--db", default=argparse.SUPPRESS, help="results database")

    def command(name: str, function, help: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help, parents=[db_after_command])
        p.set_defaults(function=function)
        return p

    for group in GROUPS:
        group.add_commands(command)
    return parser


_PASSED_THROUGH = ("--mpirun-args", "--sbatch-args")  # their values are other programs' options


def _join_option_values(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """An option's value that begins with '-' (`--tolerance -5%`, `--mpirun-args "--bind-to
    none"`): argparse reads such a word as an option and prints its usage instead of the one
    sentence the option's own check gives. Written `--tolerance=-5%`, it reaches that check (or
    is passed through untouched). A word that is an option of the command stays an option (but
    for the two above), and the words of a profiled command (after `--`, or from its first
    word on) are its own."""
    (commands,) = [a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    context, joined, i = parser, [], 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            return [*joined, *argv[i:]]
        if context is parser and word in commands:
            context = commands[word]
        elif not word.startswith("-") and any(
            a.nargs == argparse.REMAINDER for a in context._actions
        ):
            return [*joined, *argv[i:]]
        action = context._option_string_actions.get(word)
        if action is None or action.nargs is not None or i + 1 == len(argv):
            joined.append(word)
            i += 1
            continue
        value = argv[i + 1]
        if not value.startswith("-"):
            joined += [word, value]
            i += 2
        elif word in _PASSED_THROUGH or value not in context._option_string_actions:
            joined.append(f"{word}={value}")
            i += 2
        else:  # the next word is an option: argparse says the value is missing
            joined.append(word)
            i += 1
    return joined


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(_join_option_values(sys.argv[1:] if argv is None else argv, parser))
    if not 1 <= getattr(args, "repeat", 1) <= MAX_REPEAT:
        print(f"perfatlas: --repeat must be from 1 to {MAX_REPEAT}", file=sys.stderr)
        return 2
    try:
        args.executor = chosen_executor(args)
        return args.function(args)
    except UserError as error:
        print(f"perfatlas: {error}", file=sys.stderr)
    except sqlite3.DatabaseError as error:  # the store says its own; this is the last net
        print(f"perfatlas: database {args.db}: {error}", file=sys.stderr)
    except OSError as error:  # a full disk, a file that vanished: the system's own words
        where = f" {error.filename}" if error.filename else ""
        print(f"perfatlas: cannot use{where}: {error.strerror or error}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
