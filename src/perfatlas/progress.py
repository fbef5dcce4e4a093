"""The progress shown on standard error while measurements run (rich)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

console = Console(stderr=True)


@contextmanager
def progress_bar(total: int) -> Iterator[Callable[[str], None]]:
    """A progress bar of `total` steps; each call of the yielded function starts the next step."""
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[current]}"),
        console=console,
        transient=False,
    ) as progress:
        task = progress.add_task("measuring", total=total, current="")
        started = False

        def step(description: str) -> None:
            nonlocal started
            if started:
                progress.advance(task)
            started = True
            progress.update(task, current=description)

        yield step
        if started:
            progress.advance(task)
        progress.update(task, current="done")
