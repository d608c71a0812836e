"""Generated companies whose access lists are shared in ways the manifests do
not say, with rules and an access review over them (issue 38, item 7).

A company (the emulator's seed) holds: workspaces no manifest names, some of
them connected to each other by hand (one list); standalone workspaces of the
manifests with a list of their own, some connected by hand to a partner no
manifest names, and sometimes two of them connected to each other; groups
with a homepage and members connected by hand, some named by a manifest
(with a list or not, joining unnamed workspaces, creating from a template).
The manifests add rules over every kind of workspace (``ensure`` and
``revoke`` of users and domains, by name pattern or everywhere, with
``except`` ids that may name a workspace of a shared list, a successor or
not); the review, when there is one, decides entries the seed holds, so its
revokes land on shared lists, on entries the rules ensure, and on lists a rule
changes too.  What the tool does with each is the test's to judge, not the
generator's: it predicts nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

PEOPLE = ("ana@acme.com", "bo@acme.com", "cy@customer.com", "di@partner.io")
MANIFEST_PEOPLE = PEOPLE[:3]  # whom the manifests' lists name
DOMAINS = ("customer.com", "partner.io")
ROLES = ("owner", "editor", "collaborator", "viewer", "commenter")
# Whom a rule ensures: someone already on lists (a review may revoke them there), or a newcomer.
ENSURED = ("auditor@acme.com", "bo@acme.com", "cy@customer.com")
# Whom a rule revokes: mostly someone the seed's lists hold and no manifest's list grants (a rule revoking what a
# line grants is refused when the manifests are read, whatever the lists: few such companies say enough).
REVOKED = ("di@partner.io", "di@partner.io", "bo@acme.com")
NAME_PATTERNS = ("Loose*", "Solo*", "Partner*", "Home*", "Hand*", "*1")


@dataclass(frozen=True)
class Case:
    seed: dict[str, Any]
    manifest: dict[str, Any]
    # (workspace id, email or domain, keep or revoke): the review's decisions; none without a campaign.
    decisions: tuple[tuple[str, str, str], ...]
    campaign: bool
    overdue: bool  # planned after the due date, onDue: revoke (an item nobody decided is revoked)

    def twins(self) -> set[str]:
        """The standalone workspaces of the manifests that hold one list of the service with another one."""
        standalone = {ws["id"] for ws in self.manifest.get("workspaces", {}).values()}
        groups = [ws.get("group") for ws in self.seed["companies"]["acme"]["workspaces"] if ws["id"] in standalone]
        return {ws["id"] for ws in self.seed["companies"]["acme"]["workspaces"]
                if ws["id"] in standalone and ws.get("group") and groups.count(ws["group"]) > 1}


def entries(draw: st.DrawFn, people: tuple[str, ...] = PEOPLE) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """A list with an owner: users first (one of them owner), domains maybe."""
    users = draw(st.lists(st.sampled_from(people), min_size=1, max_size=3, unique=True))
    roles = [draw(st.sampled_from(ROLES)) for _ in users]
    roles[0] = "owner"
    domains = draw(st.lists(st.sampled_from(DOMAINS), max_size=2, unique=True))
    return ([{"email": u, "role": r} for u, r in zip(users, roles, strict=True)],
            [{"domain": d, "role": draw(st.sampled_from(ROLES[1:]))} for d in domains])


def space(wid: str, name: str, users: list[dict[str, str]], domains: list[dict[str, str]],
           group: str | None = None, published: bool = True) -> dict[str, Any]:
    return {"id": wid, "name": name, "account": "acc_1", "published": published, "users": users,
            "domains": domains, **({"group": group} if group else {})}


def _rule(draw: st.DrawFn, ids: list[str]) -> dict[str, Any]:
    match: dict[str, Any] = draw(st.sampled_from(
        [{"all": True}] + [{"names": [p]} for p in NAME_PATTERNS]))
    if ids and draw(st.integers(0, 3)) == 0:  # often a workspace of a shared list: a defeated except
        match["except"] = draw(st.lists(st.sampled_from(ids), min_size=1, max_size=2, unique=True))
    rule: dict[str, Any] = {"match": match}
    what = draw(st.sampled_from(("ensure users", "ensure domains", "revoke users", "revoke domains")))
    if what == "ensure users":
        rule["ensure"] = {"users": [{"email": draw(st.sampled_from(ENSURED)),
                                     "role": draw(st.sampled_from(ROLES[1:]))}]}
    elif what == "ensure domains":
        rule["ensure"] = {"domains": [{"domain": draw(st.sampled_from(DOMAINS)),
                                       "role": draw(st.sampled_from(ROLES[1:]))}]}
    elif what == "revoke users":
        rule["revoke"] = {"users": [draw(st.sampled_from(REVOKED))]}
        if draw(st.booleans()):
            rule["revoke"]["successor"] = "sec@acme.com"
    else:
        rule["revoke"] = {"domains": [draw(st.sampled_from(DOMAINS))]}
    return rule


def draw_group(draw: st.DrawFn, g: int, workspaces: list[dict[str, Any]], free: list[str],
               listed: tuple[str, ...] = PEOPLE) -> dict[str, Any] | None:
    """Group ``g`` in the service (its homepage and up to two workspaces connected by hand, added to
    ``workspaces``), and, half the time, in the manifests: maybe a list naming ``listed``, members joined from
    ``free`` (taken out of it), a creation from the template. None: a group no manifest names."""
    users, domains = entries(draw)
    home = f"ws_home{g}"
    workspaces.append(space(home, f"Home {g}", users, domains, group=f"g{g}"))
    for h in range(draw(st.integers(0, 2))):  # connected by hand; no manifest names them
        workspaces.append(space(f"ws_hand{g}{h}", f"Hand {g}{h}", users, domains, group=f"g{g}"))
    if not draw(st.booleans()):
        return None
    group_doc: dict[str, Any] = {"homepage": home}
    if draw(st.booleans()):
        users, domains = entries(draw, listed)
        group_doc["access"] = {"users": users, "domains": domains}
    members: dict[str, Any] = {}
    for wid in draw(st.lists(st.sampled_from(free), unique=True, max_size=2)) if free else []:
        free.remove(wid)
        members[wid.removeprefix("ws_")] = {"id": wid}
    for n in range(draw(st.integers(0, 1))):
        members[f"new{g}{n}"] = {"template": "tpl_1", "name": f"New {g}{n}"}
    if members:
        group_doc["workspaces"] = members
    return group_doc


@st.composite
def cases(draw: st.DrawFn) -> Case:
    workspaces: list[dict[str, Any]] = []
    loose = [f"ws_loose{i}" for i in range(draw(st.integers(0, 3)))]
    by_hand = len(loose) >= 2 and draw(st.booleans())  # two unnamed workspaces holding one list
    shared_users, shared_domains = entries(draw)
    for i, wid in enumerate(loose):
        if by_hand and i < 2:
            workspaces.append(space(wid, f"Loose {i}", shared_users, shared_domains, group="loose"))
        else:
            users, domains = entries(draw)
            workspaces.append(space(wid, f"Loose {i}", users, domains, published=draw(st.booleans())))
    free = loose[2:] if by_hand else list(loose)
    standalone: dict[str, Any] = {}
    solos = draw(st.integers(0, 2))
    twins = solos == 2 and draw(st.integers(0, 2)) == 0  # the two standalone lists are one list in the service
    for i in range(solos):
        users, domains = entries(draw)
        wid = f"ws_solo{i}"
        partner = draw(st.booleans())
        group = "solo0" if twins else f"solo{i}" if partner else None
        if twins and i == 1:
            users, domains = workspaces[-1]["users"], workspaces[-1]["domains"]
        workspaces.append(space(wid, f"Solo {i}", users, domains, group=group))
        if partner:
            workspaces.append(space(f"ws_partner{i}", f"Partner {i}", users, domains, group=group))
        listed, listed_domains = entries(draw, MANIFEST_PEOPLE)
        sides = draw(st.sampled_from(("users", "domains", "both")))
        access: dict[str, Any] = {}
        if sides != "domains" or not listed_domains:
            access["users"] = listed
        if sides != "users" and listed_domains:
            access["domains"] = listed_domains
        # An authoritative list replaces the whole list: only one that lists an owner can be.
        access["authoritative"] = "users" in access and draw(st.booleans())
        standalone[f"solo{i}"] = {"id": wid, "access": access}
    groups: dict[str, Any] = {}
    for g in range(draw(st.integers(1, 2))):
        group_doc = draw_group(draw, g, workspaces, free, MANIFEST_PEOPLE)
        if group_doc is not None:
            groups[f"group{g}"] = group_doc
    manifest: dict[str, Any] = {"version": 1, "groups": groups, **({"workspaces": standalone} if standalone else {})}
    shared = [w["id"] for w in workspaces if w.get("group")]
    rules = {f"rule{r}": _rule(draw, shared) for r in range(draw(st.sampled_from((1, 2, 0))))}
    if rules:
        manifest["rules"] = rules
    # Hypothesis draws the first choice (what it shrinks to) far more often than the others: a rule and a
    # review come first, or most companies would have neither.
    campaign = draw(st.sampled_from((True, True, False)))
    decisions: list[tuple[str, str, str]] = []
    if campaign:
        held = [(w["id"], e.get("email") or e["domain"]) for w in workspaces for e in (*w["users"], *w["domains"])]
        chosen = draw(st.lists(st.sampled_from(held), unique=True, min_size=1, max_size=5))
        decisions = [(wid, key, draw(st.sampled_from(("revoke", "revoke", "keep")))) for wid, key in chosen]
    seed = {"companies": {"acme": {
        "token": "dev-token-acme", "verified": True, "plan": "paid", "credits": 100,
        "users": [{"id": f"usr_{i}", "email": e} for i, e in enumerate(PEOPLE)],
        "accounts": [{"id": "acc_1", "name": "Customer Inc"}],
        "templates": [{"id": "tpl_1", "name": "Kickoff", "requiresDeal": False}],
        "workspaces": workspaces,
    }}}
    return Case(seed=seed, manifest=manifest, decisions=tuple(decisions), campaign=campaign,
                overdue=campaign and draw(st.integers(0, 5)) == 0)
