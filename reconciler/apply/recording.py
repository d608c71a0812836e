"""What an apply records as it goes: the run's state builder and journal, each change saved as one
journal line, the lists recorded as managed, and the fold of the journal into the state at the end.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reconciler.addresses import is_unmanaged
from reconciler.errors import ApplyError
from reconciler.live import Live
from reconciler.plan.model import (
    AccessChange,
    Action,
    ManagedAccess,
    Plan,
)
from reconciler.state import AccessRecord, ResourceState, State, StateBuilder, StateWriteError
from reconciler.state.model import RevokedByReview
from reconciler.state.backend import JournalWriter
from reconciler.text import plural

if TYPE_CHECKING:  # pragma: no cover
    from reconciler.api.client import WorkspaceClient


Progress = Callable[[str], None]


@dataclass(frozen=True)
class ApplyResult:
    changed: int
    calls: int  # every call, the re-reads of the lists included
    state: State
    reads: int = 0  # of them, the lists re-read before the first write and after the last


@dataclass
class Run:
    """What one apply knows while it goes: the client, the re-read lists,
    the lists the plan manages (recorded in the state as applied), the state
    being recorded and its journal."""

    client: WorkspaceClient
    plan: Plan
    live: Live
    managed: dict[str, ManagedAccess]
    say: Progress
    state: StateBuilder
    journal: JournalWriter
    wait: bool = False

    def today(self) -> str:
        """The date (UTC) on the client's clock, for "managed since"."""
        return datetime.datetime.fromtimestamp(self.client.clock.now(), datetime.UTC).date().isoformat()

    def save(self) -> None:
        """Record what changed since the last save: one journal line, fsynced
        (after a change, and within a change of several calls).  A failure is
        a ``StateWriteError``; what it did not record stays pending."""
        entry = self.state.pending()
        if entry is not None:
            self.journal.append(entry)
        self.state.commit()

    def fold(self) -> State:
        """The whole state written once, the journal removed; without anything
        recorded (nothing changed, no journal) nothing is written."""
        if not self.journal.started and not self.state.has_pending():
            return self.state.state()
        return self.journal.fold(self.state.state())


def record_moves(run: Run) -> None:
    """The manifests' moved: entries, recorded before any change: they need no call,
    and every change after them names the addresses as they are now."""
    for move in run.plan.moved:
        recorded = run.state.get(move.previous_address)
        if recorded is not None:
            run.state.put(move.address, recorded)
            run.state.remove(move.previous_address)
    if run.plan.moved:
        run.save()


def record_adoptions(run: Run) -> None:
    """Record each workspace the plan adopts (an interrupted apply created it,
    and its intent found it again), as the lost answer would have: no call."""
    for adoption in run.plan.adopted:
        run.state.bind(adoption.address, adoption.workspace_id, connected_to=adoption.homepage_id,
                       template=adoption.template_id)
        try:
            run.save()
        except StateWriteError as exc:
            raise ApplyError(f"Apply stopped before any call: {adoption.address} ({adoption.location}) could not "
                             f"be recorded as adopted. {exc} {exc.remedy}, then run 'reconciler apply' again.") from exc
        run.say(f"{adoption.address}: {adoption.reason}")


def fold_after_stop(run: Run, stop: BaseException) -> None:
    """Fold what was recorded before ``stop`` (a failure, Ctrl-C, SIGTERM)
    ended the apply.  What the failed step changed in memory was not
    recorded, and is dropped.  A fold that fails too leaves the journal,
    which every command reads; an ``ApplyError`` then says so."""
    run.state.revert()
    try:
        run.fold()
    except StateWriteError as exc:
        if isinstance(stop, ApplyError):
            raise ApplyError(f"{stop} {_kept_in_journal(run, exc)}") from stop


def _kept_in_journal(run: Run, exc: StateWriteError) -> str:
    if not run.journal.started:
        return f"{exc.noun.capitalize()} could not be written either: {exc}"
    return (f"Folding the journal into {exc.noun} failed too ({exc}); {run.journal.where} keeps "
            f"the {plural(run.journal.lines, 'change')} recorded, and every command reads it with {exc.noun}.")


def not_folded_message(run: Run, exc: StateWriteError) -> str:
    """Every change was made and recorded in the journal; the file was not written."""
    if not run.journal.started:
        return f"Apply made every change, but {exc.noun} could not be written: {exc}"
    return (
        f"Apply made every change and recorded each in {run.journal.where}, but could not fold it "
        f"into {exc.noun}: {exc} Nothing is lost: every command reads the journal with {exc.noun}, "
        f"and the next apply, import or 'state rm' folds it in. {exc.remedy}, then run 'reconciler plan'."
    )


def reviewed_revocations(change: AccessChange, today: str, serial: int) -> dict[str, RevokedByReview]:
    """The entries ``change`` removes for an access review, as the state records them once applied."""
    return {f"{e.kind}:{e.key}": RevokedByReview(campaign=e.source.campaign or "", reviewer=e.source.reviewer,
                                                 applied=today, serial=serial)
            for e in change.entries
            if e.action is Action.DELETE and e.source is not None and e.source.kind == "review"}


def record_list(state: StateBuilder, managed: ManagedAccess, today: str,
            reviewed: Mapping[str, RevokedByReview] | None = None) -> None:
    """Record the list's managed entries as applied; each keeps the date it was first managed.

    A workspace no manifest names (``unmanaged.<id>``) where the rules put
    nothing any more is forgotten, unless an access review revoked something
    there (kept as the review's evidence)."""
    old = state.get(managed.address)
    if is_unmanaged(managed.address) and not managed.users and not managed.domains and not reviewed \
            and not (old is not None and old.access is not None and old.access.revoked):
        if old is not None:
            state.remove(managed.address)
        return
    state.put(managed.address, _recorded(old, managed, today, reviewed or {}))


def _recorded(old: ResourceState | None, managed: ManagedAccess, today: str,
              reviewed: Mapping[str, RevokedByReview] | None = None) -> ResourceState:
    """``old`` (what the state knew of the address) with the list recorded as applied."""
    same = old is not None and old.id == managed.workspace_id
    known = old.access.since if same and old is not None and old.access is not None else {}
    revoked = {**(old.access.revoked or {} if same and old is not None and old.access is not None else {}),
               **(reviewed or {})}
    keys = [f"user:{k}" for k in managed.users] + [f"domain:{k}" for k in managed.domains]
    users: dict[str, str] = dict(managed.users)  # the state keeps roles as the words they are
    domains: dict[str, str] = dict(managed.domains)
    access = AccessRecord(users=users, domains=domains,
                          since={k: known.get(k, today) for k in keys}, via=managed.via or None,
                          revoked=revoked or None)
    if same and old is not None:
        return old.model_copy(update={"access": access})
    return ResourceState(id=managed.workspace_id, access=access)


def record_all_lists(state: StateBuilder, plan: Plan, today: str) -> None:
    """Remember every managed list, changed or not, so that an entry dropped
    from a non-authoritative list later is known to be ours to remove; and
    forget what no manifest names any more (a whole, untargeted plan only).
    In place, once per address: written by the fold that follows, not
    journaled (an apply stopped before it does this again next time)."""
    for managed in plan.managed:
        record_list(state, managed, today)
    if not plan.targets:
        for address in plan.forgotten:
            state.remove(address)
        with_lists = {m.address for m in plan.managed}
        for address, resource in state.items():
            if is_unmanaged(address) and address not in with_lists:
                state.remove(address)  # no rule puts anything there any more
            elif resource.access is not None and address not in with_lists:
                state.put(address, resource.model_copy(update={"access": None}))
