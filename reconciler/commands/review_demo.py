"""``reconciler demo examples/review``: a quarterly access review, end to end, on the emulator.

The company example is copied to a work directory and brought in line with its manifests; then a
campaign is started, two reviewers decide (one in their YAML file, one through the review page:
the file the page downloads is written by the same rule, ``reconciler.review.yaml_out``), the plan
shows the review's revocations, apply carries them out, the evidence is written, and the last plan
has no changes.  The script (which items each reviewer revokes) is the example's review-demo.yaml.
"""

from __future__ import annotations

import datetime
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from reconciler.errors import ConfigError

if TYPE_CHECKING:
    from reconciler.service import Service

DEMO_FILE = "review-demo.yaml"  # as reconciler.commands.demo looks for it


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Revoke(_Spec):
    workspace: str
    key: str
    reason: str | None = None


class ReviewerScript(_Spec):
    via: Literal["yaml", "page"]
    revoke: tuple[Revoke, ...] = ()


class DemoScript(_Spec):
    manifests: str
    campaign: str
    dueInDays: int
    reviewers: str
    decisions: dict[str, ReviewerScript]


def load_script(path: Path) -> DemoScript:
    try:
        return DemoScript.model_validate(yaml.safe_load((path / DEMO_FILE).read_text(encoding="utf-8")))
    except (ValidationError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path / DEMO_FILE}: not a review demo script: {exc}") from exc


def review_demo_steps(example: Path, workdir: Path, *, service: Service, color: bool,
                      today: datetime.date) -> Iterator[tuple[str, Callable[[], str]]]:
    """The demo's steps (title, run), each made after the one before it ran."""
    from reconciler.commands import review
    from reconciler.commands.demo_steps import plan_and_apply

    script = load_script(example)
    manifests = workdir / "company"
    shutil.copytree(example / script.manifests, manifests,
                    ignore=shutil.ignore_patterns("seed.yaml", "reconciler.state.json*"))
    state_path = workdir / "reconciler.state.json"
    where = f"--emulator {service.emulator_file}"
    due = today + datetime.timedelta(days=script.dueInDays)
    (plan_title, show_plan), (apply_title, run_apply) = plan_and_apply(manifests, service=service,
                                                                        state_path=state_path, color=color)
    yield (f"# {example}: a quarterly access review over {script.manifests}, in a copy\n"
           f"# first the company is brought in line with its manifests\n$ {apply_title}"), run_apply
    yield (f"reconciler review start {script.campaign} {manifests} --due {due.isoformat()} "
           f"--reviewers {script.reviewers} {where}",
           lambda: review.start(script.campaign, manifests, service=service, due=due, today=today,
                                reviewers=script.reviewers, state_path=state_path))
    for reviewer, decided in script.decisions.items():
        if decided.via == "page":
            yield (f"reconciler review page {script.campaign} {manifests} --out {workdir / 'page'} {where}",
                   lambda: review.page(script.campaign, manifests, out=workdir / "page", service=service,
                                       today=today, state_path=state_path))
            title = (f"# {reviewer} decides on the page and commits the file it downloads "
                     f"(reviews/{script.campaign}/{reviewer}.yaml)")
        else:
            title = f"# {reviewer} decides in reviews/{script.campaign}/{reviewer}.yaml, in a pull request"
        yield title, _decide(manifests, script.campaign, reviewer, decided)
    yield (f"reconciler review status {script.campaign} {manifests}",
           lambda: review.render_status(review.status(script.campaign, manifests, today=today), "text"))
    yield plan_title, show_plan
    yield apply_title, run_apply
    yield (f"reconciler review report {script.campaign} {manifests} --out {workdir / 'evidence'}",
           lambda: review.report(script.campaign, manifests, out=workdir / "evidence", today=today,
                                 state_path=state_path))
    yield plan_title, show_plan


def _decide(manifests: Path, campaign_name: str, reviewer: str, script: ReviewerScript) -> Callable[[], str]:
    def decide() -> str:
        from reconciler.commands.review import load_campaign
        from reconciler.review.yaml_out import decisions_yaml

        _, campaign = load_campaign(campaign_name, manifests)
        revoked = {(r.workspace, r.key): r.reason for r in script.revoke}
        items = [item._replace(decision="revoke", reason=revoked[(item.workspace, item.key)])
                 if (item.workspace, item.key) in revoked else item._replace(decision="keep")
                 for item in campaign.items if item.reviewer == reviewer]
        missing = revoked.keys() - {(i.workspace, i.key) for i in items}
        if missing:
            raise ConfigError(f"review demo: {reviewer} has no item {sorted(missing)} to revoke.")
        path = manifests / "reviews" / campaign_name / f"{reviewer}.yaml"
        path.write_text(decisions_yaml(campaign_name, campaign.due, reviewer, items), encoding="utf-8")
        lines = [f"{reviewer}: {len(items) - len(revoked)} kept, {len(revoked)} revoked:"]
        lines += [f"  revoke {r.key} on {r.workspace}: {r.reason}" for r in script.revoke]
        return "\n".join(lines) + "\n"

    return decide


def kept_note(workdir: Path, campaign: str) -> str:
    """The demo's last words: where the files it told the user to open are (its work directory is kept)."""
    return (f"The review demo's files are kept in {workdir} (delete it when done):\n"
            f"  open {workdir / 'page' / 'review.html'} (the reviewers' page)\n"
            f"  open {workdir / 'evidence' / 'evidence.html'} (the evidence; evidence.csv beside it)\n"
            f"  the campaign's files: {workdir / 'company' / 'reviews' / campaign}/\n")
