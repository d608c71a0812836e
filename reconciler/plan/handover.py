"""A list a rule would leave without an owner: a handover, a person, or a refusal.

A rule's ``revoke`` takes a person off every matching workspace; where that
person was the last owner, the list would be left with none, which the
service allows and nobody wants.  Three outcomes, decided here:

- the revoking rule names a ``successor``: the successor becomes owner there
  (``hand_over``), and the plan shows it under "Review first" as a handover;
- a workspace no manifest names (``governs == "rules"``): nothing is changed
  there and a person is asked (``ownerless_needs_person``), so one workspace
  never holds back a rollout over the rest of the company;
- a manifest's list: the plan is refused (``ownerless_problems``), as an
  explicit list is the manifest author's to fix.

Each message names the person, the rule that revokes them (its line), and
the two ways out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from reconciler.manifest.desired import DesiredRule
from reconciler.plan.model import AccessChange, EntryChange, EntrySource, NeedsPerson
from reconciler.plan.teams import Alternative, ExpandedAccess, Grant, GrantSource
from reconciler.text import plural


class Leaver(NamedTuple):
    """An owner a rule's revoke takes off a list, and that rule."""

    email: str
    rule: DesiredRule


def leavers(change: AccessChange, rules: Sequence[DesiredRule]) -> list[Leaver]:
    """The owners ``change`` removes because a rule revokes them."""
    found = []
    for entry in change.removals:
        if entry.kind != "user" or entry.before != "owner":
            continue
        rule = next((r for r in rules if any(e.key == entry.key for e in r.revoke_users)), None)
        if rule is not None:
            found.append(Leaver(entry.key, rule))
    return found


def hand_over(change: AccessChange, expanded: ExpandedAccess, rules: Sequence[DesiredRule]) -> ExpandedAccess | None:
    """``expanded`` with the successor of a revoking rule made owner, when
    ``change`` leaves its list without an owner and a revoked owner's rule
    names one; None when there is nothing to hand over."""
    if change.after.owners():
        return None
    for leaver in leavers(change, rules):
        # Any rule that revokes the leaver and names a successor will do: the first, in manifest order.
        rule = next((r for r in rules if r.successor is not None
                     and any(e.key == leaver.email for e in r.revoke_users)), None)
        if rule is None or rule.successor is None:
            continue
        successor = rule.successor
        source = GrantSource("rule", successor.location, rule=rule.key)
        held = expanded.users.get(successor.email)
        also = (*held.also, Alternative(held.role, held.source)) if held is not None else ()
        users = {**expanded.users, successor.email: Grant(successor.email, "owner", source, None, also)}
        return expanded._replace(users=users)
    return None


def handover_entry(entry: EntryChange, change: AccessChange, rules: Sequence[DesiredRule]) -> EntryChange:
    """The successor's entry, flagged ``handover`` and saying whom it takes over from."""
    rule = next(r for r in rules if r.successor is not None and r.successor.email == entry.key)
    gone = ", ".join(leaver.email for leaver in leavers(change, rules))
    assert rule.successor is not None  # found by it
    if rule.from_directory:
        return entry.model_copy(update={
            "flags": (*entry.flags, "handover"),
            "source": EntrySource(kind="directory", location=str(rule.successor.location), rule=rule.key),
            "reason": (f"handover: {gone} left (deactivated in the directory), the last owner here; the successor the "
                       f"directory names ({rule.successor.location}) becomes owner"),
        })
    return entry.model_copy(update={
        "flags": (*entry.flags, "handover"),
        "source": EntrySource(kind="rule", location=str(rule.successor.location), rule=rule.key),
        "reason": (f"handover: rule {rule.key} revokes {gone}, the last owner here; its successor "
                   f"({rule.successor.location}) becomes owner"),
    })


def _workspace(change: AccessChange) -> str:
    name = f' "{change.workspace_name}"' if change.workspace_name else ""
    return f"{change.workspace_id}{name}"


