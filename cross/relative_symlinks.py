"""Make an arm64 Debian tree usable as a cross-compiler's sysroot (docs/arm64.md): its absolute
symbolic links (libm.so -> /lib/aarch64-linux-gnu/libm.so.6, the alternatives of libmpi.so,
libblas.so.3, cblas.h, ...) resolve inside the tree when it is run as a chroot, but on this host
they point at this host's files. Each becomes the relative link to the same place in the tree, so
it resolves the same way in both (as `symlinks -c` does). Idempotent: run it after every apt-get.

    python3 cross/relative_symlinks.py TREE
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# The folders the compiler and the linker read: headers, libraries, and the alternatives the
# Debian links go through.
SEARCHED = ("usr/include", "usr/lib", "etc/alternatives")


def make_relative(tree: Path) -> int:
    """Rewrites every absolute link under SEARCHED in `tree`; how many it rewrote."""
    rewritten = 0
    for folder in SEARCHED:
        for parent, dirs, files in os.walk(tree / folder):
            for name in dirs + files:
                link = os.path.join(parent, name)
                target = os.readlink(link) if os.path.islink(link) else ""
                if target.startswith("/"):
                    os.unlink(link)
                    os.symlink(os.path.relpath(str(tree) + target, parent), link)
                    rewritten += 1
    return rewritten


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not (Path(argv[0]) / "usr/lib").is_dir():
        print("relative_symlinks: give the arm64 tree's folder (it has a usr/lib)", file=sys.stderr)
        return 2
    print(f"relative_symlinks: {make_relative(Path(argv[0]).resolve())} links made relative")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
