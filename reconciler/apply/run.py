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
   with the state file (``load_state``).
6. Last, the resources only a person can settle (an asset whose creation got
   no answer: ``Plan.needs_person``) are listed, as an ``ApplyError``: the
   apply did everything else, and still is not a success.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.api.bodies import ConnectExisting, CreateFromTemplate
from reconciler.api.errors import (
    ApiError,
    Conflict,
    ConnectionFailed,
    Forbidden,
    NotFound,
    NotReadyInTime,
    ServerError,
    UploadExpired,
)
from reconciler.apply.assets import PartlyMade as _PartlyMade
from reconciler.apply.assets import apply_asset_in_place
from reconciler.api.models import AccessDomainInput, AccessUserInput, Workspace
from reconciler.errors import ApplyError, ReconcilerError
from reconciler.live import ACCESS_PROPERTIES, Live, LiveWorkspace, fetch_live, read_workspace
from reconciler.plan.model import (
    AccessChange,
    Action,
    AccessSnapshot,
    AssetChange,
    Change,
    ConnectChange,
    CreateChange,
    ManagedAccess,
    Plan,
    SettingChange,
)
from reconciler.plan.workspaces import Identity, namesakes
from reconciler.plan.render_text import needs_person_lines
from reconciler.apply.progress import ApplyProgress, as_progress
from reconciler.state import AccessRecord, CreationIntent, ResourceState, State, StateBuilder, StateWriteError
from reconciler.state.model import RevokedByReview
from reconciler.state.backend import JournalWriter, StateBackend, open_backend
from reconciler.text import plural, printable

if TYPE_CHECKING:  # pragma: no cover
    from reconciler.api.client import WorkspaceClient

Progress = Callable[[str], None]

# Answers that leave open whether the service made the change.
AMBIGUOUS = (ServerError, ConnectionFailed)
# Properties read back from a creation: the new id, and the lists it carries.
CREATED_PROPERTIES = ("name", "templateId", *ACCESS_PROPERTIES[1:])
LOOKUP_PROPERTIES = ("name", "accountId", "templateId")


@dataclass(frozen=True)
class ApplyResult:
    changed: int
    calls: int  # every call, the re-reads of the lists included
    state: State
    reads: int = 0  # of them, the lists re-read before the first write and after the last


@dataclass
class _Run:
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
    live = _refresh(client, plan)
    reads = client.stats.calls - reads_before
    shown.reads(reads)
    run = _Run(
        client=client,
        plan=plan,
        live=live,
        managed={m.address: m for m in plan.managed},
        say=shown.note,
        state=StateBuilder(state),
        journal=store.journal(state),
        wait=wait,
    )
    try:
        try:
            _record_moves(run)
            done = _apply_changes(run, shown, on_change)
        except BaseException as exc:
            _fold_after_stop(run, exc)
            raise
        _record_all(run.state, plan, run.today())
        try:
            state = run.fold()
        except StateWriteError as exc:
            raise ApplyError(_not_folded(run, exc)) from exc
    finally:
        run.journal.close()
    reads_before = client.stats.calls
    _prove(client, plan, state, on_mismatch, had=live)
    read_back = client.stats.calls - reads_before
    shown.reads(read_back)  # the bar counts what the summary counts: every call
    result = ApplyResult(changed=done, calls=client.stats.calls - calls_before, state=state, reads=reads + read_back)
    if plan.needs_person:
        # Everything else is done and recorded; what only a person can settle
        # is said last, and is not a success.
        raise ApplyError(_needs_person(plan, result))
    return result


def _needs_person(plan: Plan, result: ApplyResult) -> str:
    done = (f"Apply made every other change (the plan's {plural(result.changed, 'change')}, in "
            f"{plural(result.calls, 'API call')})" if result.changed else "Apply had nothing else to change")
    lines = needs_person_lines(plan, lambda text, _style: printable(text))
    return (f"{done}, but {lines[0][0].lower()}{lines[0][1:]}\n" + "\n".join(lines[1:])
            + "\nThen run 'reconciler plan' again.")


