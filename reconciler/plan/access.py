"""Diff one access list: desired vs live, with the state's ownership record.

deepdiff compares the two ``email → role`` (and ``domain → role``) maps; its
tree view hands back each added, removed and changed key with both values,
which is exactly an entry change.
"""

from __future__ import annotations

from collections.abc import Mapping

from deepdiff import DeepDiff

from reconciler.live import LiveEntry
from reconciler.plan.model import Action, EntryChange, EntryKind

_ACTIONS = {
    "dictionary_item_added": Action.CREATE,
    "dictionary_item_removed": Action.DELETE,
    "values_changed": Action.UPDATE,
}
_ORDER = {Action.DELETE: 0, Action.UPDATE: 1, Action.CREATE: 2}


def target_roles(
    live: Mapping[str, str],
    desired: Mapping[str, str],
    owned: Mapping[str, str],
    *,
    authoritative: bool,
) -> dict[str, str]:
    """The whole list as it should be once applied.

    Authoritative: exactly ``desired``.  Otherwise live entries stay, except
    those the manifest listed before (the state's record, whoever first
    granted them) and no longer lists: unlisting an entry revokes it, as
    removing a Terraform ``*_iam_member`` does.  Entries it never listed are
    never touched.
    """
    if authoritative:
        return dict(desired)
    kept = {k: r for k, r in live.items() if not (k in owned and k not in desired)}
    return {**kept, **desired}


def diff_entries(
    kind: EntryKind,
    live: Mapping[str, LiveEntry],
    target: Mapping[str, str],
    locations: Mapping[str, str],
    since: Mapping[str, str] | None = None,
) -> list[EntryChange]:
    """The entry changes that turn ``live`` into ``target``, removals first."""
    before = {k: e.role for k, e in live.items()}
    # threshold_to_diff_deeper=0: by default deepdiff reports two maps with
    # few keys in common as one root-level replacement; we always want
    # per-entry changes, however different the lists are.
    diff = DeepDiff(before, dict(target), view="tree", threshold_to_diff_deeper=0)
    changes: list[EntryChange] = []
    for report, action in _ACTIONS.items():
        for level in diff.get(report, []):
            key = str(level.path(output_format="list")[0])
            entry = live.get(key)
            changes.append(
                EntryChange(
                    kind=kind,
                    key=key,
                    action=action,
                    before=entry.role if entry else None,
                    after=target.get(key),
                    entry_id=entry.id if entry else None,
                    location=locations.get(key),
                    managed_since=(since or {}).get(f"{kind}:{key}") if action is Action.DELETE else None,
                    reason=_reason(action, kind, entry, target.get(key)),
                )
            )
    return sorted(changes, key=lambda c: (_ORDER[c.action], c.kind, c.key))


def _reason(action: Action, kind: EntryKind, entry: LiveEntry | None, after: str | None) -> str:
    if action is Action.CREATE:
        return f"listed in the manifest as {after}, has no access"
    if action is Action.DELETE:
        return f"not in the manifest: loses {entry.role if entry else ''} access"
    return f"role is {entry.role if entry else '?'} in the service, {after} in the manifest"