def _ways_out(leaver: Leaver, what: str) -> str:
    if leaver.rule.from_directory:
        return (f"give {leaver.email} an active manager in the identity provider (reconciler directory sync names "
                f"them successor, who becomes owner wherever {leaver.email} was the last one), or give {what} an "
                "owner in a manifest")
    return (f"name a successor under rule {leaver.rule.key}'s revoke (successor: EMAIL becomes owner wherever "
            f"{leaver.email} was the last one), or give {what} an owner in a manifest")


def ownerless_needs_person(change: AccessChange, rules: Sequence[DesiredRule]) -> NeedsPerson:
    """A workspace no manifest names that the rules would leave (or find) without an owner: skipped, with why."""
    found = leavers(change, rules)
    location = change.location
    if not change.before.owners():
        acting = (f"rule {change.rules[0]} would change it" if len(change.rules) == 1 else
                  f"rules {', '.join(change.rules)} would change it" if change.rules else
                  "the rules would take back what they had put there")
        reason = f"its list has no owner now, and {acting}; a list without an owner is left to a person"
        check = "Give it an owner in the web app, or name it in a manifest with an owner"
    elif found:
        leaver = found[0]
        location = _revoke_line(leaver)
        reason = (f"{leaver.email} is its only owner, and {_revoker(leaver)} "
                  f"({_revoke_line(leaver)}) revokes them; nothing is changed on it until then")
        check = _ways_out(leaver, "the workspace")[0].upper() + _ways_out(leaver, "the workspace")[1:]
    else:
        taken = [e for e in change.entries if e.before == "owner"]
        downgraded = ", ".join(e.key for e in taken)
        by = ("an access review would" if any(e.source is not None and e.source.kind == "review" for e in taken)
              else "the rules would")
        owners = "its only owner" if len(taken) == 1 else "its only owners"
        reason = f"{by} take the owner role from {downgraded}, {owners}; nothing is changed on it until then"
        check = "Give it another owner in the web app, or name it in a manifest with an owner"
    return NeedsPerson(kind="access", cause="ownerless", address=change.address, location=location,
                       reason=f"{_workspace(change)}: {reason}", check=f"{check}.", resolutions=())


def ownerless_problems(changes: Sequence[AccessChange], rules: Sequence[DesiredRule]) -> list[str]:
    """For a refusal: each manifest list left without an owner; a leaver's
    lists together, with the person, the rule and the ways out."""
    by_leaver: dict[Leaver, list[AccessChange]] = {}
    problems = []
    for change in changes:
        found = leavers(change, rules)
        if not found:
            problems.append(f"{change.location}: {change.address} ({change.workspace_id}) would have no user or "
                            "domain with role owner.")
            continue
        by_leaver.setdefault(found[0], []).append(change)  # by the rule itself: the directory's share a name
    for leaver, lists in by_leaver.items():
        email = leaver.email
        # A group's list is on each of its workspaces: every one is named.
        names = ", ".join(f"{c.address} ({', '.join(c.reaches) if len(c.reaches) > 1 else _workspace(c)})"
                          for c in lists)
        problems.append(
            f"{_revoke_line(leaver)}: {_revoker(leaver)} revokes {email}, the only owner of "
            f"{plural(len(lists), 'list')}: {names}; {_ways_out(leaver, 'these lists')}.")
    return problems


def _revoker(leaver: Leaver) -> str:
    """``rule offboarded``, or for a leaver of the directory ``the directory (deactivated on 2026-12-01)``."""
    entry = next(e for e in leaver.rule.revoke_users if e.key == leaver.email)
    return f"rule {leaver.rule.key}" if entry.since is None else f"the directory (deactivated on {entry.since})"


def _revoke_line(leaver: Leaver) -> str:
    return str(next(e.location for e in leaver.rule.revoke_users if e.key == leaver.email))


def acting_rules(change: AccessChange) -> tuple[str, ...]:
    """The rules whose entries ``change`` adds, re-roles or removes, in the order first met."""
    found: dict[str, None] = {}
    for entry in change.entries:
        if entry.source is not None and entry.source.kind in ("rule", "directory") and entry.source.rule:
            found.setdefault(entry.source.rule)
    return tuple(found)
