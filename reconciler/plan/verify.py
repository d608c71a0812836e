"""The state is verified, never trusted.

The state file can pass through hands the tool cannot vouch for (a
repository a pull request edits, a copied artifact), and the plan acts on
what it records: a workspace id bound to an address decides which list a
connection replaces, an entry recorded as managed decides what is revoked
and why.  So before a plan is made, every record that names a live object is
checked against what the service reports, and a state whose records cannot
be explained is refused; nothing is planned from a state that does not hold.

What is checked:

- against the service, for each workspace id the listing read: the name,
  account and template the state recorded for it (``import``, a creation
  and a connection record them), and the group homepage it records the
  workspace as connected to (connected workspaces share one access list,
  so their entries carry the same ids; two non-empty lists that share no
  entry are not one group's);
- the state alone: one workspace id recorded under two addresses; the date
  or the team/rule a removal would be explained by, recorded for an entry
  the state never recorded as managed; a team or rule that is not a key
  (free text, which a plan would print as a reason); a date that is not
  one.

Assets cannot be read back (the API has no GET of an asset), so an asset id's
workspace and type cannot be checked against the service; an asset id
recorded under two addresses is refused like a workspace id.

Pure: no I/O.  Values quoted from the state are untrusted and pass through
:func:`reconciler.text.quoted`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from reconciler.addresses import is_asset, is_unmanaged
from reconciler.live import Live, LiveWorkspace
from reconciler.state.model import AccessRecord, ResourceState, State
from reconciler.text import quoted

# What a `via` records: the team or rule that put an entry there, by key
# (the manifests' key grammar), and nothing else.
_VIA = re.compile(r"(team|rule) [a-z0-9][a-z0-9-]*", re.ASCII)
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)


class Mismatch(NamedTuple):
    """One record of the state that does not hold: its address, what the
    state says, and what the service says (or why the record cannot be)."""

    address: str
    state_says: str
    service_says: str

    def line(self) -> str:
        return f"{quoted(self.address, 120)}: the state says {self.state_says}; {self.service_says}."


def mismatches(state: State, live: Live, templates: Mapping[str, str] | None = None) -> list[Mismatch]:
    """Every record of ``state`` that the service's answer (``live``) or the
    state itself contradicts, in address order.  ``templates``: the address
    of each workspace the manifests make from a template (no id of their
    own: the state's id is the only binding) and that template, which the
    bound workspace must have been made from, whatever the record says."""
    found = [*_unexplained(state), *_against_live(state, live), *_made_from(state, live, templates or {})]
    return sorted(found)


def _made_from(state: State, live: Live, templates: Mapping[str, str]) -> Iterator[Mismatch]:
    for address, template in templates.items():
        resource = state.resources.get(address)
        ws = live.workspaces.get(resource.id) if resource is not None else None
        if resource is not None and ws is not None and ws.template_id != template:
            made = f"was made from {quoted(ws.template_id)}" if ws.template_id else "was made from no template"
            yield Mismatch(address, f"it is workspace {quoted(resource.id)}, made from {quoted(template)} as "
                                    "the manifest says", f"the service says that workspace {made}")


def _against_live(state: State, live: Live) -> Iterator[Mismatch]:
    for address, resource in state.resources.items():
        ws = live.workspaces.get(resource.id)
        if is_asset(address) or ws is None:
            continue  # not listed: the plan says what it does about a workspace that is gone
        yield from _facts(address, resource, ws)
        if resource.connected_to is not None and resource.connected_to != resource.id:
            homepage = live.workspaces.get(resource.connected_to)
            if homepage is not None and not _one_list(ws, homepage):
                yield Mismatch(address, f"workspace {quoted(resource.id)} is connected to the group of "
                                        f"{quoted(resource.connected_to)}",
                               "the service shows it with an access list of its own, not that group's")


def _facts(address: str, resource: ResourceState, ws: LiveWorkspace) -> Iterator[Mismatch]:
    recorded = (("named", resource.name, ws.name), ("of account", resource.account, ws.account_id),
                ("made from template", resource.template, ws.template_id))
    for what, says, live_value in recorded:
        if says is not None and live_value is not None and says != live_value:
            yield Mismatch(address, f"workspace {quoted(resource.id)} is {what} {quoted(says)}",
                           f"the service says {quoted(live_value)}")


def _one_list(member: LiveWorkspace, homepage: LiveWorkspace) -> bool:
    """Whether two workspaces can show one group's list: they share an entry
    id, or one of them has no entry to tell by."""
    ours, theirs = member.entry_ids(), homepage.entry_ids()
    return not ours or not theirs or bool(ours & theirs)


def _unexplained(state: State) -> Iterator[Mismatch]:
    by_id: dict[str, list[str]] = defaultdict(list)
    for address, resource in state.resources.items():
        if resource.id and not is_unmanaged(address):
            # unmanaged.<id> is what rules put on a workspace no manifest names: the
            # address it gets once a manifest names it replaces it at the next apply.
            by_id[resource.id].append(address)
        if resource.access is not None:
            yield from _unexplained_access(address, resource.access)
    for bound_id, addresses in by_id.items():
        for address in sorted(addresses)[1:]:
            yield Mismatch(address, f"it is bound to {quoted(bound_id)}, which it also binds to "
                                    f"{quoted(sorted(addresses)[0], 120)}",
                           "one workspace or asset has one address, so this state cannot be explained")


def _unexplained_access(address: str, access: AccessRecord) -> Iterator[Mismatch]:
    recorded = {f"user:{k}" for k in access.users} | {f"domain:{k}" for k in access.domains}
    for what, facts in (("managed since", access.since), ("put there by", access.via or {})):
        for key, value in facts.items():
            if key not in recorded:
                yield Mismatch(address, f"{quoted(key)} was {what} {quoted(value)}",
                               "it records no such entry, so this reason cannot be explained")
    for key, value in (access.via or {}).items():
        if key in recorded and not _VIA.fullmatch(value):
            yield Mismatch(address, f"{quoted(key)} was put there by {quoted(value)}",
                           "that is not 'team KEY' or 'rule KEY', so it cannot be a reason")
    for key, value in access.since.items():
        if key in recorded and not _DATE.fullmatch(value):
            yield Mismatch(address, f"{quoted(key)} has been managed since {quoted(value)}",
                           "that is not a date (YYYY-MM-DD), so it cannot be a reason")


def refusal(found: list[Mismatch]) -> str:
    """The message that refuses a plan on a state that does not hold."""
    lines = "\n".join(f"  {m.line()}" for m in found)
    return (f"The state does not match the service, so nothing was planned "
            f"({len(found)} {'record does' if len(found) == 1 else 'records do'} not hold):\n{lines}\n"
            "A state is verified, never trusted: it may have been edited (a pull request can change a state file "
            "kept in the repository), or the workspace changed in the web app. 'reconciler state verify' lists "
            "every mismatch; 'reconciler state rm ADDRESS' then 'reconciler import ADDRESS ID' binds an address "
            "again after checking the workspace.")
