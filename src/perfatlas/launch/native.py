"""Locate and run the native measuring executables (docs/contract.md)."""

from __future__ import annotations

import codecs
import json
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from perfatlas.common.errors import UserError
from perfatlas.common.signal_names import signal_name
from perfatlas.launch.document_stream import DocumentStream
from perfatlas.launch.isa import rebuild_hint


def bin_dir() -> Path:
    """Executables live in the installed package (pip install .); PERFATLAS_BIN_DIR overrides."""
    override = os.environ.get("PERFATLAS_BIN_DIR")
    return Path(override) if override else Path(__file__).parents[1] / "bin"


def executable(name: str) -> Path:
    path = bin_dir() / name
    if not path.is_file():
        raise UserError(
            f"the native executable {name} is missing from {bin_dir()}; "
            "rebuild with 'pip install .' (or 'make install')"
        )
    return path


def run_json(name: str, args: list[str], env: dict[str, str] | None = None) -> dict | list:
    """Run one native executable with key=value args and return its parsed JSON document(s)."""
    from perfatlas.launch.launchers import Launch, get_launcher

    launch = Launch("local", [str(executable(name)), *args], env=dict(env or {}))
    return run_launch(launch, name, get_launcher("local"))


def run_launch(
    launch, name: str, launcher, on_document: Callable[[dict], None] | None = None
) -> dict | list:
    """Run a prepared launch (perfatlas.launch.launchers) and parse what the executable wrote.

    Standard output is read as it comes (perfatlas.launch.document_stream): `on_document` is called with
    each document as soon as it is whole, a series' points one by one while the launch goes on,
    a single document when it ends; an exception it raises stops the launch. A failure becomes
    one sentence: the launcher knows how to read its own stderr (a rank's message, a crashed
    rank, mpirun's complaint).
    """
    timeout = float(os.environ.get("PERFATLAS_LAUNCH_TIMEOUT") or 0) or None
    # A session of its own, so that a launch that must be stopped (timeout, Ctrl-C) is stopped
    # with every process it started (mpirun's ranks), not only the first.
    process = subprocess.Popen(
        launch.argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,  # mpirun would forward our stdin to rank 0
        env={**os.environ, **launch.env},
        start_new_session=True,
    )
    stream = DocumentStream()
    arrived: list[dict] = []
    try:
        stderr = _read_until_end(process, stream, arrived, on_document, timeout)
    except subprocess.TimeoutExpired:
        _stop(process)
        raise UserError(
            f"{name} did not finish within {timeout:g} s ($PERFATLAS_LAUNCH_TIMEOUT) and was "
            "stopped; a rank may hang (results stored before it are kept)"
        ) from None
    except BaseException:
        _stop(process)
        raise
    stdout = stream.text
    if process.returncode < 0:
        number = -process.returncode
        raise UserError(
            f"{name} was killed by {signal_name(number)}{rebuild_hint(number)} "
            "(results stored before it are kept)"
        )
    if process.returncode != 0:
        raise UserError(launcher.failure(launch, name, process.returncode, stderr + stdout))
    try:
        parsed = stream.finish()  # the single document, or the list elements not yet handed out
    except json.JSONDecodeError as error:
        raise UserError(
            f"{name} wrote malformed JSON ({error}); this is a perfatlas bug"
        ) from error
    if not stream.is_list:
        if on_document is not None and isinstance(parsed, dict):
            on_document(parsed)
        return parsed
    for document in parsed:  # the elements completed by the end of the output
        if on_document is not None:
            on_document(document)
    return arrived + parsed


def _read_until_end(
    process: subprocess.Popen,
    stream: DocumentStream,
    arrived: list[dict],
    on_document: Callable[[dict], None] | None,
    timeout: float | None,
) -> str:
    """Read stdout into `stream` (each whole document to `on_document`) and stderr until both
    end, then wait for the process; returns stderr. TimeoutExpired past `timeout` seconds."""
    deadline = None if timeout is None else time.monotonic() + timeout
    decoders = {
        stream_file.fileno(): codecs.getincrementaldecoder("utf-8")(errors="replace")
        for stream_file in (process.stdout, process.stderr)
    }
    stdout_fd = process.stdout.fileno()
    stderr_parts: list[str] = []
    with selectors.DefaultSelector() as selector:
        for fd in decoders:
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(process.args, timeout or 0)
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fd)
                text = decoders[key.fd].decode(chunk, final=not chunk)
                if key.fd != stdout_fd:
                    stderr_parts.append(text)
                    continue
                for document in stream.feed(text):
                    arrived.append(document)
                    if on_document is not None and isinstance(document, dict):
                        on_document(document)
    left = None if deadline is None else max(deadline - time.monotonic(), 0.001)
    process.wait(timeout=left)
    process.stdout.close()
    process.stderr.close()
    return "".join(stderr_parts)


def _stop(process: subprocess.Popen, grace: float = 5.0) -> None:
    """Stop a launch: SIGTERM first (mpirun then stops the ranks it started, which it may have
    put in process groups of their own), then SIGKILL to its whole process group."""
    process.terminate()
    try:
        process.communicate(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.communicate()
