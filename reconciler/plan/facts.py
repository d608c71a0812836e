"""What a plan says besides its changes: warnings, forgotten addresses,
entries left alone, workspaces no manifest names, and the summary counts.

Each function is one rule, read from the manifests, the service and the
state and the changes already planned; none of them changes a change.
Pure, like the rest of ``plan/``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from datetime import date, timedelta

from reconciler.addresses import is_unmanaged
from reconciler.live import Live
from reconciler.manifest import AccessList, Desired
from reconciler.plan.model import AccessChange, Action, Change, LeftAlone, PlanSummary
from reconciler.state.model import State
from reconciler.text import plural
from reconciler.vocabulary import FREE_PLAN_WORKSPACES

# (address, workspace id, list) of every access list in the plan's scope.
Lists = Sequence[tuple[str, str, AccessList]]


def forgotten(desired: Desired, state: State, targets: Sequence[str]) -> tuple[str, ...]:
    """State addresses no manifest names any more (none under --target:
    a partial plan cannot tell a forgotten address from one outside it)."""
    if targets:
        return ()
    # One set for the whole state: building it per resource made a plan with a
    # state of N addresses quadratic (51 s at 10,000 workspaces; bench/README.md).
    named = set(desired.addresses())
    # unmanaged.<id>: what rules put on a workspace no manifest names (plan/company.py keeps it).
    return tuple(a for a in state.resources if a not in named and not is_unmanaged(a))


def warnings(desired: Desired, live: Live, state: State, changes: Sequence[Change], forgotten: Sequence[str], *,
             today: date | None, expiry_warning_days: int, state_in_postgres: bool = False) -> list[str]:
    """The plan's own warnings, after those its steps found, in this order."""
    found = free_plan_warning(changes, live)
    found += [forgotten_warning(a, state) for a in forgotten]
    found += no_state_warning(desired, state, in_postgres=state_in_postgres)
    found += list(desired.notes)
    if today is not None:
        found += expiry_warnings(desired, today, expiry_warning_days)
    return found


def free_plan_warning(changes: Sequence[Change], live: Live) -> list[str]:
    """The creations would take the company past the free plan's workspaces."""
    creations = sum(1 for c in changes if c.subject == "workspace" and c.action is Action.CREATE)
    if not creations or live.total is None or live.total + creations <= FREE_PLAN_WORKSPACES:
        return []
    return [
        f"The company has {plural(live.total, 'workspace')}; the {plural(creations, 'creation')} in this plan "
        f"would make "
        f"{live.total + creations}. If it is on the free plan ({FREE_PLAN_WORKSPACES} workspaces in total, "
        "active and archived), the service will refuse the creations past that with 403."
    ]


def forgotten_warning(address: str, state: State) -> str:
    resource = state.resources[address]
    kept = (f"Asset {resource.id or '(not created)'} stays in the service (the API cannot delete assets)."
            if resource.asset is not None else
            f"Workspace {resource.id} stays in the service as it is (the API can neither delete nor "
            "disconnect it).")
    return f"{address}: no manifest names it any more; reconciler forgets it after the next apply. {kept}"


def no_state_warning(desired: Desired, state: State, *, in_postgres: bool = False) -> list[str]:
    """Without a state, what the plan cannot know, said once (a fresh CI
    checkout without the state would otherwise silently skip a removal), in
    the words of where the state is kept (a file, or PostgreSQL)."""
    if state.lineage or state.resources:
        return []
    blind = []
    if any(not a.authoritative for _, _, a in desired.access_lists()):
        blind.append("which entries of non-authoritative lists it manages, so it removes none")
    if any(g.members for g in desired.groups) or any(w.sections or w.pages or w.tasks for w in desired.workspaces):
        blind.append("which memberships and section, page and task values it applied, so it sends them all")
    if desired.assets:
        blind.append("which assets it created, so it creates them all")
    if not blind:
        return []
    if in_postgres:
        # No address in the text: a URL given on the command line may carry a password.
        return [f"The PostgreSQL state is empty: reconciler cannot know {'; '.join(blind)}. If the state is kept "
                "elsewhere (another database, schema or key, or a state file), plan with it (--state)."]
    return [f"There is no state file: reconciler cannot know {'; '.join(blind)}. If a state file exists "
            "elsewhere (another machine, a CI artifact), plan with it (--state FILE)."]