def _fold_leftover(store: StateBackend, state: State) -> State:
    """``state`` with the journal an earlier, stopped apply left folded into the state."""
    try:
        return store.fold_leftover(state)
    except StateWriteError as exc:
        raise ApplyError(f"Nothing was changed: the journal an earlier apply left could not be folded into "
                         f"{exc.noun}. {exc} {exc.remedy}, then run the apply again.") from exc


def _apply_changes(run: _Run, shown: ApplyProgress,
                   on_change: Callable[[Change | None], None] | None) -> int:
    """Make the plan's changes in order, recording each; how many were made."""
    plan, client = run.plan, run.client
    _record_adoptions(run)
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
            raise ApplyError(_stopped(change, part.cause, done, plan, made=part.made)) from part.cause
        except (ApiError, UploadExpired, NotReadyInTime) as exc:
            raise ApplyError(_stopped(change, exc, done, plan)) from exc
        except StateWriteError as exc:  # a record within a change (an asset's steps, a creation that stops)
            raise ApplyError(_unrecorded(change, exc, done, plan, whole=False)) from exc
        done += 1
        try:
            run.save()
        except StateWriteError as exc:
            raise ApplyError(_unrecorded(change, exc, done, plan, whole=True)) from exc
        shown.waiting(client.stats.waited_seconds - waited)
        shown.change_finished(change, client.stats.calls - calls)
    if on_change is not None:
        on_change(None)
    return done


def _record_moves(run: _Run) -> None:
    """The manifests' moved: entries, recorded before any change: they need no call,
    and every change after them names the addresses as they are now."""
    for move in run.plan.moved:
        recorded = run.state.get(move.previous_address)
        if recorded is not None:
            run.state.put(move.address, recorded)
            run.state.remove(move.previous_address)
    if run.plan.moved:
        run.save()


def _record_adoptions(run: _Run) -> None:
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


def _fold_after_stop(run: _Run, stop: BaseException) -> None:
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


def _kept_in_journal(run: _Run, exc: StateWriteError) -> str:
    if not run.journal.started:
        return f"{exc.noun.capitalize()} could not be written either: {exc}"
    return (f"Folding the journal into {exc.noun} failed too ({exc}); {run.journal.where} keeps "
            f"the {plural(run.journal.lines, 'change')} recorded, and every command reads it with {exc.noun}.")


def _not_folded(run: _Run, exc: StateWriteError) -> str:
    """Every change was made and recorded in the journal; the file was not written."""
    if not run.journal.started:
        return f"Apply made every change, but {exc.noun} could not be written: {exc}"
    return (
        f"Apply made every change and recorded each in {run.journal.where}, but could not fold it "
        f"into {exc.noun}: {exc} Nothing is lost: every command reads the journal with {exc.noun}, "
        f"and the next apply, import or 'state rm' folds it in. {exc.remedy}, then run 'reconciler plan'."
    )


def _describe(change: Change) -> str:
    calls = ", ".join(f"{c.method} {c.path}" for c in change.calls)
    if isinstance(change, AccessChange) and change.governs == "join":
        calls = f"made by the connect of {change.rides_on}"
    elif isinstance(change, AccessChange) and change.rides_on:
        calls = f"carried by the creation of {change.rides_on}"
    return f"{change.address}: {calls}"


def _apply_change(run: _Run, change: Change) -> None:
    """Make one change and record it in ``run.state`` (saved by the caller)."""
    if isinstance(change, AccessChange):
        if change.rides_on is None:
            _apply_access(run.client, change, run.live.workspaces[change.workspace_id])
        if change.governs != "join":  # a join's list is the group's, recorded under the group
            _record(run.state, run.managed[change.address], run.today(),
                    reviewed=reviewed_revocations(change, run.today(), run.state.serial + 1))
    elif isinstance(change, ConnectChange):
        _connect(run.client, change)
        named = {"name": change.workspace_name} if change.workspace_name is not None else {}
        run.state.bind(change.address, change.workspace_id, connected_to=change.homepage_id, **named)
    elif isinstance(change, CreateChange):
        _create(run, change)
    elif isinstance(change, AssetChange):
        apply_asset_in_place(run.client, change, run.state, save=run.save, say=run.say, wait=run.wait)
    else:
        _set(run.client, change, run.state)


