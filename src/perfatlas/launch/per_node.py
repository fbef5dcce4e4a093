"""A node-level executable on every node at once, each copy writing its own document.

The launcher (srun with one task per node, or mpirun --map-by ppr:1:node) starts the same small
shell wrapper on every node. The wrapper names its files after the node it runs on, read there:
$SLURMD_NODENAME under Slurm (the scheduler's name of the node), else the node's hostname; so the
host of every document is read back on the node, never assumed from what was asked:

    FOLDER/HOST.json    the executable's standard output: its perfatlas.result/1 document(s)
    FOLDER/HOST.err     its standard error
    FOLDER/HOST.status  its exit status, written last (the copy has finished)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from perfatlas.common.text_file import read_text_file

# sh -c WRAPPER FOLDER ARGV...: $0 is the folder, "$@" the command.
WRAPPER = (
    'h=${SLURMD_NODENAME:-$(hostname)}; "$@" >"$0/$h.json" 2>"$0/$h.err"; s=$?; '
    'echo $s >"$0/$h.status.tmp" && mv "$0/$h.status.tmp" "$0/$h.status"; exit $s'
)
_HOSTFILE_OPTIONS = ("--hostfile", "-hostfile", "--machinefile", "-machinefile", "-f")
_HOST_OPTIONS = ("--host", "-host", "-H", "-hosts")


def write_per_node(folder: str, argv: list[str]) -> list[str]:
    """The command that runs `argv` under the wrapper, writing into `folder`."""
    return ["sh", "-c", WRAPPER, str(folder), *argv]


def error_tail(text: str, lines: int = 3, limit: int = 400) -> str:
    """The last meaningful lines of an error output, joined into one line."""
    kept = [line.strip() for line in text.splitlines() if line.strip()]
    kept = [line for line in kept if not set(line) <= set("-*=")][-lines:]
    joined = " | ".join(kept)
    return joined if len(joined) <= limit else "..." + joined[-(limit - 3) :]


def node_name(host: str) -> str:
    """'node pa2', or a count such as '1 of 3 nodes' as it is."""
    return host if " " in host else f"node {host}"


def own_message(program: str, text: str) -> str | None:
    """The last line the native program wrote itself ('pa-mem-latency: ...'), if any."""
    own = [line.strip() for line in text.splitlines() if line.strip().startswith(f"{program}:")]
    return own[-1] if own else None


def hostfile_hosts(hostfile: str | None, mpirun_args: list[str]) -> list[str]:
    """The hosts named by a hostfile (--hostfile, or one among the mpirun arguments) or --host."""
    path, named = hostfile, []
    words = iter(mpirun_args)
    for word in words:
        option, _, value = word.partition("=")
        if option in _HOSTFILE_OPTIONS:
            path = value or next(words, None) or path
        elif option in _HOST_OPTIONS:
            hosts = value or next(words, "")
            named += [h.split(":")[0] for h in hosts.split(",") if h]
    if path and os.path.lexists(path):  # a missing one is mpirun's to say; a FIFO is refused
        for line in read_text_file(path, "hostfile").splitlines():
            words_of_line = line.split("#")[0].split()
            if words_of_line:
                named.append(words_of_line[0].split(":")[0])
    return list(dict.fromkeys(named))


@dataclass
class NodeOutput:
    """What the copies of one launch left: documents by host, and why the others have none."""

    documents: dict[str, list[dict]] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)  # host -> one sentence


def read_per_node(
    folder: Path, program: str, expected: list[str], expected_count: int | None = None
) -> NodeOutput:
    """Read FOLDER/HOST.* back. `expected` names the nodes that should have written (empty when
    unknown); `expected_count` how many, when only the count is known."""
    output = NodeOutput()
    written = sorted(p.name[: -len(".status")] for p in folder.glob("*.status"))
    for host in written:
        why = _failure(folder, host, program)
        if why:
            output.failures[host] = why
            continue
        try:
            parsed = json.loads((folder / f"{host}.json").read_text())
        except json.JSONDecodeError as error:
            output.failures[host] = f"wrote malformed JSON ({error}); this is a perfatlas bug"
            continue
        output.documents[host] = parsed if isinstance(parsed, list) else [parsed]
    for host in expected:
        if host not in written:
            output.failures[host] = _silent(folder, host)
    missing = (expected_count or 0) - len(written)
    if not expected and missing > 0:
        output.failures[f"{missing} of {expected_count} nodes"] = "wrote no result"
    return output


def _failure(folder: Path, host: str, program: str) -> str | None:
    status = (folder / f"{host}.status").read_text().strip()
    errors = _read(folder / f"{host}.err")
    if status != "0":
        detail = own_message(program, errors) or error_tail(errors) or "no error output"
        return f"{program} exited with status {status}: {detail}"
    if not _read(folder / f"{host}.json").strip():
        return f"{program} wrote no document: {error_tail(errors) or 'no error output'}"
    return None


def _silent(folder: Path, host: str) -> str:
    errors = _read(folder / f"{host}.err")
    if errors.strip():
        return f"wrote no result (it did not finish): {error_tail(errors)}"
    return "wrote no result: its task never started, or was killed before it wrote anything"


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""
