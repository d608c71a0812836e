"""Apply's progress: plain lines without a terminal, rich's bar on one.

run_cli captures stdout and stderr, so the CLI sees no terminal there.  The
bar is tested on its own with a console that is told it is a terminal.  No
assertion depends on timing.
"""

from __future__ import annotations

import io
import re
import shutil
from pathlib import Path

import pytest
from rich.console import Console

from reconciler.apply import apply_plan
from reconciler.clock import VirtualClock
from reconciler.commands.plan import plan_with_client
from reconciler.emulator import Emulator
from reconciler.manifest import load_desired
from reconciler.plan.model import Change, ConnectChange
from reconciler.apply.progress import LineProgress, TerminalProgress, progress_for
from reconciler.state import State
from tests.e2e.conftest import ROOT, client_for, run_cli

ONBOARDING = ROOT / "examples" / "onboarding"
COUNTED = re.compile(r"^\[(\d+)/(\d+)\] (\S+): (.+) \((\d+) calls?(, waited \d+ s)?\)$")
# SGR sequences that set a colour: 30-37, 39, 40-47, 49, 90-97, 100-107, 38;… and 48;…
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m")


@pytest.fixture
def onboarding(tmp_path: Path) -> Path:
    root = tmp_path / "onboarding"
    shutil.copytree(ONBOARDING, root)
    return root


def _emulator_args(root: Path) -> list[str]:
    return ["--emulator", str(root / "emulator.yaml"), "--seed", str(root / "seed.yaml")]


def _planned_addresses(root: Path) -> list[str]:
    """The plan the CLI's apply will make: same seed, same manifests, no state."""
    clock = VirtualClock()
    client = client_for(Emulator.from_seed_file(root / "seed.yaml", clock=clock), clock)
    return [change.address for change in plan_with_client(client, load_desired(root), State()).changes]


def test_without_a_terminal_apply_prints_one_counted_line_per_change_in_plan_order(onboarding: Path, capsys) -> None:
    planned = _planned_addresses(onboarding)
    code, out, err = run_cli(["apply", str(onboarding), *_emulator_args(onboarding), "--auto-approve"], capsys)
    assert code == 0, err
    counted = [COUNTED.match(line) for line in err.splitlines() if line.startswith("[")]
    assert all(counted), err
    assert [m.group(3) for m in counted if m] == planned
    assert [(int(m.group(1)), int(m.group(2))) for m in counted if m] == [
        (n, len(planned)) for n in range(1, len(planned) + 1)]
    assert "[1/18] group.customer-inc.workspace.welcome: connected (1 call)" in err.splitlines()
    assert "\x1b" not in out + err


