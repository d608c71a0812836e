"""Each rule is written once (issue 37, item 2): every user imports the one definition.

Each test imports the one place and asserts that the name each user module
works with *is* that definition, so a copy written back into a user fails
here; a scan of the source for a second definition follows where one helps.
"""

from __future__ import annotations

import ast
from datetime import date
from pathlib import Path

from reconciler.manifest.desired import Decision, DesiredCampaign, ReviewItem
from reconciler.manifest.location import SourceLocation

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "reconciler"


def _defined(name: str) -> list[str]:
    """Every module of reconciler that defines a class or function called ``name`` (at any depth)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        if any(isinstance(node, (ast.ClassDef, ast.FunctionDef)) and node.name == name for node in ast.walk(tree)):
            found.append(path.relative_to(ROOT).as_posix())
    return found


# -- the frozen base of the tool's pydantic values ---------------------------------------------------------------

def test_every_value_model_stands_on_the_one_frozen_base() -> None:
    import reconciler.company.audit
    import reconciler.company.model
    import reconciler.company.who
    import reconciler.models
    import reconciler.plan.model
    import reconciler.report.model
    import reconciler.review.evidence
    import reconciler.review.status

    for user in (reconciler.plan.model, reconciler.report.model, reconciler.company.model, reconciler.company.who,
                 reconciler.company.audit, reconciler.review.status, reconciler.review.evidence):
        assert user.Frozen is reconciler.models.Frozen, user.__name__
    assert issubclass(reconciler.plan.model.Plan, reconciler.models.Frozen)
    assert issubclass(reconciler.review.evidence.Evidence, reconciler.models.Frozen)


def test_no_module_but_models_defines_a_frozen_base() -> None:
    assert _defined("Frozen") + _defined("_Frozen") == ["reconciler/models.py"]


# -- what a review item means ----------------------------------------------------------------------------------

def _item(reviewer: str, key: str, decision: Decision | None, line: int) -> ReviewItem:
    return ReviewItem(campaign="q4", reviewer=reviewer, workspace="ws_a", kind="user", key=key, role="editor",
                      location=SourceLocation(f"reviews/q4/{reviewer}.yaml", line), decision=decision)


def _campaign(*items: ReviewItem) -> DesiredCampaign:
    return DesiredCampaign(name="q4", location=SourceLocation("reviews/q4/campaign.yaml", 1),
                           started=date(2027, 1, 1), due=date(2027, 2, 1), items=items,
                           reviewer_files=(("jane@acme.com", "jane.yaml"), ("joe@acme.com", "joe.yaml")))


def test_every_reader_of_the_decisions_uses_the_one_meaning() -> None:
    import reconciler.company.audit
    import reconciler.manifest.review_meaning as meaning
    import reconciler.plan.reviews
    import reconciler.review.close
    import reconciler.review.evidence
    import reconciler.review.status

    for user in (reconciler.plan.reviews, reconciler.review.close, reconciler.review.evidence):
        assert user.deciding_items is meaning.deciding_items, user.__name__
    for user in (reconciler.review.status, reconciler.company.audit):
        assert user.undecided_items is meaning.undecided_items, user.__name__


def test_no_module_but_the_meaning_names_an_entry_by_its_three_fields() -> None:
    """``(item.workspace, item.kind, item.key)``: grouping the items by entry is the meaning's alone."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Tuple) and [getattr(e, "attr", None) for e in node.elts] == [
                    "workspace", "kind", "key"]:
                found.append(path.relative_to(ROOT).as_posix())
    assert sorted(set(found)) == ["reconciler/manifest/review_meaning.py"]
    assert _defined("_decision") == []


def test_a_revoke_from_any_reviewer_decides_then_a_keep_and_an_undecided_entry_is_its_first_item() -> None:
    from reconciler.manifest.review_meaning import deciding_items, undecided_items

    items = (_item("jane@acme.com", "ann@x.com", "keep", 3), _item("jane@acme.com", "bob@x.com", None, 6),
             _item("jane@acme.com", "cy@x.com", "keep", 9), _item("joe@acme.com", "ann@x.com", "revoke", 3),
             _item("joe@acme.com", "bob@x.com", None, 6), _item("joe@acme.com", "cy@x.com", "keep", 9),
             _item("joe@acme.com", "dee@x.com", None, 12), _item("joe@acme.com", "dee@x.com", "keep", 15))
    deciding = deciding_items(items)
    assert [(key, item.reviewer, item.decision) for (_, _, key), item in deciding.items()] == [
        ("ann@x.com", "joe@acme.com", "revoke"), ("bob@x.com", "jane@acme.com", None),
        ("cy@x.com", "jane@acme.com", "keep"), ("dee@x.com", "joe@acme.com", "keep")]
    assert [(i.reviewer, i.key) for i in undecided_items(_campaign(*items))] == [
        ("jane@acme.com", "bob@x.com"), ("joe@acme.com", "bob@x.com")]


def test_close_takes_the_deciding_revokes_in_the_campaigns_order() -> None:
    from reconciler.review.close import effective_revokes

    first = _item("jane@acme.com", "ann@x.com", "keep", 3)
    other = _item("jane@acme.com", "bob@x.com", "revoke", 6)
    ann = _item("joe@acme.com", "ann@x.com", "revoke", 3)
    again = _item("joe@acme.com", "bob@x.com", "revoke", 6)
    assert effective_revokes(_campaign(first, other, ann, again)) == [other, ann]


