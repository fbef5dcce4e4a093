"""The argv and environment that run a user's command under libperfatlas-ipm.so.

The library reaches the ranks through their environment: LD_PRELOAD loads it, PERFATLAS_IPM_DIR
says where to write. A launcher (mpirun, mpiexec) must be told to export them to the ranks, each
MPI in its own words, and the launcher itself is not profiled:
  Open MPI      mpirun -x LD_PRELOAD=LIB -x PERFATLAS_IPM_DIR=DIR ...
  MPICH/hydra   mpiexec -genv LD_PRELOAD LIB -genv PERFATLAS_IPM_DIR DIR ...
A plain program (one process, MPI's singleton init) gets them in its environment directly.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from perfatlas.common.errors import UserError
from perfatlas.launch.build_parts import mpi_family, not_built
from perfatlas.launch.launchers import detect_flavour
from perfatlas.launch.native import bin_dir

LIBRARY = "libperfatlas-ipm.so"
# mpirun, mpiexec, mpirun.openmpi, mpiexec.mpich, mpiexec.hydra, orterun ...
LAUNCHER = re.compile(r"^(mpirun|mpiexec|orterun)([.-][\w.-]+)?$")


@dataclass(frozen=True)
class ProfiledCommand:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)  # added to perfatlas's own environment
    program: str = ""  # the profiled program as the user named it, for messages
    mpi: str | None = None  # "openmpi" or "mpich" when a launcher starts the ranks


FAMILY_NAMES = {"openmpi": "Open MPI", "mpich": "MPICH"}


def library(family: str | None = None) -> Path:
    """libperfatlas-ipm.so for MPI `family` ("openmpi", "mpich"; None: the build's own): beside
    the executables for the build's MPI, in a folder of the family's name for the other one
    (native/ipm/CMakeLists.txt). A profiler of another MPI than the program's would load two MPI
    libraries into it, and every rank would abort: refused in one sentence."""
    absent = not_built(("MPI",))
    if absent is not None:
        raise UserError(f"perfatlas-ipm is {absent}; rebuild with an MPI (docs/install.md)")
    own = mpi_family()
    path = bin_dir() / LIBRARY
    if family is not None and own is not None and family != own:
        path = bin_dir() / family / LIBRARY
        if not path.is_file():
            raise UserError(
                f"this launcher starts {FAMILY_NAMES.get(family, family)} programs, and this "
                f"perfatlas-ipm is built for {FAMILY_NAMES.get(own, own)} alone (its ranks would "
                "load two MPI libraries and abort); rebuild where that MPI's compiler wrapper "
                f"mpicc.{family} is found, or with it as the build's MPI (docs/install.md)"
            )
    if not path.is_file():
        raise UserError(
            f"perfatlas-ipm is not built: {path} is missing; rebuild with an MPI (make install, "
            "docs/install.md)"
        )
    return path


def _found(word: str) -> str:
    """The executable a command word names, else one sentence saying why it cannot run."""
    path = shutil.which(word)
    if path:
        return path
    if "/" in word and Path(word).is_file():
        raise UserError(f"{word} is not executable (chmod +x {word})")
    raise UserError(f"the command {word} was not found (no such file, and not on PATH)")


# How many words follow the launcher options that take values (Open MPI's mpirun, MPICH's
# hydra), so that a value that is an executable (an rsh agent) is not taken for the program.
OPTION_VALUES = {
    **dict.fromkeys(("--mca", "-mca", "--gmca", "-gmca", "-genv", "-env"), 2),
    **dict.fromkeys(
        ("-np", "-n", "--np", "--n", "-c", "-x", "--hostfile", "-hostfile", "--machinefile",
         "-machinefile", "-f", "--host", "-host", "-H", "-hosts", "--rankfile", "-rf",
         "--map-by", "-map-by", "--rank-by", "-rank-by", "--bind-to", "-bind-to", "--npernode",
         "-npernode", "-N", "-ppn", "--ppr", "-ppr", "--prefix", "--wdir", "-wdir", "--cpu-list",
         "--cpu-set", "--timeout", "--output-filename", "-launcher", "-launcher-exec",
         "-genvlist", "-envlist", "-iface", "-rmk", "-configfile", "--tune", "-am"),
        1,
    ),
}  # fmt: skip


def _launcher_words(words: list[str]) -> tuple[list[tuple[int, int]], int]:
    """The launcher's options among its arguments, as (start, number of words), and where the
    program it starts is: the first word that is an executable, neither an option nor an
    option's value (len(words) where none is)."""
    found, i = [], 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-"):
            if not word.isdigit() and shutil.which(word):
                break
            i += 1  # a value of an option not listed: not the program
            continue
        taken = 0 if "=" in word else OPTION_VALUES.get(word, 0)
        found.append((i, 1 + taken))
        i += 1 + taken
    return found, min(i, len(words))


def launcher_options(words: list[str]) -> list[tuple[int, int]]:
    """The launcher's options among its arguments, as (start, number of words)."""
    return _launcher_words(words)[0]


def program_index(words: list[str]) -> int:
    """Where in a launcher's arguments the program it starts is (len(words) where none is)."""
    return _launcher_words(words)[1]


def _program(words: list[str]) -> str:
    """The program a launcher starts, as the user named it."""
    i = program_index(words)
    return words[i] if i < len(words) else shlex.join(words)


# The library's settings a user gives perfatlas in its environment, passed to the ranks with
# the launcher's exports (a launcher does not forward arbitrary variables to other hosts).
SETTINGS = ("PERFATLAS_IPM_CALLSTACK", "PERFATLAS_IPM_TABLE_SIZE", "PERFATLAS_IPM_UNWINDER")
MAX_CALLSTACK = 8  # PA_IPM_MAX_FRAMES (native/ipm/ipm.h)
UNWINDERS = ("libunwind", "backtrace")  # native/ipm/sites.c


def _user_settings() -> dict[str, str]:
    found = {name: os.environ[name] for name in SETTINGS if os.environ.get(name)}
    depth = found.get("PERFATLAS_IPM_CALLSTACK")
    if depth is not None and not (depth.isdigit() and int(depth) <= MAX_CALLSTACK):
        raise UserError(
            f"PERFATLAS_IPM_CALLSTACK={depth!r} is not a number of frames from 0 (no call sites) "
            f"to {MAX_CALLSTACK}"
        )
    unwinder = found.get("PERFATLAS_IPM_UNWINDER")
    if unwinder is not None and unwinder not in UNWINDERS:
        raise UserError(
            f"PERFATLAS_IPM_UNWINDER={unwinder!r} is neither libunwind (the default where "
            "libunwind.so.8 loads) nor backtrace (glibc's)"
        )
    return found


def profiled(
    command: list[str],
    folder: Path,
    lib: Path | None = None,
    settings: dict[str, str] | None = None,
) -> ProfiledCommand:
    """`command` as the user gave it, changed only to load `lib` into its ranks (by default the
    library of the launcher's MPI), writing `folder`; `settings` are further PERFATLAS_IPM_*
    variables for the ranks (e.g. the table size), over those of SETTINGS the user's environment
    gives."""
    if not command:
        raise UserError(
            "no command to profile: give it after --, e.g. perfatlas profile -- mpirun -np 4 ./app"
        )
    launcher = _found(command[0])
    flavour = detect_flavour(launcher) if LAUNCHER.match(Path(command[0]).name) else None
    if lib is None:
        lib = library(flavour.family if flavour and flavour.family in FAMILY_NAMES else None)
    preload = ":".join(filter(None, [str(lib), os.environ.get("LD_PRELOAD")]))
    variables = {
        "LD_PRELOAD": preload,
        "PERFATLAS_IPM_DIR": str(folder),
        **_user_settings(),
        **(settings or {}),
    }
    if flavour is None:
        return ProfiledCommand(list(command), variables, command[0])
    if flavour.family == "openmpi":
        exports = [word for name, value in variables.items() for word in ("-x", f"{name}={value}")]
    elif flavour.family == "mpich":
        exports = [word for name, value in variables.items() for word in ("-genv", name, value)]
    else:
        raise UserError(
            f"cannot tell which MPI {command[0]} belongs to ('{flavour.version}' names neither "
            "Open MPI nor MPICH), so perfatlas does not know how to export LD_PRELOAD to its ranks"
        )
    argv = [command[0], *exports, *command[1:]]
    return ProfiledCommand(argv, {}, _program(command[1:]), flavour.family)
