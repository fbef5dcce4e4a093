"""C++ names (Itanium ABI, `_Z...`) demangled by binutils' c++filt: all of one resolution in one
subprocess, so that perfatlas needs no demangling package. Without c++filt, names stay mangled."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable

CXXFILT_TIMEOUT_S = 10.0


def is_mangled(name: str) -> bool:
    """An Itanium C++ ABI name (the mangling gcc and clang use on Linux); one token."""
    return name.startswith("_Z") and not any(c.isspace() for c in name)


def demangle(names: Iterable[str]) -> dict[str, str]:
    """Each mangled name of `names` -> its demangled form; {} when c++filt is absent or fails.

    c++filt reads one name a line and writes one line per name, in order."""
    mangled = sorted({name for name in names if is_mangled(name)})
    program = shutil.which("c++filt")
    if not mangled or program is None:
        return {}
    try:
        done = subprocess.run(
            [program],
            input="\n".join(mangled) + "\n",
            capture_output=True,
            text=True,
            timeout=CXXFILT_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    lines = done.stdout.splitlines()
    if done.returncode != 0 or len(lines) != len(mangled):
        return {}
    return dict(zip(mangled, lines))
