"""Warnings about manifests that are valid but probably not what was meant.

``validate`` prints them, ``validate --strict`` fails on them, and every
plan repeats them.  Each names its ``file:line``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

from reconciler.manifest.desired import AccessList, Desired, DomainAccess, UserAccess
from reconciler.vocabulary import rank

# Mail providers anyone can sign up with: a domain grant to one of them is a
# grant to the whole internet.
FREE_MAIL_DOMAINS = frozenset({
    "gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "live.com", "msn.com", "yahoo.com",
    "icloud.com", "me.com", "aol.com", "proton.me", "protonmail.com", "gmx.com", "gmx.de", "mail.com",
    "yandex.ru", "mail.ru", "zoho.com",
})
# Where the provider ignores dots in the local part: j.doe@ and jdoe@ are one mailbox.
DOTLESS_DOMAINS = frozenset({"gmail.com", "googlemail.com"})


def lint(desired: Desired, today: date) -> list[str]:
    notes: list[str] = []
    # The first spelling of each mailbox; its location is formatted only when a note quotes it
    # (a manifest of 10,000 lists has 250,000 users and nearly never such a note).
    mailboxes: dict[str, UserAccess] = {}
    for address, _, access in desired.access_lists():
        notes += _list_notes(address, access, today)
        for user in access.users:
            first = mailboxes.setdefault(_mailbox(user.email), user)
            if first.email != user.email:
                notes.append(f"{user.location}: {address}: user {user.email} is the same mailbox as {first.email} "
                             f"at {first.location} (the provider ignores dots); use one spelling")
    return notes


def _list_notes(address: str, access: AccessList, today: date) -> Iterator[str]:
    domains = {d.domain: d.role for d in access.domains}
    for user in access.users:
        domain = user.email.rpartition("@")[2]
        if domain in domains and rank(domains[domain]) >= rank(user.role):
            yield (f"{user.location}: {address}: user {user.email} ({user.role}) already has {domains[domain]} "
                   f"through the domain {domain} on the same list; the user entry adds nothing")
    for domain_entry in access.domains:
        if domain_entry.domain in FREE_MAIL_DOMAINS:
            yield (f"{domain_entry.location}: {address}: domain {domain_entry.domain} is a free-mail provider: the grant reaches "
                   f"anyone with an address there; list the people instead")
    if not any(u.role == "owner" for u in access.users) and any(d.role == "owner" for d in access.domains):
        yield (f"{access.location}: {address}: the only owners are domains; name at least one person as owner, "
               "so someone answers for the workspace")
    entries: tuple[UserAccess | DomainAccess, ...] = (*access.users, *access.domains)
    for entry in entries:
        if entry.expires is not None and entry.expires <= today:
            key = entry.email if isinstance(entry, UserAccess) else entry.domain
            yield (f"{entry.location}: {address}: the grant to {key} expired on {entry.expires.isoformat()}; "
                   "the next apply removes it (delete the entry from the manifest)")


def _mailbox(email: str) -> str:
    local, _, domain = email.rpartition("@")
    if domain in DOTLESS_DOMAINS:
        return f"{local.replace('.', '')}@gmail.com"
    return email
