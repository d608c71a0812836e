"""Campaign and decision files are manifests: loaded, validated (file:line), in the digest, in schemas/."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.errors import ManifestError
from reconciler.manifest import load_desired
from reconciler.manifest.reviews import review_json_schema_text

REPO = Path(__file__).resolve().parents[2]

MANIFEST = """version: 1
workspaces:
  portal:
    id: ws_1
    access:
      users:
        - {email: owner@acme.com, role: owner}
"""

CAMPAIGN = """campaign: q4
started: 2026-10-01
due: 2026-10-31
onDue: revoke
"""

DECISIONS = """reviewer: jane@acme.com
items:
  - workspace: ws_1
    name: Portal
    kind: user
    key: bob@ext.com
    role: editor
    why: "not managed: granted in the web app"
    decision: {decision}
    reason: null
"""


def write(root: Path, decision: str = "null", campaign: str = CAMPAIGN) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "m.yaml").write_text(MANIFEST)
    folder = root / "reviews" / "q4"
    folder.mkdir(parents=True)
    (folder / "campaign.yaml").write_text(campaign)
    (folder / "jane@acme.com.yaml").write_text(DECISIONS.format(decision=decision))
    return root


def problems(root: Path) -> list[str]:
    with pytest.raises(ManifestError) as caught:
        load_desired(root)
    return caught.value.problems


def test_a_campaign_and_its_decisions_load_with_the_decision_line(tmp_path: Path) -> None:
    desired = load_desired(write(tmp_path, "revoke"))
    (campaign,) = desired.reviews
    assert (campaign.name, str(campaign.due), campaign.on_due, campaign.reviewers) == ("q4", "2026-10-31", "revoke",
                                                                                      "owners")
    (item,) = campaign.items
    assert (item.reviewer, item.workspace, item.kind, item.key, item.role, item.decision) == (
        "jane@acme.com", "ws_1", "user", "bob@ext.com", "editor", "revoke")
    assert str(item.location) == f"{tmp_path}/reviews/q4/jane@acme.com.yaml:9"


def test_a_typod_decision_value_is_a_file_line_error(tmp_path: Path) -> None:
    assert problems(write(tmp_path, "revok")) == [
        f"{tmp_path}/reviews/q4/jane@acme.com.yaml:9: items[0].decision: 'revok' is not allowed; "
        "use one of 'keep' or 'revoke'"]


def test_an_unknown_campaign_key_is_a_file_line_error(tmp_path: Path) -> None:
    found = problems(write(tmp_path, campaign=CAMPAIGN + "ondue: keep\n"))
    assert found == [f"{tmp_path}/reviews/q4/campaign.yaml:5: unknown key 'ondue'; allowed keys: campaign, started, "
                     "due, onDue, scope, reviewers, fallback, closed, closedUndecided, assignment, reassignments, closedDigest"]


def test_a_campaign_named_unlike_its_directory_is_refused(tmp_path: Path) -> None:
    found = problems(write(tmp_path, campaign=CAMPAIGN.replace("campaign: q4", "campaign: q3")))
    assert found == [f"{tmp_path}/reviews/q4/campaign.yaml:1: campaign: 'q3' is not the name of its directory "
                     "'q4'; keep them the same"]


def test_a_reviewer_file_named_after_another_email_is_refused(tmp_path: Path) -> None:
    write(tmp_path)
    (tmp_path / "reviews" / "q4" / "jane@acme.com.yaml").rename(tmp_path / "reviews" / "q4" / "joe@acme.com.yaml")
    assert problems(tmp_path) == [
        f"{tmp_path}/reviews/q4/joe@acme.com.yaml:1: reviewer: 'jane@acme.com' is not the file's name "
        "'joe@acme.com.yaml'; each reviewer's file is named after their email"]


def test_a_decision_changes_the_manifest_digest(tmp_path: Path) -> None:
    undecided = load_desired(write(tmp_path / "a")).digest
    decided = load_desired(write(tmp_path / "b", "keep")).digest
    assert undecided != decided


@pytest.mark.parametrize("kind", ["campaign", "decisions"])
def test_the_committed_review_schemas_match_the_models(kind: str) -> None:
    committed = REPO / "schemas" / f"review-{kind}.schema.json"
    assert committed.read_text(encoding="utf-8") == review_json_schema_text(kind), (  # type: ignore[arg-type]
        f"regenerate it with: python -m reconciler.manifest.reviews {kind} > {committed.relative_to(REPO)}")
