"""Access-list rules: validation, replace semantics, the owner rule.

A list given in a request replaces the whole list.  Entries whose email or
domain stays keep their id and ``createdAt`` (only their role and
``updatedAt`` change), so a client holding an entry id can still PATCH it
after an unrelated replace.  After any change at least one user or domain
must be ``owner``; a change that breaks the rule is refused before anything
is modified.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reconciler.emulator import validation
from reconciler.emulator.errors import bad_request
from reconciler.emulator.entities import AccessEntry, AccessList, User
from reconciler.emulator.store import Company

# (field name in the body, key inside one item, id prefix)
USERS = ("workspaceUsers", "email", "wu")
DOMAINS = ("workspaceDomains", "domain", "wd")


@dataclass(frozen=True)
class WantedEntry:
    key: str
    role: str


def parse_entries(body: dict[str, Any], which: tuple[str, str, str]) -> list[WantedEntry] | None:
    """The validated list ``body[which]`` (None when absent), else 400.

    Emails and domains are lower-cased; the same one twice is a 400, since
    the service could only guess which role was meant.
    """
    field, key, _ = which
    if field not in body:
        return None
    raw = body[field]
    if not isinstance(raw, list):
        raise bad_request(f"{field} must be an array.")
    check = validation.email if key == "email" else validation.hostname
    seen: set[str] = set()
    out: list[WantedEntry] = []
    for i, item in enumerate(raw):
        where = f"{field}[{i}]"
        item = validation.require_object(item, where)
        validation.reject_unknown_keys(item, {key, "role"}, f"{where}")
        if key not in item:
            raise bad_request(f"{where}.{key} is required.")
        if "role" not in item:
            raise bad_request(f"{where}.role is required.")
        value = check(item[key], f"{where}.{key}")
        if value in seen:
            raise bad_request(f"{where}: {value} appears more than once in {field}.")
        seen.add(value)
        out.append(WantedEntry(value, validation.role(item["role"], where)))
    return out


def require_owner(users: list[Any], domains: list[Any]) -> None:
    """400 unless some user or domain entry has role ``owner``."""
    if not any(e.role == "owner" for e in list(users) + list(domains)):
        raise bad_request("At least one workspace user or domain must have the role owner.")


def replace_entries(current: list[AccessEntry], wanted: list[WantedEntry], *, prefix: str,
                    new_id: Callable[[str], str], now: str) -> list[AccessEntry]:
    """The new list: kept keys keep id and createdAt; new keys get fresh ids."""
    by_key = {e.key: e for e in current}
    out: list[AccessEntry] = []
    for want in wanted:
        old = by_key.get(want.key)
        if old is None:
            out.append(AccessEntry(new_id(prefix), want.key, want.role, now, now))
        elif old.role != want.role:
            out.append(AccessEntry(old.id, old.key, want.role, old.created_at, now))
        else:
            out.append(old)
    return out


def apply_replace(access: AccessList, users: list[WantedEntry] | None, domains: list[WantedEntry] | None, *,
                  new_id: Callable[[str], str], now: str) -> list[str]:
    """Replace the given lists of ``access`` after checking the owner rule;
    nothing changes when it fails.  Returns the emails newly given access."""
    new_users = access.users if users is None else replace_entries(access.users, users, prefix="wu", new_id=new_id, now=now)
    new_domains = (access.domains if domains is None
                   else replace_entries(access.domains, domains, prefix="wd", new_id=new_id, now=now))
    require_owner(new_users, new_domains)
    before = {e.key for e in access.users}
    access.users[:] = new_users
    access.domains[:] = new_domains
    return [e.key for e in new_users if e.key not in before]


def replace_attached(company: Company, access: AccessList, users: list[WantedEntry] | None,
                     domains: list[WantedEntry] | None, *, new_id: Callable[[str], str], now: str) -> list[str]:
    """``apply_replace`` on a list the company's workspaces hold, keeping the
    company's index of entries in step."""
    old_users, old_domains = list(access.users), list(access.domains)
    added = apply_replace(access, users, domains, new_id=new_id, now=now)
    company.access_replaced(access, old_users, old_domains)
    return added


def ensure_users(company: Company, emails: list[str], now: str, new_id: Callable[[str], str]) -> None:
    """Every email on an access list is a user of the company (the
    WorkspaceUser carries a User with an id), created on first sight."""
    for email in emails:
        if company.user_by_email(email) is None:
            company.users.append(User(new_id("usr"), email, None, None, None, now, now))


def find_entry(company: Company, entry_id: str, *, domains: bool) -> tuple[AccessList, AccessEntry] | None:
    """The list and entry with ``entry_id`` among the company's lists."""
    return company.access_entry(entry_id, domains=domains)


def change_role(access: AccessList, entry: AccessEntry, role: str, now: str) -> None:
    """Set ``entry``'s role unless that leaves the list without an owner."""
    if entry.role == role:
        return
    old = entry.role
    entry.role = role
    if not access.has_owner():
        entry.role = old
        raise bad_request("This change would leave the workspace without an owner.")
    entry.updated_at = now