def _unrecorded(change: Change, exc: StateWriteError, done: int, plan: Plan, *, whole: bool) -> str:
    """The service was changed and the state could not say so: name what."""
    made = "was made in the service" if whole else "was partly made in the service (an asset's steps)"
    before = done - 1 if whole else done
    return (
        f"Apply stopped: {change.address} ({change.location}) {made}, but {exc.noun} could not record it. "
        f"{exc} The state records the {plural(before, 'change')} before it; "
        f"{_not_attempted(len(plan.changes) - before - 1)}. {exc.remedy}, then run 'reconciler "
        "plan': access lists are read live, and a workspace created here is found again by the intent recorded "
        "before its creation, and adopted."
    )


def _not_attempted(n: int) -> str:
    """``the 2 changes after it were not attempted``, in the right number."""
    if n == 0:
        return "no change came after it"
    return f"the {plural(n, 'change')} after it {'was' if n == 1 else 'were'} not attempted"


def _stopped(change: Change, exc: ReconcilerError, done: int, plan: Plan, *, made: str = "") -> str:
    """What was done, what may have been, and what was not: one sentence each."""
    total = len(plan.changes)
    before = ("None of the plan's changes was made before this one." if done == 0 else
              f"{done} of the plan's {plural(total, 'change')} {'was' if done == 1 else 'were'} made before this "
              f"one; the service keeps {'it' if done == 1 else 'them'} and the state records "
              f"{'it' if done == 1 else 'them'}.")
    if made:
        this = f"Of this change, {made} before the failure."
    elif getattr(exc, "outcome", ""):
        this = "This change may or may not have been made (its answer was lost)."
    else:
        this = "This change was not made."
    return (
        f"Apply stopped at {change.address} ({change.location}): {exc}{_cause(change, exc, plan)} {before} "
        f"{this} {_not_attempted(total - done - 1).capitalize()}. "
        f"Run 'reconciler plan' to see what remains."
    )


def _cause(change: Change, exc: ReconcilerError, plan: Plan) -> str:
    """What a refusal means for this kind of change, in the service's terms."""
    if isinstance(change, ConnectChange) and isinstance(exc, Conflict):
        return (f" Workspace {change.workspace_id} is already in another group (or belongs to another "
                f"account). The API cannot disconnect a workspace; that happens in the web app: disconnect "
                f"it there, or take it out of {change.group} in the manifest.")
    if isinstance(change, CreateChange) and isinstance(exc, Forbidden):
        count = f"{plan.live_workspaces} workspaces" if plan.live_workspaces is not None else "an unknown number"
        return (f" The service refuses new workspaces for two documented reasons: the company is on the "
                f"free plan, which allows 10 workspaces in total, active and archived (it had {count} when "
                f"the plan was made), or the company is not verified, and only verified companies may "
                f"publish workspaces. A company without workspace credits left is refused too.")
    if isinstance(change, CreateChange) and getattr(exc, "status", None) == 400:
        return (f" Check that template {change.template_id} exists for this company and whether it needs "
                f"a deal (crmOneDealId or crmTwoOpportunityId of the group account's CRM company).")
    if isinstance(change, SettingChange) and isinstance(exc, NotFound):
        return (f" The service has no {change.kind} {change.item_id}: check the id in the manifest "
                f"(it belongs to workspace {change.workspace_id}).")
    refused = getattr(exc, "status", None) == 400 or isinstance(exc, NotReadyInTime)
    if isinstance(change, AssetChange) and change.tags and refused:
        return (f" Check that the tags {', '.join(change.tags)} exist for this company (the service "
                "answers 400 for an unknown tag id).")
    return ""


def _refresh(client: WorkspaceClient, plan: Plan) -> Live:
    """Re-read the lists the plan writes and refuse, before any write, when
    one moved since the plan (a list riding on a creation is written too)."""
    live, moved = _compare_lists(client, plan, expect=lambda c: c.before)
    if moved:
        lines = "\n".join(f"  {c}" for c in moved)
        raise ApplyError(
            "Nothing was changed: access in the service changed since the plan was made, and "
            f"applying it would undo someone else's change:\n{lines}\n"
            "Run 'reconciler plan' again and review the new plan."
        )
    return live