def test_status_audit_and_evidence_agree_an_entry_one_reviewer_decided_is_not_overdue() -> None:
    from reconciler.company.audit import review_findings
    from reconciler.company.model import CompanyAccess
    from reconciler.review.status import campaign_status

    campaign = _campaign(_item("jane@acme.com", "ann@x.com", "keep", 3), _item("jane@acme.com", "bob@x.com", None, 6),
                         _item("joe@acme.com", "ann@x.com", None, 3))
    today = date(2027, 2, 4)
    status = campaign_status(campaign, today)
    assert [(o.reviewer, o.key) for o in status.overdue] == [("jane@acme.com", "bob@x.com")]
    assert (status.decided, status.total) == (1, 3)  # each reviewer's own answers still count as they are
    findings = review_findings([campaign._replace(on_due="flag")], CompanyAccess.model_construct(workspaces=()), today)
    assert [(f.key, f.location) for f in findings] == [("bob@x.com", "reviews/q4/jane@acme.com.yaml:6")]


# -- a domain within the company's domains ---------------------------------------------------------------------

def test_every_judge_of_a_domain_uses_the_one_predicate() -> None:
    import reconciler.domains
    import reconciler.manifest.policy
    import reconciler.plan.lookalikes
    import reconciler.report.model
    import reconciler.review.start

    for user in (reconciler.manifest.policy, reconciler.review.start, reconciler.plan.lookalikes):
        assert user.is_within is reconciler.domains.is_within, user.__name__
    assert reconciler.report.model.within is reconciler.domains.within


def test_no_module_but_domains_tests_a_domain_by_its_ending() -> None:
    """``d.endswith("." + a)``: a second copy of the predicate."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "endswith" and node.args and (
                    ast.unparse(node.args[0]).startswith(("f'.", '"." +', "'.' +", "tuple("))
                    or isinstance(node.args[0], ast.Name) and node.args[0].id == "suffixes"):
                found.append(path.relative_to(ROOT).as_posix())
    assert sorted(set(found)) == ["reconciler/domains.py"]


def test_a_domain_is_within_when_it_is_one_of_them_or_below_one() -> None:
    from reconciler.domains import is_within, within
    from reconciler.review.start import is_external

    assert within(["acme.com", "eu.acme.com", "notacme.com", "acme.com.evil", "com"], ["acme.com", "b.io"]) == [
        True, True, False, False, False]
    assert not is_within("acme.com", [])
    assert [is_external("user", "bo@eu.acme.com", ["acme.com"]), is_external("domain", "notacme.com", ["acme.com"])] \
        == [False, True]


# -- asset. and unmanaged. addresses ---------------------------------------------------------------------------

def test_every_builder_and_reader_of_the_addresses_uses_the_one_module() -> None:
    import reconciler.addresses as addresses
    import reconciler.apply.recording
    import reconciler.commands.state
    import reconciler.manifest.desired
    import reconciler.manifest.moved
    import reconciler.plan.company
    import reconciler.plan.facts
    import reconciler.plan.findings
    import reconciler.plan.verify

    assert reconciler.manifest.desired.asset_address is addresses.asset_address
    assert reconciler.plan.company.unmanaged_address is addresses.unmanaged_address
    for user in (reconciler.manifest.moved, reconciler.plan.verify, reconciler.plan.findings,
                 reconciler.commands.state):
        assert user.is_asset is addresses.is_asset, user.__name__
    for user in (reconciler.plan.verify, reconciler.plan.facts, reconciler.plan.company, reconciler.apply.recording):
        assert user.is_unmanaged is addresses.is_unmanaged, user.__name__


def _spells_a_prefix(node: ast.AST) -> bool:
    """``"asset."``, ``"unmanaged."``, ``".asset."``, or an f-string starting with one (``f"asset.{key}"``)."""
    if isinstance(node, ast.JoinedStr) and node.values:
        node = node.values[0]
    return isinstance(node, ast.Constant) and node.value in ("asset.", "unmanaged.", ".asset.")


def test_no_module_but_addresses_spells_the_prefixes() -> None:
    found = {path.relative_to(ROOT).as_posix() for path in sorted(PACKAGE.rglob("*.py"))
             if any(map(_spells_a_prefix, ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path)))))}
    assert found == set()  # reconciler/addresses.py spells them through ASSET and UNMANAGED


def test_the_addresses_are_built_and_told_apart() -> None:
    from reconciler.addresses import asset_address, is_asset, is_unmanaged, unmanaged_address

    assert (asset_address("deck"), unmanaged_address("ws_1")) == ("asset.deck", "unmanaged.ws_1")
    assert [is_asset(a) for a in ("asset.deck", "group.asset.workspace.k", "workspace.asset", "asset")] == [
        True, False, False, False]
    assert [is_unmanaged(a) for a in ("unmanaged.ws_1", "workspace.unmanaged")] == [True, False]


def test_the_state_check_reads_a_member_of_a_group_called_asset_as_a_workspace() -> None:
    """It was skipped as an asset (``".asset." in address``): its recorded name went unchecked."""
    from reconciler.live import Live, LiveWorkspace
    from reconciler.plan.verify import mismatches
    from reconciler.state.model import ResourceState, State

    state = State(resources={"group.asset.workspace.k": ResourceState(id="ws_1", name="Kiosk")})
    live = Live(workspaces={"ws_1": LiveWorkspace(id="ws_1", name="Something else")})
    assert [m.address for m in mismatches(state, live)] == ["group.asset.workspace.k"]
