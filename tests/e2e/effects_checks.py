"""What the property tests of the effects model check of every applied plan (tests/e2e/test_effects_property*.py):
the company's lists as the service holds them, every list the one the plan predicted, every view naming every
workspace the effects name. One copy, for both generators."""

from __future__ import annotations

import json
from typing import Any

from reconciler.commands.plan import render
from reconciler.live import fetch_live
from reconciler.plan.model import AccessSnapshot, Plan


def company_lists(client: Any) -> dict[str, AccessSnapshot]:
    """Every workspace's list, read whole from the service."""
    live = fetch_live(client, (), complete=True)
    return {wid: AccessSnapshot(users={k: e.role for k, e in ws.users.items()},
                                domains={k: e.role for k, e in ws.domains.items()})
            for wid, ws in live.workspaces.items()}


def every_list_is_the_predicted_one(plan: Plan, before: dict[str, AccessSnapshot],
                                    after: dict[str, AccessSnapshot]) -> None:
    """Each workspace holds its ``after`` of the effects (or the list it had); the workspaces whose list
    changed are exactly the effects'; each workspace the plan created holds the list predicted for it."""
    predicted = {e.workspace: e for e in plan.effects if e.workspace is not None}
    for wid, now in after.items():
        if wid in before:
            expected = predicted[wid].after.snapshot() if wid in predicted else before[wid]
            assert now == expected, f"{wid}: predicted {expected}, the service shows {now}"
    changed = {wid for wid in before if after.get(wid) != before[wid]}
    assert changed == set(predicted), (f"changed {sorted(changed)}, effects {sorted(predicted)}: every "
                                       "workspace whose list changed is in effects, and only those")
    created = sorted(set(after) - set(before))
    new = [e for e in plan.effects if e.workspace is None]
    assert len(created) == len(new)
    for e in new:
        assert any(after[wid] == e.after.snapshot() for wid in created), f"{e.name}: predicted {e.after}"


def quiet_views(plan: Plan) -> dict[str, str]:
    """The text, markdown and --by-person views, without the warnings (one naming a workspace connected by hand
    is no view of what a change reaches)."""
    quiet = plan.model_copy(update={"warnings": ()})
    return {"text": render(quiet, fmt="text", color=False), "markdown": render(quiet, fmt="markdown", color=False),
            "--by-person": render(quiet, fmt="text", color=False, by_person=True)}


def every_view_names_every_workspace_of_the_effects(plan: Plan) -> None:
    """No view may name fewer workspaces than the JSON effects: the text, markdown and by-person views name
    each (a new one by its name), and the JSON view's effects are the plan's."""
    named = [f'"{e.name}"' if e.workspace is None else e.workspace for e in plan.effects]
    for view, text in quiet_views(plan).items():
        missing = [w for w in named if w not in text]
        assert not missing, f"the {view} view does not name {missing}, which the effects name:\n{text}"
    effects = json.loads(render(plan, fmt="json", color=False))["effects"]
    assert [e["workspace"] or e["name"] for e in effects] == [e.workspace or e.name for e in plan.effects]