def _prove(client: WorkspaceClient, plan: Plan, state: State,
           on_mismatch: Callable[[list[str]], None] | None, *, had: Live) -> None:
    """Read every list the apply touched once more (one listing) and compare
    each with the list the plan predicted for that workspace (``effects``;
    a list it wrote and predicted unchanged, with the list it had: ``had``,
    the lists read before the first write).

    Any difference is an error: the plan a reviewer approved said what each
    workspace's access would be, and the service shows something else (a
    rule of the service the effects model does not know, or someone writing
    the same list at the same time: the API has no compare-and-swap).
    """
    expected = _predicted(plan, state, had)
    if not expected:
        return
    live = fetch_live(client, list(expected))
    differ = []
    for workspace_id, want in expected.items():
        ws = live.workspaces.get(workspace_id)
        if ws is None:
            differ.append(f"{workspace_id}: predicted a list, the service no longer has the workspace")
        elif _as_stored(_snapshot(ws)) != _as_stored(want):
            differ.append(f"{workspace_id}: {_describe_difference(_as_stored(want), _as_stored(_snapshot(ws)))}")
    if not differ:
        return
    if on_mismatch is not None:
        on_mismatch(differ)
    lines = "\n".join(f"  {line}" for line in differ)
    raise ApplyError(
        "Apply made every change, but reading the lists back shows access other than the plan predicted "
        f"(someone changed them at the same time, or the service did more than its description says):\n{lines}\n"
        "Run 'reconciler plan' to see the lists as they are now, and run applies one at a time "
        "(a CI concurrency group)."
    )


def _predicted(plan: Plan, state: State, had: Live) -> dict[str, AccessSnapshot]:
    """Workspace id -> the list the plan predicts there, for every workspace it touches."""
    expected: dict[str, AccessSnapshot] = {}
    for joining in _joining(plan):
        ws = had.workspaces.get(joining)
        if ws is not None:  # the connect replaces its list with the group's: predicted to end as it was
            expected[joining] = _snapshot(ws)
    for change in plan.access_changes:
        expected[change.workspace_id] = change.before  # written, and predicted to end as it was
    for effect in plan.effects:
        workspace_id = effect.workspace
        if workspace_id is None and effect.creates is not None:
            created = state.resources.get(effect.creates)
            workspace_id = created.id if created is not None else None
        if workspace_id:
            expected[workspace_id] = effect.after.snapshot()
    return expected


def _describe_difference(predicted: AccessSnapshot, shown: AccessSnapshot) -> str:
    """``predicted cfo@acme.com owner absent, service shows it``: per entry, what differs."""
    parts = []
    for want, got in ((predicted.users, shown.users), (predicted.domains, shown.domains)):
        for key in sorted(want.keys() | got.keys()):
            if key not in got:
                parts.append(f"predicted {key} {want[key]}, service shows it absent")
            elif key not in want:
                parts.append(f"predicted {key} {got[key]} absent, service shows it")
            elif want[key] != got[key]:
                parts.append(f"predicted {key} {want[key]}, service shows {got[key]}")
    return "; ".join(parts)


def _compare_lists(client: WorkspaceClient, plan: Plan,
                   expect: Callable[[AccessChange], AccessSnapshot]) -> tuple[Live, list[str]]:
    """One listing (stopping once every written list is seen); each written
    list that does not hold ``expect(change)``, described."""
    written = plan.access_changes
    joining = _joining(plan)
    if not written and not joining:
        return Live(workspaces={}), []
    live = fetch_live(client, [*(c.workspace_id for c in written), *joining])
    differ = []
    for change in written:
        ws = live.workspaces.get(change.workspace_id)
        if ws is None:
            differ.append(f"{change.address} ({change.location}): workspace {change.workspace_id} no longer exists.")
        elif _as_stored(_snapshot(ws)) != _as_stored(expect(change)):
            differ.append(f"{change.address} ({change.location}): {_describe_drift(expect(change), _snapshot(ws))}")
    return live, differ


