"""Which workspaces a rule (``rules:``) applies to.

A rule's ``match`` is read against the company's listing (id, name, account
and template of each workspace), which the plan reads once, whole, when the
manifests have rules: matching costs no call of its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatchcase

from reconciler.live import LiveWorkspace
from reconciler.manifest.desired import DesiredRule


def rule_matches(rule: DesiredRule, workspace: LiveWorkspace) -> bool:
    """True when ``rule`` applies to ``workspace``.

    Every criterion given must hold (AND); a list holds when any of its
    items does (OR).  ``names`` are shell-style patterns (``*``, ``?``,
    ``[abc]``) matched case-sensitively against the whole name, whatever the
    operating system (``fnmatchcase``); a workspace without a name matches
    no pattern.  ``except`` ids never match.  ``all: true`` is the
    criterion that holds everywhere.
    """
    match = rule.match
    if workspace.id in match.except_ids:
        return False
    if match.accounts is not None and workspace.account_id not in match.accounts:
        return False
    if match.templates is not None and workspace.template_id not in match.templates:
        return False
    if match.names is not None:
        name = workspace.name
        if name is None or not any(fnmatchcase(name, pattern) for pattern in match.names):
            return False
    # An empty match is refused when the manifests are read; checked again so
    # that a hand-built rule without criteria matches nothing rather than all.
    return match.all or match.accounts is not None or match.templates is not None or match.names is not None


def matching_rules(rules: Sequence[DesiredRule], workspace: LiveWorkspace) -> tuple[DesiredRule, ...]:
    """The rules that apply to ``workspace``, in manifest order."""
    return tuple(rule for rule in rules if rule_matches(rule, workspace))
