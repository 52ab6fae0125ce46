"""What a running grid shows: a rich bar over the cells plus one printed line per finished cell (readable
in a nohup log)."""

from __future__ import annotations

from typing import Any

from forecaster.benchmark.grid import Cell


class GridProgress:
    """A rich bar over the grid plus one printed line per finished cell (readable in a nohup log)."""

    def __init__(self, total: int, completed: int, enabled: bool) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(stderr=True, quiet=not enabled)
        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            console=self.console, disable=not enabled,
        )
        self.task = self.progress.add_task("benchmark", total=total, completed=completed)
        if completed:
            self.console.print(f"resuming: {completed} of {total} cells already in results.csv")

    def __enter__(self) -> GridProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def start(self, cell: Cell) -> None:
        self.progress.update(self.task, description=cell.label())

    def start_parallel(self, jobs: int, threads: int) -> None:
        self.progress.update(self.task, description=f"benchmark ({jobs} Ray tasks x {threads} threads)")

    def finish(self, cell: Cell, row: dict[str, Any]) -> None:
        self.progress.advance(self.task)
        self.console.print(
            f"{cell.label()}: mse {row['mse']:.4f} mae {row['mae']:.4f} "
            f"({row['epochs']} epochs, {row['train_seconds']:.0f} s)"
        )