def _joining(plan: Plan) -> list[str]:
    """The workspaces the plan's connects join to a group: each connect writes its list (rule 1), so
    it is read before the first write and proven after the last even when predicted to end as it was."""
    return [c.workspace_id for c in plan.changes if isinstance(c, ConnectChange)]


def _apply_access(client: WorkspaceClient, change: AccessChange, ws: LiveWorkspace) -> None:
    if change.strategy == "patch":
        made: list[str] = []
        for entry in change.entries:  # in the order the plan sends them (promotions to owner first)
            entries = ws.users if entry.kind == "user" else ws.domains
            entry_id = entries[entry.key].id
            assert entry.after is not None  # patch strategy holds updates only
            try:
                if entry.kind == "user":
                    client.update_workspace_user(entry_id, role=entry.after)
                else:
                    client.update_workspace_domain(entry_id, role=entry.after)
            except ApiError as exc:
                if made:
                    raise _PartlyMade(exc, f"the role changes of {', '.join(made)} were made") from exc
                raise
            made.append(f"{entry.kind} {entry.key} ({entry.before} -> {entry.after})")
        return
    kinds = {e.kind for e in change.entries}
    users, domains = _inputs(change.after)
    answer = client.set_access(
        change.workspace_id,
        users=users if "user" in kinds else None,
        domains=domains if "domain" in kinds else None,
        notify_people=change.notify,
        message=change.message if change.notify else None,
        properties=ACCESS_PROPERTIES,
    )
    got = _snapshot(read_workspace(answer))
    # Only the sides sent are checked: the other is the list's own, which an earlier change of this
    # plan may have changed (one list shared with another workspace the plan writes); the proof after
    # the last write compares the whole list with the prediction.
    sent = AccessSnapshot(users=change.after.users if "user" in kinds else got.users,
                          domains=change.after.domains if "domain" in kinds else got.domains)
    _check_lists(change.address, f"POST /workspaces/{change.workspace_id}/access", sent, got)


def _inputs(snapshot: AccessSnapshot) -> tuple[list[AccessUserInput], list[AccessDomainInput]]:
    return ([AccessUserInput(email=k, role=r) for k, r in snapshot.users.items()],
            [AccessDomainInput(domain=k, role=r) for k, r in snapshot.domains.items()])


def _check_lists(address: str, call: str, expected: AccessSnapshot, got: AccessSnapshot) -> None:
    if _as_stored(got) != _as_stored(expected):
        raise ApplyError(
            f"{address}: the service accepted {call} but reports a different list than was sent: "
            f"{_describe_drift(expected, got)} This is a bug in the service or in reconciler; "
            "run 'reconciler plan' to see the result."
        )


def _connect(client: WorkspaceClient, change: ConnectChange) -> None:
    """Connect an existing workspace.  Connecting one already in the group
    answers 200 and changes nothing, so after an answer that leaves the
    outcome open the call is simply sent once more."""
    body = ConnectExisting(workspaceId=change.workspace_id)
    try:
        client.connect_workspace(change.homepage_id, body)
    except AMBIGUOUS:
        client.connect_workspace(change.homepage_id, body)


