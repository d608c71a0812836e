"""Random edits to a started campaign's reviewer files (issue 39): an item added, removed, changed or moved to
another reviewer's file, a file deleted, a foreign reviewer's file added. Each is refused at file:line by the
manifests' loader, which every command reads through, so no plan acts on it, or, for a file deleted, read back
from git with each of its items undecided (never fewer items, and never the decisions of the copy in git, which
revokes everything here); a decision edited alone is accepted.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconciler.errors import ManifestError
from reconciler.manifest import load_desired
from tests.review.conftest import Company, commit_all, start_q4

KINDS = ("add", "remove", "change", "move", "delete", "foreign")
Item = tuple[str, str, str, str, str]  # reviewer, workspace, kind, key, role
FILE_LINE = re.compile(r"reviews/q4/[^:]+\.yaml:\d+: ")


@pytest.fixture(scope="module")
def started_campaign(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One campaign started through the CLI, in git with every item revoked, and undecided in the working tree;
    copied for each example."""
    from tests.review.conftest import company_maker

    monkeypatch = pytest.MonkeyPatch()
    capsys = _NoCapture()
    try:
        company: Company = company_maker(tmp_path_factory.mktemp("seal"), capsys, monkeypatch)()  # type: ignore[arg-type]
        start_q4(company)
        originals = {p: p.read_text(encoding="utf-8") for p in company.file("").glob("*@*.yaml")}
        for path, text in originals.items():
            path.write_text(text.replace("    decision: null", "    decision: revoke"), encoding="utf-8")
        commit_all(company.root, "every item revoked")
        for path, text in originals.items():
            path.write_text(text, encoding="utf-8")
        yield company.root
    finally:
        monkeypatch.undo()


class _NoCapture:
    """run_cli's capsys, for a module-scoped fixture: the output is read from the result."""

    def readouterr(self) -> Any:
        return type("Captured", (), {"out": "", "err": ""})()


def _load(path: Path) -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(path.read_text(encoding="utf-8"))
    return document


def _save(path: Path, document: dict[str, Any]) -> None:
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")


def _items(root: Path) -> list[Item]:
    return sorted((i.reviewer, i.workspace, i.kind, i.key, i.role) for i in load_desired(root).reviews[0].items)


def _edit(folder: Path, kind: str, draw: Callable[[st.SearchStrategy[Any]], Any]) -> Path | None:
    """Make an edit of ``kind``; the file deleted, for a deletion."""
    files = sorted(p for p in folder.glob("*.yaml") if p.name != "campaign.yaml")
    target: Path = draw(st.sampled_from(files))
    document = _load(target)
    items: list[dict[str, Any]] = document["items"]
    if kind == "add":
        items.append({"workspace": draw(st.sampled_from(["ws_a", "ws_b", "ws_c", "ws_z"])),
                      "kind": "user", "key": draw(st.sampled_from(["bob@ext.com", "eve@acme.com"])),
                      "role": "editor", "decision": "revoke"})
    elif kind == "remove" and items:
        items.pop(draw(st.integers(0, len(items) - 1)))
    elif kind == "change" and items:
        item = items[draw(st.integers(0, len(items) - 1))]
        field = draw(st.sampled_from(["key", "role", "workspace"]))
        item[field] = {"key": "eve@acme.com", "role": "viewer" if item["role"] != "viewer" else "editor",
                       "workspace": "ws_z"}[field]
    elif kind == "move" and len(files) > 1 and items:
        other = draw(st.sampled_from([f for f in files if f != target]))
        moved = items.pop(draw(st.integers(0, len(items) - 1)))
        theirs = _load(other)
        theirs["items"].append(moved)
        _save(other, theirs)
    elif kind == "delete":
        target.unlink()
        return target
    elif kind == "foreign":
        _save(folder / "eve@acme.com.yaml", {"reviewer": "eve@acme.com", "items": [
            {"workspace": "ws_a", "kind": "user", "key": "bob@ext.com", "role": "editor", "decision": "revoke"}]})
        return None
    else:  # nothing of that kind to do here: add instead
        items.append({"workspace": "ws_a", "kind": "user", "key": "bob@ext.com", "role": "editor",
                      "decision": "revoke"})
    _save(target, document)
    return None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(KINDS), data=st.data())
def test_an_edit_of_the_items_is_refused_at_file_and_line_or_read_as_undecided_never_acted_on(
        started_campaign: Path, tmp_path_factory: pytest.TempPathFactory, kind: str, data: st.DataObject) -> None:
    root = tmp_path_factory.mktemp("edited") / "company"
    shutil.copytree(started_campaign, root)
    before = _items(root)
    deleted = _edit(root / "reviews" / "q4", kind, data.draw)
    if deleted is None:
        with pytest.raises(ManifestError) as refused:
            load_desired(root)
        assert any(FILE_LINE.search(str(p)) for p in refused.value.problems), refused.value.problems
        return
    campaign = load_desired(root).reviews[0]  # ignored as undecided: the items as sealed, none decided
    assert _items(root) == before
    assert [i.decision for i in campaign.items if i.location.file == str(deleted)] == [None] * sum(
        1 for reviewer, *_ in before if f"{reviewer}.yaml" == deleted.name)
    assert all(i.decision is None for i in campaign.items)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(decisions=st.lists(st.sampled_from(["keep", "revoke", None]), min_size=1, max_size=6), data=st.data())
def test_decisions_reasons_and_a_reformatted_file_are_accepted(
        started_campaign: Path, tmp_path_factory: pytest.TempPathFactory, decisions: list[str | None],
        data: st.DataObject) -> None:
    root = tmp_path_factory.mktemp("decided") / "company"
    shutil.copytree(started_campaign, root)
    path = data.draw(st.sampled_from(sorted(p for p in (root / "reviews" / "q4").glob("*@*.yaml"))))
    document = _load(path)
    for item, decision in zip(document["items"], decisions, strict=False):
        item["decision"], item["reason"] = decision, "checked" if decision else None
    _save(path, document)  # rewritten by PyYAML: another layout, the same items
    campaign = load_desired(root).reviews[0]
    assert {(i.key, i.decision) for i in campaign.items if i.location.file == str(path)} == {
        (i["key"], i["decision"]) for i in document["items"]}
