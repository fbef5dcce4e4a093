"""The progress shown on standard error while measurements run (rich)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

console = Console(stderr=True)


@contextmanager
def progress_bar(total: int) -> Iterator[Callable[..., None]]:
    """A progress bar of `total` steps; each call of the yielded function starts the next
    measurement, which counts `points` steps (the sizes of a series launch)."""
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
        pending = 0  # steps of the measurement under way

        def step(description: str, points: int = 1) -> None:
            nonlocal pending
            progress.advance(task, pending)
            pending = points
            progress.update(task, current=description)

        yield step
        progress.advance(task, pending)
        progress.update(task, current="done")
