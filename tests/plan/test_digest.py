"""The plan digest: the sha256 of the canonical JSON of what a review approves.

It is computed a field and a list item at a time (``canonical_chunks``),
never as one text or one copy of the plan (issue 40); these tests hold it to
the documented canonical form, built here the plain way, and pin the digest
of fixed plans, so that no rewrite can change what an approval approves.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconciler.clock import VirtualClock
from reconciler.emulator import Emulator
from reconciler.plan import Plan
from reconciler.plan.digest import APPROVED_FIELDS, DISPLAY_ONLY, canonical_chunks
from reconciler.plan.findings import ManagedAccess
from reconciler.plan.model import AccessChange, AccessViews, AssetChange, Effect
from reconciler.vocabulary import ROLES
from tests.e2e.conftest import ROOT, EmulatorRig

# The digests of the examples' first plans on their own seeds, computed by the one-shot digest before it was
# streamed (commit bc50773) and by the streamed one alike. A change here changes what every saved approval
# approves: it must be deliberate, and said in the commit. (The onboarding plan's was pinned when its assets'
# absolute paths left the approval: it is the same in every directory now.)
PINNED = {
    "company": "87450d655a7f13ff0b7d30777ee9a1bb36b4d32a1b0322e7e74ccdf615e48cd0",
    "quickstart": "45bc746e8d5321fdc504bcf9f85156fe25b73fd647b16bf9c1d74997a1d52ef3",
    "onboarding": "7905bd1c6df06fa73a46d46f2429013a7b41f50570889b168d8946447417686f",
}
EXAMPLES = sorted(PINNED)


def _plan_of(example: str, tmp_path: Path) -> Plan:
    root = tmp_path / example
    shutil.copytree(ROOT / "examples" / example, root)
    clock = VirtualClock()
    return EmulatorRig(Emulator.from_seed_file(root / "seed.yaml", clock=clock), clock, root).plan()


def _without(value: Any, keys: frozenset[str]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def documented_canonical_form(plan: Plan) -> bytes:
    """As the plan's JSON schema says it: the approved fields of the plan's JSON, without location, reason and file
    at any depth, keys sorted, no spaces, UTF-8."""
    document = json.loads(plan.model_dump_json())
    approved = {k: _without(v, DISPLAY_ONLY) for k, v in document.items() if k in APPROVED_FIELDS}
    return json.dumps(approved, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_digest_is_the_sha256_of_the_documented_canonical_form(example: str, tmp_path: Path) -> None:
    plan = _plan_of(example, tmp_path)
    assert plan.plan_digest == hashlib.sha256(documented_canonical_form(plan)).hexdigest()


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_streamed_pieces_are_the_canonical_text_exactly(example: str, tmp_path: Path) -> None:
    plan = _plan_of(example, tmp_path)
    assert "".join(canonical_chunks(plan)).encode("utf-8") == documented_canonical_form(plan)


@pytest.mark.parametrize("example", sorted(PINNED))
def test_the_digest_of_each_example_plan_is_pinned(example: str, tmp_path: Path) -> None:
    assert _plan_of(example, tmp_path).plan_digest == PINNED[example]


def test_no_piece_holds_more_than_one_change(tmp_path: Path) -> None:
    """The point of streaming: the largest piece is one change, never the plan."""
    plan = _plan_of("onboarding", tmp_path)
    largest = max(len(c) for c in canonical_chunks(plan))
    assert largest <= max(len(json.dumps(c.model_dump(mode="json"))) for c in plan.changes)


def test_a_change_to_an_approved_field_changes_the_digest_and_a_display_field_does_not(tmp_path: Path) -> None:
    plan = _plan_of("onboarding", tmp_path)
    access = next(c for c in plan.changes if isinstance(c, AccessChange) and c.entries)
    entry = access.entries[0]

    def with_entry(**update: Any) -> Plan:
        changed = access.model_copy(update={"entries": (entry.model_copy(update=update), *access.entries[1:])})
        return plan.model_copy(update={"changes": tuple(changed if c is access else c for c in plan.changes)})

    assert with_entry(after="owner" if entry.after != "owner" else "viewer").plan_digest != plan.plan_digest
    assert with_entry(reason="said otherwise").plan_digest == plan.plan_digest
    assert plan.model_copy(update={"reassert": not plan.reassert}).plan_digest != plan.plan_digest
    assert plan.model_copy(update={"warnings": ("a new warning",)}).plan_digest == plan.plan_digest


def test_an_assets_bytes_and_path_in_the_manifests_are_approved_and_its_path_on_this_machine_is_not(
        tmp_path: Path) -> None:
    plan = _plan_of("onboarding", tmp_path)
    asset = next(c for c in plan.changes if isinstance(c, AssetChange) and c.file is not None)

    def with_asset(**update: Any) -> Plan:
        changed = asset.model_copy(update=update)
        return plan.model_copy(update={"changes": tuple(changed if c is asset else c for c in plan.changes)})

    assert with_asset(digest="0" * 64).plan_digest != plan.plan_digest
    assert with_asset(file_label="assets/other.pdf").plan_digest != plan.plan_digest
    assert with_asset(file="/elsewhere/assets/welcome.pdf").plan_digest == plan.plan_digest


def test_display_fields_are_left_out_at_every_depth_as_the_documented_form_says() -> None:
    """The digest leaves display fields out as pydantic writes (issue 40), from the models' declared types:
    a change's and an entry's, a source's in ``outranked``, and a data key of that name in a dict."""
    from reconciler.plan.model import AccessSnapshot, AssetChange, EntryChange, EntrySource

    source = EntrySource(kind="team", location="m.yaml:3", team="cs")
    entry = EntryChange(kind="user", key="bo@acme.com", action="create", after="viewer",  # type: ignore[arg-type]
                        location="m.yaml:9", reason="listed", source=source, outranked=(source,))
    access = AccessChange(address="workspace.a", location="m.yaml:1", reason="why", workspace_id="ws_1",
                          strategy="replace", entries=(entry,), before=AccessSnapshot(),
                          after=AccessSnapshot(users={"reason": "viewer", "bo@acme.com": "viewer"}))  # type: ignore[dict-item]
    asset = AssetChange(address="asset.a", action="update", asset_type="link",  # type: ignore[arg-type]
                        before={"location": "old", "name": "deck"}, metadata={"reason": 1.5, "width": 2.0})
    plan = Plan(changes=(access, asset))
    canonical = "".join(canonical_chunks(plan)).encode("utf-8")
    assert canonical == documented_canonical_form(plan)
    assert b"m.yaml" not in canonical and b'"reason"' not in canonical and b'"location"' not in canonical


