"""The progress shown on standard error while measurements run (rich)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

console = Console(stderr=True)


class Steps:
    """Calling it starts the next measurement, which counts `points` steps (the sizes of a
    series launch); `done(n)` counts n of them as finished while it runs."""

    def __init__(self, progress: Progress, task) -> None:
        self.progress = progress
        self.task = task
        self.pending = 0  # steps of the measurement under way, not yet counted

    def __call__(self, description: str, points: int = 1) -> None:
        self.progress.advance(self.task, self.pending)
        self.pending = points
        self.progress.update(self.task, current=description)

    def done(self, points: int = 1) -> None:
        points = min(points, self.pending)
        self.progress.advance(self.task, points)
        self.pending -= points


@contextmanager
def progress_bar(total: int) -> Iterator[Steps]:
    """A progress bar of `total` steps (Steps: one call per measurement, `done` per point)."""
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
        steps = Steps(progress, task)
        yield steps
        progress.advance(task, steps.pending)
        progress.update(task, current="done")
