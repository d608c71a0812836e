"""Which workspaces a rule (``rules:``) applies to.

A rule's ``match`` is read against the company's listing (id, name, account
and template of each workspace), which the plan reads once, whole, when the
manifests have rules: matching costs no call of its own.  A workspace the
plan creates into a group (``CreatedWorkspace``) is matched by the name,
account and template it will have, as the next plan will match it once it
exists: it holds the group's list from its creation on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase

from reconciler.live import LiveWorkspace
from reconciler.manifest.desired import DesiredRule


@dataclass(frozen=True)
class CreatedWorkspace(LiveWorkspace):
    """A workspace this plan creates into a group, as rules see it: no id yet (``id`` is empty), the name,
    template and account the creation gives it, and the manifest's ``address`` and ``location`` to name it by."""

    address: str = ""
    location: str = ""


def space_name(workspace: LiveWorkspace) -> str:
    """How a refusal names a workspace: its id, or the address of one the plan creates."""
    return workspace.address if isinstance(workspace, CreatedWorkspace) else workspace.id


def created_note(workspaces: Sequence[LiveWorkspace]) -> str:
    """`` group.g.workspace.new (m.yaml:6) is created by this plan into the group, so will hold the list
    too.`` for those of ``workspaces`` the plan creates; empty when none."""
    created = [w for w in workspaces if isinstance(w, CreatedWorkspace)]
    if not created:
        return ""
    named = ", ".join(f"{w.address} ({w.location})" for w in created)
    verb = "is" if len(created) == 1 else "are"
    return f" {named} {verb} created by this plan into the group, so will hold the list too."


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