def test_a_field_type_the_digest_cannot_read_is_refused_not_guessed() -> None:
    from reconciler.models import Frozen
    from reconciler.plan.digest import display_exclusion

    class Opaque(Frozen):
        value: object

    with pytest.raises(TypeError, match="display-only"):
        display_exclusion(Opaque)


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)  # any text but lone surrogates


@given(st.dictionaries(_TEXT, st.sampled_from(ROLES), max_size=4), st.dictionaries(_TEXT, st.sampled_from(ROLES)),
       st.dictionaries(_TEXT, st.sampled_from(ROLES), max_size=3), st.none() | _TEXT, st.none() | _TEXT,
       st.none() | _TEXT, st.lists(_TEXT, max_size=3), st.booleans())
def test_an_effect_writes_its_canonical_json_exactly_as_the_documented_form(
        users: dict[str, str], other_users: dict[str, str], domains: dict[str, str], workspace: str | None,
        name: str | None, creates: str | None, because: list[str], shared: bool) -> None:
    """The effects write their own canonical JSON (issue 40: half the digest's CPU); for any text (quotes,
    backslashes, control characters, non-ASCII), null or not, views shared or not, it is the generic one."""
    views = AccessViews()
    before = views.of(users, domains)  # type: ignore[arg-type]
    after = (views if shared else AccessViews()).of({**users, **other_users}, domains)  # type: ignore[arg-type]
    effect = Effect(workspace=workspace, name=name, creates=creates, before=before, after=after,
                    because=tuple(because))
    generic = json.dumps(effect.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    known: dict[int, str] = {}
    assert effect.canonical_json(known) == generic
    assert effect.canonical_json(known) == generic  # and again, from what it wrote once


# A key of a record's dicts: any text, or the name of a display-only field (a data key of that name is left out
# of the canonical form like the field: a state file's record is read back from disk, whatever it holds).
_KEY = _TEXT | st.sampled_from(sorted(DISPLAY_ONLY))


@given(st.dictionaries(_KEY, st.sampled_from(ROLES), max_size=4), st.dictionaries(_KEY, st.sampled_from(ROLES)),
       st.dictionaries(_KEY, _TEXT, max_size=3), _TEXT, _TEXT)
def test_a_managed_record_writes_its_canonical_json_exactly_as_the_documented_form(
        users: dict[str, str], domains: dict[str, str], via: dict[str, str], address: str,
        workspace_id: str) -> None:
    """What a plan records per list writes its own canonical JSON too (issue 40): for any text, the documented
    form, display-only keys left out."""
    managed = ManagedAccess(address=address, workspace_id=workspace_id, users=users, domains=domains, via=via)
    documented = json.dumps(_without(managed.model_dump(mode="json"), DISPLAY_ONLY), sort_keys=True,
                            separators=(",", ":"), ensure_ascii=False)
    assert managed.canonical_json({}) == documented


def test_a_managed_record_leaves_out_a_key_named_like_a_display_field() -> None:
    managed = ManagedAccess(address="workspace.a", workspace_id="ws_1", users={"reason": "viewer", "a@b.co": "owner"},
                            via={"location": "rule x"})
    assert managed.canonical_json({}) == ('{"address":"workspace.a","domains":{},"users":{"a@b.co":"owner"},'
                                          '"via":{},"workspace_id":"ws_1"}')