def _create(run: _Run, change: CreateChange) -> None:
    """Create from the template and record the new id.

    The intent is recorded (journaled, fsynced) before the call: if the
    process dies before the answer is recorded, the next plan finds the
    workspace by it and adopts it.  A creation is never sent twice: after an
    answer that leaves it open (5xx, lost connection) the workspaces are
    listed and one of this account, template and name that the state does
    not know is taken as the one just created.
    """
    _record_intent(run, change)
    users, domains = _inputs(change.access) if change.access is not None else (None, None)
    body = CreateFromTemplate(
        templateId=change.template_id,
        name=change.name,
        startDate=change.start_date,
        targetEndDate=change.target_end_date,
        actualEndDate=change.actual_end_date,
        crmOneDealId=change.crm_one_deal_id,
        crmTwoOpportunityId=change.crm_two_opportunity_id,
        workspaceUsers=tuple(users) if users is not None else None,
        workspaceDomains=tuple(domains) if domains is not None else None,
    )
    try:
        created = run.client.connect_workspace(change.homepage_id, body, properties=CREATED_PROPERTIES).workspace
    except AMBIGUOUS as exc:
        workspace_id = _find_created(run, change, exc)  # none found: the intent is closed, the apply stops
        run.say(f"{change.address}: the answer was lost, but workspace {workspace_id} was created; recorded")
        _record_created(run, change, workspace_id)
        return
    except (ApiError, UploadExpired, NotReadyInTime):
        _close_intent(run, change)  # refused outright: nothing was made
        raise
    run.say(f"{change.address}: created workspace {created.id}")
    if change.access is not None:
        try:
            _check_lists(change.address, f"POST /workspaces/{change.homepage_id}/connected-workspaces",
                         change.access, _snapshot(read_workspace(created)))
        except ApplyError:
            # The workspace exists (its credit is spent) whatever its list is:
            # its id is recorded before the apply stops, so the next plan
            # knows it instead of asking for an 'import' by hand.
            run.state.bind(change.address, created.id, connected_to=change.homepage_id,
                           template=change.template_id, name=change.name)
            run.save()
            raise
    _record_created(run, change, created.id)


def _record_intent(run: _Run, change: CreateChange) -> None:
    """Journal what is about to be created, and when, before the call (write-ahead)."""
    at = datetime.datetime.fromtimestamp(run.client.clock.now(), datetime.UTC)
    intent = CreationIntent(at=at.isoformat(timespec="seconds").replace("+00:00", "Z"), name=change.name,
                            account=change.account_id, template=change.template_id, group=change.group,
                            homepage=change.homepage_id)
    run.state.put(change.address, ResourceState(id="", intent=intent))
    try:
        run.save()
    except StateWriteError as exc:
        raise ApplyError(f"Apply stopped at {change.address} ({change.location}) before its creation was sent: "
                         f"{exc.noun} could not record the intent to create it. {exc} {exc.remedy}, then run "
                         "'reconciler apply' again.") from exc


def _close_intent(run: _Run, change: CreateChange) -> None:
    """The creation was not made: its intent goes (recorded before the apply stops)."""
    run.state.remove(change.address)
    run.save()


def _record_created(run: _Run, change: CreateChange, workspace_id: str) -> None:
    run.state.bind(change.address, workspace_id, connected_to=change.homepage_id, template=change.template_id,
                   name=change.name)
    if change.access_address is not None:
        _record(run.state, run.managed[change.access_address], run.today())


def _find_created(run: _Run, change: CreateChange, exc: ApiError) -> str:
    listed = list(run.client.list_workspaces(properties=LOOKUP_PROPERTIES))
    account = next((w.accountId for w in listed if w.id == change.homepage_id), None)
    found = namesakes(((w.id, Identity(w.accountId, w.templateId, w.name)) for w in listed),
                      run.state.knows_id).get(Identity(account, change.template_id, change.name), [])
    if len(found) == 1:
        return found[0]
    if not found:
        _close_intent(run, change)
        raise ApplyError(
            f"Apply stopped at {change.address} ({change.location}): {exc} "
            f"{_no_new_namesake(run, change, listed, account)} Run 'reconciler apply' again."
        ) from exc
    raise ApplyError(
        f"Apply stopped at {change.address} ({change.location}): {exc} Several workspaces named "
        f"\"{change.name}\" from template {change.template_id} that the state does not know exist "
        f"({', '.join(found)}); adopt the right one with 'reconciler import {change.address} ID'."
    ) from exc


