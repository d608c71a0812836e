"""The YAML ``review start`` writes, written by hand so the reviewer's page
(``page.js``) can write the very same bytes.

A value is written plain when YAML reads it back as the same text, else
double-quoted as JSON writes it (JSON's escapes are YAML's), with the few
characters YAML may not hold raw escaped too.  No YAML library writes this:
the page must reproduce it byte for byte in the browser, so the rule must be
small enough to write twice (``scalar`` here, ``scalar`` in page.js).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import date

from reconciler.manifest.desired import ReviewItem

# Text YAML 1.1 reads as text when plain: starts with a letter, holds no
# character that means something to YAML, and is not a word YAML reads as
# true, false or null.
_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_@.+\-]*\Z")
_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null"}
# Characters YAML does not allow raw in a document (PyYAML's reader refuses them).
_NOT_PRINTABLE = re.compile("[\x7f-\x84\x86-\x9f\ufffe\uffff]")


def scalar(value: str | None) -> str:
    """One value as YAML text."""
    if value is None:
        return "null"
    if _PLAIN.match(value) and value.lower() not in _WORDS:
        return value
    return _NOT_PRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(value, ensure_ascii=False))


def decisions_yaml(campaign: str, due: date, reviewer: str, items: Sequence[ReviewItem]) -> str:
    """A reviewer's file: a header comment, ``reviewer:`` and ``items:``."""
    lines = [f"# Access review {campaign}, due {due.isoformat()}: set each decision to keep or revoke "
             "(a reason is optional).",
             f"reviewer: {scalar(reviewer)}"]
    if not items:
        lines.append("items: []")
        return "\n".join(lines) + "\n"
    lines.append("items:")
    # Ids, roles, kinds and why lines repeat across items: each distinct value is written once
    # (at 10,000 workspaces, 2,000,000 values and far fewer distinct ones).
    memo: dict[str | None, str] = {}

    def value(text: str | None) -> str:
        found = memo.get(text)
        if found is None:
            found = memo[text] = scalar(text)
        return found

    lines += [f"  - workspace: {value(i.workspace)}\n    name: {value(i.name)}\n    kind: {value(i.kind)}\n"
              f"    key: {value(i.key)}\n    role: {value(i.role)}\n    why: {value(i.why)}\n"
              f"    decision: {value(i.decision)}\n    reason: {value(i.reason)}"
              + ("\n    removeFromTeam: true" if i.remove_from_team else "") for i in items]
    return "\n".join(lines) + "\n"


def campaign_yaml(name: str, *, started: date, due: date, on_due: str, external: bool, reviewers: str,
                  fallback: str | None, assignment: dict[str, str] | None = None) -> str:
    """The campaign file ``review start`` writes; ``assignment``: each reviewer's file name and the digest of
    the items it was given (``reconciler.manifest.reviews.items_digest``)."""
    chosen = reviewers if reviewers == "owners" else f"{{team: {scalar(reviewers.partition(':')[2])}}}"
    lines = ["# An access review campaign (reconciler review start); each reviewer decides in their file beside it.",
             f"campaign: {name}", f"started: {started.isoformat()}", f"due: {due.isoformat()}", f"onDue: {on_due}",
             "scope:", f"  entries: {'external' if external else 'all'}", f"reviewers: {chosen}"]
    if fallback is not None:
        lines.append(f"fallback: {scalar(fallback)}")
    if assignment:
        lines.append("# Which items review start gave each reviewer's file (sha256): only decisions may change.")
        lines.append("assignment:")
        lines += [f"  {scalar(file_name)}: {digest}" for file_name, digest in sorted(assignment.items())]
    return "\n".join(lines) + "\n"