def test_with_no_color_the_output_has_no_escape_at_all(onboarding: Path, capsys,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    code, out, err = run_cli(["apply", str(onboarding), *_emulator_args(onboarding), "--auto-approve"], capsys)
    assert code == 0, err
    assert "[18/18] asset.booking: created (2 calls)" in err.splitlines()
    assert "\x1b" not in out + err


def test_a_stream_that_is_no_terminal_gets_plain_lines() -> None:
    assert isinstance(progress_for(io.StringIO(), print), LineProgress)


def _connect(address: str = "group.customer-inc.workspace.welcome") -> Change:
    return ConnectChange(address=address, group="group.customer-inc", homepage_id="ws_home",
                         workspace_id="ws_welcome")


def test_a_plain_line_says_how_long_the_change_waited_for_the_rate_limit() -> None:
    lines: list[str] = []
    shown = LineProgress(lines.append)
    shown.start(2)
    shown.change_started(_connect())
    shown.waiting(12.2)
    shown.change_finished(_connect(), 3)
    assert lines == ["[1/2] group.customer-inc.workspace.welcome: connected (3 calls, waited 12 s)"]


def _terminal(monkeypatch: pytest.MonkeyPatch, **options: bool) -> tuple[Console, io.StringIO]:
    monkeypatch.setenv("TERM", "xterm-256color")  # a "dumb" TERM would make rich draw nothing live
    buffer = io.StringIO()
    return Console(force_terminal=True, file=buffer, width=160, **options), buffer


def test_the_terminal_bar_shows_the_total_and_the_current_address(monkeypatch: pytest.MonkeyPatch) -> None:
    console, buffer = _terminal(monkeypatch)
    bar = TerminalProgress(console)
    bar.start(15)
    bar.change_started(_connect())
    bar.bar.refresh()
    drawn = buffer.getvalue()
    assert "0/15" in drawn and "group.customer-inc.workspace.welcome" in drawn
    bar.change_finished(_connect(), 1)
    bar.waiting(7)
    bar.change_started(_connect("group.customer-inc.workspace.quarterly-review"))
    bar.bar.refresh()
    bar.close()
    drawn = buffer.getvalue()
    assert "[1/15] group.customer-inc.workspace.welcome: connected (1 call)" in drawn
    assert "1/15" in drawn and "1 call" in drawn and "waited 7 s" in drawn
    assert "group.customer-inc.workspace.quarterly-review" in drawn


def test_the_terminal_bar_has_no_colour_with_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    console, buffer = _terminal(monkeypatch)
    bar = TerminalProgress(console)
    bar.start(3)
    bar.change_started(_connect())
    bar.bar.refresh()
    bar.change_finished(_connect(), 1)
    bar.close()
    assert "1/3" in buffer.getvalue()
    assert not COLOUR.search(buffer.getvalue())


class Recorder:
    """An ApplyProgress that writes down what it is told."""

    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def start(self, total: int) -> None:
        self.events.append(("start", total))

    def change_started(self, change: Change) -> None:
        self.events.append(("started", change.address))

    def change_finished(self, change: Change, calls: int) -> None:
        self.events.append(("finished", (change.address, calls)))

    def reads(self, calls: int) -> None:
        self.events.append(("reads", calls))

    def waiting(self, seconds: float) -> None:
        self.events.append(("waiting", seconds))

    def note(self, message: str) -> None:
        self.events.append(("note", message))

    def close(self) -> None:
        self.events.append(("close", None))


def test_apply_tells_the_progress_each_change_in_order_with_its_calls(onboarding: Path, tmp_path: Path) -> None:
    clock = VirtualClock()
    emulator = Emulator.from_seed_file(onboarding / "seed.yaml", clock=clock)
    client = client_for(emulator, clock)
    plan = plan_with_client(client, load_desired(onboarding), State())
    recorder = Recorder()
    result = apply_plan(plan, client=client, state=State(), state_path=tmp_path / "state.json", progress=recorder)
    assert recorder.events[:2] == [("reads", 1), ("start", len(plan.changes))]  # the lists re-read first
    started = [e[1] for e in recorder.events if e[0] == "started"]
    finished = [e[1] for e in recorder.events if e[0] == "finished"]
    assert started == [c.address for c in plan.changes]
    assert [address for address, _ in finished] == started
    # Every call but the re-reads before the first write and after the last belongs to a change.
    assert sum(calls for _, calls in finished) == result.calls - plan.cost.refresh_reads  # type: ignore[misc]
    reads = [e[1] for e in recorder.events if e[0] == "reads"]
    assert len(reads) == 2 and sum(reads) == plan.cost.refresh_reads == result.reads  # type: ignore[arg-type]
    assert ("note", "group.customer-inc.workspace.kickoff: created workspace ws_1") in recorder.events
    assert ("close", None) not in recorder.events  # whoever made the progress closes it


def test_a_plain_function_still_gets_a_line_before_each_change(onboarding: Path, tmp_path: Path) -> None:
    clock = VirtualClock()
    emulator = Emulator.from_seed_file(onboarding / "seed.yaml", clock=clock)
    client = client_for(emulator, clock)
    plan = plan_with_client(client, load_desired(onboarding), State())
    lines: list[str] = []
    apply_plan(plan, client=client, state=State(), state_path=tmp_path / "state.json", progress=lines.append)
    assert lines[0] == "group.customer-inc.workspace.welcome: POST /workspaces/ws_home/connected-workspaces"


def test_the_bar_counts_the_calls_the_summary_counts(onboarding: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    clock = VirtualClock()
    emulator = Emulator.from_seed_file(onboarding / "seed.yaml", clock=clock)
    client = client_for(emulator, clock)
    plan = plan_with_client(client, load_desired(onboarding), State())
    console, buffer = _terminal(monkeypatch)
    bar = TerminalProgress(console)
    requests_before = len(emulator.requests)
    result = apply_plan(plan, client=client, state=State(), state_path=tmp_path / "state.json", progress=bar)
    bar.close()
    # The emulator (the service and its storage provider) saw exactly the calls apply counted.
    assert len(emulator.requests) - requests_before == result.calls
    assert bar.calls == result.calls
    assert f"changes · {result.calls} calls · waited" in buffer.getvalue()  # the bar's last drawing


def test_the_apply_summary_says_how_many_calls_re_read_the_lists(onboarding: Path, capsys) -> None:
    code, out, err = run_cli(["apply", str(onboarding), *_emulator_args(onboarding), "--auto-approve"], capsys)
    assert code == 0, err
    counted = sum(int(m.group(5)) for m in (COUNTED.match(line) for line in err.splitlines()) if m)
    summary = re.search(r"in (\d+) API calls \((\d+) of them re-reading the lists before and after writing\)\.$",
                        out.strip())
    assert summary, out
    assert int(summary.group(1)) == counted + int(summary.group(2))


def _plan_on_a_terminal(root: Path, no_color: str | None) -> str:
    """``reconciler plan`` run with its stdout on a pseudo-terminal, as a person runs it."""
    import os
    import pty
    import select
    import subprocess
    import sys
    import time

    from tests.waiting import DEADLINE, said

    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    if no_color is not None:
        env["NO_COLOR"] = no_color
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen([sys.executable, "-m", "reconciler", "plan", str(root), *_emulator_args(root)],
                                   stdout=follower, stderr=subprocess.PIPE, env=env, cwd=ROOT)
        os.close(follower)
        chunks = []
        deadline = time.monotonic() + 2 * DEADLINE
        while True:
            # Read as it comes, never blocked on: a plan that hangs fails the test with what it printed.
            if not select.select([leader], [], [], max(0.0, deadline - time.monotonic()))[0]:
                seen = b"".join(chunks).decode("utf-8", "replace")
                raise AssertionError(f"the plan did not end within {2 * DEADLINE:g} s: {said(process, seen=seen)}")
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed with the process (EIO on Linux)
                break
            if not chunk:
                break
            chunks.append(chunk)
        _, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
    finally:
        os.close(leader)
    return b"".join(chunks).decode("utf-8")


def test_an_empty_no_color_leaves_colour_on(onboarding: Path) -> None:
    assert COLOUR.search(_plan_on_a_terminal(onboarding, ""))  # no-color.org: empty means unset


def test_a_non_empty_no_color_turns_colour_off_on_a_terminal(onboarding: Path) -> None:
    shown = _plan_on_a_terminal(onboarding, "1")
    assert "reconciler will make these changes:" in shown and "\x1b" not in shown
