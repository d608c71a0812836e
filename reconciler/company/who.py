"""``reconciler who EMAIL|DOMAIN``: where one person or domain has access now.

A view of the company read (``CompanyAccess``): the rows of the person, and
the rows of their email's domain (everyone of that domain has its role, so
the person does too, said so).  For a domain: the domain's own rows and the
rows of every user whose email is of that domain.  Each row with its role
and why (the manifest line, the team, the rule, or none).
"""

from __future__ import annotations

import json
from typing import Literal

from reconciler.company.model import COMPANY_FORMAT_VERSION, AccessRow, CompanyAccess, EntryKind
from reconciler.errors import ConfigError
from reconciler.manifest.values import email_problem, hostname_problem
from reconciler.models import Frozen
from reconciler.text import plural, printable, quoted


class WhoAccess(AccessRow):
    """A row of the answer; ``via`` says how the subject reaches it: ``self``
    (the subject's own entry), ``domain`` (a user reached through a domain
    entry of their email's domain), ``member`` (a user of the asked domain)."""

    via: Literal["self", "domain", "member"] = "self"


class WhoLookalike(Frozen):
    """An address of the company that is probably the same person as the subject."""

    key: str
    why: str
    workspaces: tuple[str, ...]


class WhoAnswer(Frozen):
    """Who (``subject``, of ``kind``) has access where, in the company read."""

    format_version: int = COMPANY_FORMAT_VERSION
    subject: str
    kind: EntryKind
    workspaces_read: int
    calls: int
    access: tuple[WhoAccess, ...] = ()
    # Of the workspaces of ``access``: how many a manifest names, how many a
    # rule reaches only (company.model.ManagedBy); the rest neither.
    named: int = 0
    rules_only: int = 0
    # Other addresses of the company that are probably the same person (a +tag, dots,
    # look-alike or invisible characters, a subdomain): not the subject's access, named for review.
    probably_same_person: tuple[WhoLookalike, ...] = ()

    @property
    def workspace_count(self) -> int:
        return len({a.workspace_id for a in self.access})


def parse_subject(value: str) -> tuple[EntryKind, str]:
    """An email (holds ``@``) or a domain, lower-cased; ``ConfigError`` when it is neither."""
    text = value.strip()
    if "@" in text:
        problem = email_problem(text)
        kind: EntryKind = "user"
    else:
        text = text.rstrip(".")
        problem = hostname_problem(text)
        kind = "domain"
    if problem is not None:
        what = "an email address" if kind == "user" else "a domain"
        raise ConfigError(f"who {quoted(value)}: not {what}{': ' + problem if problem else ''}. "
                          "Give an email (jane@acme.com) or a domain (acme.com).")
    return kind, text.lower()


def who(company: CompanyAccess, kind: EntryKind, key: str) -> WhoAnswer:
    """Every row of the subject, in the company's order."""
    found: list[WhoAccess] = []
    domain = key.rpartition("@")[2]
    for row in company.rows:
        via: Literal["self", "domain", "member"] | None = None
        if row.kind == kind and row.key == key:
            via = "self"
        elif kind == "user" and row.kind == "domain" and row.key == domain:
            via = "domain"
        elif kind == "domain" and row.kind == "user" and row.key.rpartition("@")[2] == key:
            via = "member"
        if via is not None:
            found.append(WhoAccess(**row.model_dump(), via=via))
    managed = {w.id: w.managed for w in company.workspaces}
    spaces = {a.workspace_id for a in found}
    return WhoAnswer(subject=key, kind=kind, workspaces_read=company.total, calls=company.calls,
                     access=tuple(found), named=sum(1 for w in spaces if managed.get(w) == "manifest"),
                     rules_only=sum(1 for w in spaces if managed.get(w) == "rules"),
                     probably_same_person=_lookalikes(company, key) if kind == "user" else ())


def _lookalikes(company: CompanyAccess, key: str) -> tuple[WhoLookalike, ...]:
    from reconciler.plan.lookalikes import lookalikes

    where: dict[str, list[str]] = {}
    for row in company.rows:
        if row.kind == "user":
            where.setdefault(row.key, []).append(row.workspace_id)
    return tuple(WhoLookalike(key=alike.key, why=alike.why, workspaces=tuple(dict.fromkeys(where[alike.key])))
                 for alike in lookalikes(key, where))


def render_who(answer: WhoAnswer, *, fmt: str = "text") -> str:
    """The answer as text (every value escaped for a terminal) or JSON."""
    if fmt == "json":
        return json.dumps(answer.model_dump(mode="json"), indent=2) + "\n"
    read = f"{plural(answer.workspaces_read, 'workspace')} read in {plural(answer.calls, 'call')}"
    subject = printable(answer.subject)
    if not answer.access:
        lines = [f"{subject} has access to no workspace ({read})."]
    else:
        n = answer.workspace_count
        split = (f"{answer.named:,} named by a manifest, {answer.rules_only:,} reached only by rules, "
                 f"{n - answer.named - answer.rules_only:,} by neither")
        lines = [f"{subject} has access to {plural(n, 'workspace')}: {split} ({read}):"]
        lines += [f"  {_line(answer, row)}" for row in answer.access]
    return "\n".join([*lines, *_lookalike_lines(answer)]) + "\n"


def _lookalike_lines(answer: WhoAnswer) -> list[str]:
    from reconciler.plan.lookalikes import spelled

    if not answer.probably_same_person:
        return []
    return [f"Probably the same person, with access of their own ({plural(len(answer.probably_same_person), 'address', 'addresses')}):",
            *(printable(f"  {spelled(p.key)} ({p.why}): {', '.join(p.workspaces)}") for p in answer.probably_same_person)]


def _line(answer: WhoAnswer, row: WhoAccess) -> str:
    if row.via == "domain":
        holder = f"{row.role} through domain {row.key}"
    elif row.via == "member":
        holder = f"user {row.key} {row.role}"
    else:
        holder = row.role if answer.kind == "user" else f"domain {row.role}"
    expires = f", until {row.expires.isoformat()}" if row.expires is not None else ""
    return printable(f"{workspace_label(row)}: {holder}{expires}; {row.why.text()}")


def workspace_label(row: AccessRow) -> str:
    """``ws_1 "Name" (account A, group of ws_0)``: how a row's workspace is
    named to people (unescaped: the renderer escapes it)."""
    label = f'{row.workspace_id} "{row.workspace_name}"' if row.workspace_name else row.workspace_id
    about = []
    if row.account_name or row.account_id:
        about.append(f"account {row.account_name or row.account_id}")
    if row.group_homepage and row.group_homepage != row.workspace_id:
        about.append(f"{'probably ' if row.probable_member else ''}in the group of {row.group_homepage}")
    return f"{label} ({', '.join(about)})" if about else label