def expiry_warnings(desired: Desired, today: date, within_days: int) -> list[str]:
    """Grants that expire within ``within_days`` of ``today``, soonest first."""
    soon = []
    for address, _, access in desired.access_lists():
        if not access.expiring():
            continue
        for kind, key, expires, location in (
            *(("user", u.email, u.expires, u.location) for u in access.users),
            *(("domain", d.domain, d.expires, d.location) for d in access.domains),
        ):
            if expires is not None and today < expires <= today + timedelta(days=within_days):
                days = (expires - today).days
                soon.append((expires, f"{location}: {address}: the grant to {kind} {key} expires on "
                                      f"{expires.isoformat()} (in {plural(days, 'day')}); from then "
                                      "on the plan removes it."))
    return [text for _, text in sorted(soon, key=lambda item: item[0])]


def left_alone(lists: Lists, live: Live, state: State,
               listed_in: Callable[[str, AccessList], set[tuple[str, str]]] | None = None) -> tuple[LeftAlone, ...]:
    """Without a state file, every live entry of a non-authoritative list that
    the manifest does not list: the plan leaves it alone, though reconciler
    may have granted it (a removal from the manifest then never happens)."""
    if state.lineage or state.resources:
        return ()
    found = []
    for address, workspace_id, access in lists:
        ws = live.workspaces.get(workspace_id)
        if access.authoritative or ws is None:
            continue
        # Listed entries are managed (an expired one is removed), so only the others count.
        listed = (listed_in(address, access) if listed_in is not None else  # teams and rules included
                  {("user", u.email) for u in access.users} | {("domain", d.domain) for d in access.domains})
        for key, entry in sorted(ws.users.items()):
            if ("user", key) not in listed:
                found.append(LeftAlone(address=address, workspace_id=workspace_id, kind="user", key=key,
                                       role=entry.role, location=str(access.location)))
        for key, entry in sorted(ws.domains.items()):
            if ("domain", key) not in listed:
                found.append(LeftAlone(address=address, workspace_id=workspace_id, kind="domain", key=key,
                                       role=entry.role, location=str(access.location)))
    return tuple(found)


def unmanaged(managed_ids: set[str], live: Live, *, targets: Sequence[str],
              show: bool) -> tuple[int | None, tuple[str, ...]]:
    """How many of the company's workspaces no manifest names (None when not
    known: a partial plan, or a service that gave no total), and their
    labels when asked for (``plan --show-unmanaged``, from the complete listing)."""
    count = None if targets or live.reported_total is None else max(0, live.reported_total - len(managed_ids))
    if not (show and live.complete and not targets):
        return count, ()
    return count, tuple(f'{w.id} "{w.name}"' if w.name else w.id for w in live.workspaces.values()
                        if w.id not in managed_ids)


def summary(changes: Sequence[Change]) -> PlanSummary:
    """Access entries by action; workspaces, settings and assets by what is done to them."""
    entries = Counter(e.action for c in changes if isinstance(c, AccessChange) for e in c.entries)
    done = Counter((c.subject, c.action) for c in changes)
    return PlanSummary(
        create=entries[Action.CREATE],
        update=entries[Action.UPDATE],
        delete=entries[Action.DELETE],
        workspaces_created=done["workspace", Action.CREATE],
        workspaces_connected=done["workspace", Action.CONNECT],
        settings=done["setting", Action.UPDATE],
        assets_created=done["asset", Action.CREATE],
        assets_replaced=done["asset", Action.REPLACE],
        assets_updated=done["asset", Action.UPDATE],
    )