def _no_new_namesake(run: _Run, change: CreateChange, listed: list[Workspace], account: str | None) -> str:
    """Why nothing was created: no workspace of that name and template, or
    only ones the state binds to other addresses (said so, by address: one
    of them may be the workspace meant, adopted under an old address)."""
    named = f"\"{change.name}\" from template {change.template_id}"
    bound = [w.id for w in listed if Identity(w.accountId, w.templateId, w.name)
             == Identity(account, change.template_id, change.name) and run.state.knows_id(w.id)]
    if not bound:
        return f"No workspace named {named} exists, so none was created and no credit was used."
    addresses = {r.id: a for a, r in run.state.items() if r.id}
    where = ", ".join(f"{wid}, bound to {addresses.get(wid)}" for wid in bound)
    return (f"No new workspace named {named} exists, so none was created and no credit was used (of that name "
            f"there is only {where} in the state). If that is the workspace meant for {change.address}, bind it "
            f"there: 'reconciler state rm {addresses.get(bound[0])}' and 'reconciler import {change.address} "
            f"{bound[0]}'.")


def _set(client: WorkspaceClient, change: SettingChange, state: StateBuilder) -> None:
    if change.kind == "task":
        client.update_workspace_plan_task(change.item_id, completed=change.after)
    elif change.kind == "section":
        client.update_workspace_section(change.item_id, is_hidden=change.after)
    else:
        client.update_workspace_page(change.item_id, is_hidden=change.after)
    state.record_setting(change.workspace_address, change.workspace_id, change.kind, change.item_id, change.after)


def _as_stored(snapshot: AccessSnapshot) -> AccessSnapshot:
    """``snapshot`` as the service stores what it is sent: an address reported
    with spaces around it (" ana@acme.com", made in the web app) is kept when a
    list is written, and the service trims it. Compared as written, that
    difference stopped an apply half-way, after the lists before it."""
    return AccessSnapshot(users={k.strip(): r for k, r in snapshot.users.items()},
                          domains={k.strip(): r for k, r in snapshot.domains.items()})


def _snapshot(ws: LiveWorkspace) -> AccessSnapshot:
    fp = ws.access_fingerprint()
    return AccessSnapshot(users=fp["users"], domains=fp["domains"])


def _describe_drift(expected: AccessSnapshot, actual: AccessSnapshot) -> str:
    parts = []
    for kind, want, got in (("user", expected.users, actual.users), ("domain", expected.domains, actual.domains)):
        for key in sorted(want.keys() | got.keys()):
            if want.get(key) != got.get(key):
                parts.append(f"{kind} {key} was {want.get(key) or 'absent'}, now {got.get(key) or 'absent'}")
    return "; ".join(parts) + "."


def reviewed_revocations(change: AccessChange, today: str, serial: int) -> dict[str, RevokedByReview]:
    """The entries ``change`` removes for an access review, as the state records them once applied."""
    return {f"{e.kind}:{e.key}": RevokedByReview(campaign=e.source.campaign or "", reviewer=e.source.reviewer,
                                                 applied=today, serial=serial)
            for e in change.entries
            if e.action is Action.DELETE and e.source is not None and e.source.kind == "review"}


def _record(state: StateBuilder, managed: ManagedAccess, today: str,
            reviewed: Mapping[str, RevokedByReview] | None = None) -> None:
    """Record the list's managed entries as applied; each keeps the date it was first managed.

    A workspace no manifest names (``unmanaged.<id>``) where the rules put
    nothing any more is forgotten, unless an access review revoked something
    there (kept as the review's evidence)."""
    old = state.get(managed.address)
    if managed.address.startswith("unmanaged.") and not managed.users and not managed.domains and not reviewed \
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


def _record_all(state: StateBuilder, plan: Plan, today: str) -> None:
    """Remember every managed list, changed or not, so that an entry dropped
    from a non-authoritative list later is known to be ours to remove; and
    forget what no manifest names any more (a whole, untargeted plan only).
    In place, once per address: written by the fold that follows, not
    journaled (an apply stopped before it does this again next time)."""
    for managed in plan.managed:
        _record(state, managed, today)
    if not plan.targets:
        for address in plan.forgotten:
            state.remove(address)
        with_lists = {m.address for m in plan.managed}
        for address, resource in state.items():
            if address.startswith("unmanaged.") and address not in with_lists:
                state.remove(address)  # no rule puts anything there any more
            elif resource.access is not None and address not in with_lists:
                state.put(address, resource.model_copy(update={"access": None}))
