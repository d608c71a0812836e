"""Apply: execute a Plan against the service and record State.

Order of work, and why:
1. Re-read the access lists the plan writes (one listing, stopping once all
   are seen) and refuse, before any write, if someone changed one since the
   plan: applying a whole-list POST over a list that moved would silently
   undo their change.
2. Execute the changes in plan order (joins before the access list that
   reaches the new members, joins before their members' settings).  Access
   changes: role-only as PATCHes (promotions to owner first), additions and
   removals as one POST of the whole list.
3. Check each answer against the plan (Terraform's "inconsistent result"
   check; after the last write, every list the apply touched is read back
   and compared with the plan's predicted ``effects``) and record each successful change as one line appended (and
   fsynced) to the state's journal, so a crash loses at most the call in
   flight.  A new workspace's id is recorded before anything else is sent,
   and the intent to create it before the creation is sent (write-ahead:
   a kill between the call and its record leaves the intent, by which the
   next plan finds the workspace again and adopts it).  The workspaces such
   a plan adopts are recorded first, before any call.
   Recording costs what the change touched: the state is changed in place
   (``StateBuilder``), and the journal line holds only the addresses changed.
4. Stop at the first failure: what was done stays done and recorded, the
   rest is left for the next plan.
5. Fold: write the whole state file once (serial bumped once) and remove the
   journal, after the last change or on the way out of a failure or an
   interruption.  A kill -9 leaves the journal, which every command reads
   with the state (through its backend).
6. Last, the resources only a person can settle (an asset whose creation got
   no answer: ``Plan.needs_person``) are listed, as an ``ApplyError``: the
   apply did everything else, and still is not a success.

This module runs those steps in order; each lives in a module named after
it: ``proof`` (the lists read before the first write and after the last),
``writes`` (access lists, connects, settings), ``creations`` (write-ahead
creation from a template), ``assets``, ``recording`` (the journal, the
managed lists, the fold) and ``stops`` (what apply says when it stops).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.api.errors import (
    ApiError,
    NotReadyInTime,
    UploadExpired,
)
from reconciler.apply.assets import PartlyMade as _PartlyMade
from reconciler.apply.assets import apply_asset_in_place
from reconciler.errors import ApplyError
from reconciler.plan.model import (
    AccessChange,
    AssetChange,
    Change,
    ConnectChange,
    CreateChange,
    Plan,
)
from reconciler.apply.progress import ApplyProgress, as_progress
from reconciler.apply.creations import create_workspace
from reconciler.apply.proof import prove, refresh
from reconciler.apply.recording import (
    ApplyResult, Progress, Run, fold_after_stop, not_folded_message, record_adoptions, record_all_lists, record_list,
    record_moves, reviewed_revocations,
)
from reconciler.apply.stops import needs_person_message, stopped_message, unrecorded_message
from reconciler.apply.writes import apply_access, connect_to_group, set_value
from reconciler.state import State, StateBuilder, StateWriteError
from reconciler.state.backend import StateBackend, open_backend

if TYPE_CHECKING:  # pragma: no cover
    from reconciler.api.client import WorkspaceClient


def apply_plan(
    plan: Plan,
    *,
    client: WorkspaceClient,
    state: State,
    state_path: Path | StateBackend,
    progress: Progress | ApplyProgress | None = None,
    wait: bool = False,
    on_change: Callable[[Change | None], None] | None = None,
    on_mismatch: Callable[[list[str]], None] | None = None,
) -> ApplyResult:
    """Make ``plan``'s changes in order, recording each in the state file.

    ``wait`` follows the conversion of docx/ppt/xlsx assets to the end.
    ``progress`` is an ``ApplyProgress`` or a function given a line per change
    and per note; ``on_change`` is called with each change before it is made,
    and with None once all are (the audit log's current address);
    ``on_mismatch`` with the workspaces whose list, read back after the last
    write, is not the one the plan predicted (the audit log records them).
    ``state_path`` is the state file, or the backend the state is kept in.
    """
    store = open_backend(state_path)
    calls_before = client.stats.calls
    shown = as_progress(progress, describe=_describe)
    # A journal a stopped apply left is folded first (a whole write, rare):
    # this apply's journal then continues the file as it is.
    state = _fold_leftover(store, state)
    reads_before = client.stats.calls
    live = refresh(client, plan)
    reads = client.stats.calls - reads_before
    shown.reads(reads)
    run = Run(client=client, plan=plan, live=live, managed={m.address: m for m in plan.managed}, say=shown.note,
              state=StateBuilder(state), journal=store.journal(state), wait=wait)
    done, state = _execute(run, shown, on_change)
    reads_before = client.stats.calls
    prove(client, plan, state, on_mismatch, had=live)
    read_back = client.stats.calls - reads_before
    shown.reads(read_back)  # the bar counts what the summary counts: every call
    result = ApplyResult(changed=done, calls=client.stats.calls - calls_before, state=state, reads=reads + read_back)
    if plan.needs_person:
        # Everything else is done and recorded; what only a person can settle
        # is said last, and is not a success.
        raise ApplyError(needs_person_message(plan, result))
    return result


def _execute(run: Run, shown: ApplyProgress, on_change: Callable[[Change | None], None] | None) -> tuple[int, State]:
    """Record the moves, make the changes, record every managed list, fold the
    journal: how many changes were made, and the state as written.  Whatever
    stops it (a failure, Ctrl-C, SIGTERM), what was recorded is folded first."""
    try:
        try:
            record_moves(run)
            done = _apply_changes(run, shown, on_change)
        except BaseException as exc:
            fold_after_stop(run, exc)
            raise
        record_all_lists(run.state, run.plan, run.today())
        try:
            return done, run.fold()
        except StateWriteError as exc:
            raise ApplyError(not_folded_message(run, exc)) from exc
    finally:
        run.journal.close()


def _fold_leftover(store: StateBackend, state: State) -> State:
    """``state`` with the journal an earlier, stopped apply left folded into the state."""
    try:
        return store.fold_leftover(state)
    except StateWriteError as exc:
        raise ApplyError(f"Nothing was changed: the journal an earlier apply left could not be folded into "
                         f"{exc.noun}. {exc} {exc.remedy}, then run the apply again.") from exc


def _apply_changes(run: Run, shown: ApplyProgress,
                   on_change: Callable[[Change | None], None] | None) -> int:
    """Make the plan's changes in order, recording each; how many were made."""
    plan, client = run.plan, run.client
    record_adoptions(run)
    shown.start(len(plan.changes))
    done = 0
    for change in plan.changes:
        if on_change is not None:
            on_change(change)
        shown.change_started(change)
        calls, waited = client.stats.calls, client.stats.waited_seconds
        try:
            _apply_change(run, change)
        except _PartlyMade as part:
            raise ApplyError(stopped_message(change, part.cause, done, plan, made=part.made)) from part.cause
        except (ApiError, UploadExpired, NotReadyInTime) as exc:
            raise ApplyError(stopped_message(change, exc, done, plan)) from exc
        except StateWriteError as exc:  # a record within a change (an asset's steps, a creation that stops)
            raise ApplyError(unrecorded_message(change, exc, done, plan, whole=False)) from exc
        done += 1
        try:
            run.save()
        except StateWriteError as exc:
            raise ApplyError(unrecorded_message(change, exc, done, plan, whole=True)) from exc
        shown.waiting(client.stats.waited_seconds - waited)
        shown.change_finished(change, client.stats.calls - calls)
    if on_change is not None:
        on_change(None)
    return done


def _describe(change: Change) -> str:
    calls = ", ".join(f"{c.method} {c.path}" for c in change.calls)
    if isinstance(change, AccessChange) and change.governs == "join":
        calls = f"made by the connect of {change.rides_on}"
    elif isinstance(change, AccessChange) and change.governs == "create":
        calls = f"made by the creation of {change.rides_on}"
    elif isinstance(change, AccessChange) and change.rides_on:
        calls = f"carried by the creation of {change.rides_on}"
    elif isinstance(change, AccessChange) and change.carried_by:
        calls = f"written by {change.carried_by}'s call (one list in the service)"
    return f"{change.address}: {calls}"


def _apply_change(run: Run, change: Change) -> None:
    """Make one change and record it in ``run.state`` (saved by the caller)."""
    if isinstance(change, AccessChange):
        if change.rides_on is None and change.carried_by is None:
            apply_access(run.client, change, run.live.workspaces[change.workspace_id])
        if change.governs not in ("join", "create"):  # the group's list, recorded under the group
            record_list(run.state, run.managed[change.address], run.today(),
                    reviewed=reviewed_revocations(change, run.today(), run.state.serial + 1))
    elif isinstance(change, ConnectChange):
        connect_to_group(run.client, change)
        named = {"name": change.workspace_name} if change.workspace_name is not None else {}
        run.state.bind(change.address, change.workspace_id, connected_to=change.homepage_id, **named)
    elif isinstance(change, CreateChange):
        create_workspace(run, change)
    elif isinstance(change, AssetChange):
        apply_asset_in_place(run.client, change, run.state, save=run.save, say=run.say, wait=run.wait)
    else:
        set_value(run.client, change, run.state)
