"""How apply shows its progress: a bar on a terminal, one line per change otherwise.

``apply_plan`` tells an ``ApplyProgress`` how many changes there are, when
each starts and finishes (with the calls it took), how long it waited (rate
limits, backoff before a retry) and what else is worth saying (a created
workspace's id, an asset conversion still running).  The CLI picks the
implementation: ``TerminalProgress`` (rich's bar) when stderr is an
interactive terminal, ``LineProgress`` when it is piped or in CI, so logs get
plain lines like ``[3/15] group.x.workspace.y: connected (1 call)``.  Colour
follows rich, which honours ``NO_COLOR``; the plain lines have none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, Protocol, runtime_checkable

from reconciler.text import plural, printable

if TYPE_CHECKING:  # pragma: no cover
    from rich.console import Console

    from reconciler.plan.model import Change


@runtime_checkable
class ApplyProgress(Protocol):
    """What apply reports while it goes; every method returns quickly."""

    def start(self, total: int) -> None: ...
    def change_started(self, change: Change) -> None: ...
    def change_finished(self, change: Change, calls: int) -> None: ...
    def reads(self, calls: int) -> None:
        """``calls`` made outside any change: the lists re-read before the
        first write and read back after the last (counted in apply's total,
        so the bar's count is the summary's)."""
    def waiting(self, seconds: float) -> None: ...
    def note(self, message: str) -> None: ...
    def close(self) -> None: ...


def outcome(change: Change) -> str:
    """What a finished change did, in a few words ("connected", "hidden"):
    what its action is once done, with the words of a list and of a setting."""
    if change.subject == "access":
        rides_on = getattr(change, "rides_on", None)
        carried_by = getattr(change, "carried_by", None)
        return (f"access list set by the creation of {rides_on}" if rides_on else
                f"access list written by {carried_by}'s call" if carried_by else f"access list {change.action.done}")
    if change.subject == "setting":
        # A setting's address already names its kind and item (....section.sec_41).
        after = getattr(change, "after", None)
        if change.kind == "task":
            return "completed" if after else "reopened"
        return "hidden" if after else "shown"
    return change.action.done


def _calls(n: int) -> str:
    return plural(n, "call")


def finished_line(done: int, total: int, change: Change, calls: int, waited: float) -> str:
    """``[3/15] address: outcome (1 call)``, with the wait when there was one."""
    extra = f", waited {waited:.0f} s" if waited >= 0.5 else ""
    return f"[{done}/{total}] {printable(change.address)}: {outcome(change)} ({_calls(calls)}{extra})"


class LineProgress:
    """One plain line per finished change, through ``write`` (no colour, no
    cursor movement): for pipes, CI logs and files."""

    def __init__(self, write: Callable[[str], None]) -> None:
        self.write = write
        self.total = 0
        self.done = 0
        self.waited = 0.0

    def start(self, total: int) -> None:
        self.total, self.done = total, 0

    def change_started(self, change: Change) -> None:
        self.waited = 0.0

    def change_finished(self, change: Change, calls: int) -> None:
        self.done += 1
        self.write(finished_line(self.done, self.total, change, calls, self.waited))

    def reads(self, calls: int) -> None:
        pass  # one line per change; apply's summary says how many calls re-read the lists

    def waiting(self, seconds: float) -> None:
        self.waited += seconds

    def note(self, message: str) -> None:
        self.write(f"  {printable(message)}")

    def close(self) -> None:
        pass


class TerminalProgress:
    """rich's progress bar: changes done of total, calls, time waited and the
    address being applied; each finished change is also printed above the
    bar, so the terminal keeps the history."""

    def __init__(self, console: Console) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.console = console
        self.bar = Progress(
            SpinnerColumn(),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("changes · {task.fields[calls]} · {task.fields[waited]}"),
            TimeElapsedColumn(),
            TextColumn("{task.description}", markup=False),
            console=console,
        )
        self.task: Any = None
        self.total = 0
        self.done = 0
        self.calls = 0
        self.waited = 0.0
        self.change_waited = 0.0

    def start(self, total: int) -> None:
        self.total, self.done = total, 0
        # The lists re-read before the first change are already counted.
        self.task = self.bar.add_task("", total=total, calls=_calls(self.calls), waited="waited 0 s")
        self.bar.start()

    def change_started(self, change: Change) -> None:
        self.change_waited = 0.0
        self._update(description=printable(change.address))

    def change_finished(self, change: Change, calls: int) -> None:
        self.done += 1
        self.calls += calls
        self.console.print(finished_line(self.done, self.total, change, calls, self.change_waited),
                           markup=False, highlight=False)
        self._update(advance=1)

    def reads(self, calls: int) -> None:
        self.calls += calls
        self._update()

    def waiting(self, seconds: float) -> None:
        self.waited += seconds
        self.change_waited += seconds
        self._update()

    def note(self, message: str) -> None:
        self.console.print(f"  {printable(message)}", markup=False, highlight=False, style="dim")

    def close(self) -> None:
        if self.task is not None:
            self._update(description="")
            self.bar.stop()
            self.task = None

    def _update(self, **fields: Any) -> None:
        if self.task is not None:
            self.bar.update(self.task, calls=_calls(self.calls), waited=f"waited {self.waited:.0f} s", **fields)


def progress_for(stream: IO[str], write: Callable[[str], None]) -> ApplyProgress:
    """A bar when ``stream`` is an interactive terminal, else plain lines
    through ``write``."""
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        from rich.console import Console

        console = Console(file=stream)
        if console.is_interactive:
            return TerminalProgress(console)
    return LineProgress(write)


class _Say:
    """A plain function given as ``progress`` (the older interface, tests):
    it gets a line before each change (``describe(change)``) and every note."""

    def __init__(self, say: Callable[[str], None], describe: Callable[[Change], str]) -> None:
        self.say = say
        self.describe = describe

    def start(self, total: int) -> None:
        pass

    def change_started(self, change: Change) -> None:
        self.say(self.describe(change))

    def change_finished(self, change: Change, calls: int) -> None:
        pass

    def reads(self, calls: int) -> None:
        pass

    def waiting(self, seconds: float) -> None:
        pass

    def note(self, message: str) -> None:
        self.say(message)

    def close(self) -> None:
        pass


def as_progress(progress: ApplyProgress | Callable[[str], None] | None, *,
                describe: Callable[[Change], str]) -> ApplyProgress:
    """``progress`` as an ``ApplyProgress``: itself, a plain function adapted,
    or one that shows nothing."""
    if isinstance(progress, ApplyProgress):
        return progress
    return _Say(progress or (lambda _line: None), describe)
