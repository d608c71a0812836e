"""``reconciler review``: access review campaigns kept under the manifests.

``start`` reads the company once (``reconciler.company.read``: ceil(N/100)
listing calls, nothing written to the service or the state) and writes the
campaign's files; ``status``, ``close``, ``report`` and ``page`` read those
files back (``reconciler.manifest.reviews``, through ``load_desired``).
"""

from __future__ import annotations

import datetime
import re
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reconciler.errors import ConfigError
from reconciler.text import plural, printable

if TYPE_CHECKING:
    from reconciler.manifest.desired import Desired, DesiredCampaign
    from reconciler.review.status import CampaignStatus
    from reconciler.service import Service

_NAME = re.compile(r"[a-z0-9][a-z0-9-]*\Z")


def manifest_root(path: Path) -> Path:
    """The directory the manifests (and their ``reviews/``) are in."""
    return path if path.is_dir() else path.parent


def campaign_dir(path: Path, name: str) -> Path:
    if not _NAME.match(name):
        raise ConfigError(f"review {printable(name)}: a campaign's name is lower-case letters, digits and '-', "
                          "starting with a letter or digit (it names a directory).")
    return manifest_root(path) / "reviews" / name


def start(name: str, path: Path, *, service: Service, due: date, today: date, external: bool = False,
          reviewers: str = "owners", fallback: str | None = None, on_due: str = "flag",
          state_path: Path | str | None = None) -> str:
    """Write ``reviews/NAME/campaign.yaml`` and one file per reviewer; return the summary."""
    from reconciler.company.read import load_and_read
    from reconciler.manifest import load_desired
    from reconciler.owned_files import write_owned
    from reconciler.review.start import StartOptions, check_options, start_campaign

    folder = campaign_dir(path, name)
    if folder.exists():
        raise ConfigError(f"review start {name}: {folder} exists already; a campaign is started once "
                          "(give another name, or remove the directory to start it again).")
    _refuse_the_demo_company(name, path, service)
    options = StartOptions(name=name, due=due, today=today, external=external, reviewers=reviewers.strip(),
                           fallback=_email(fallback, name) if fallback is not None else None, on_due=on_due)
    check_options(load_desired(path), options)  # before any call
    read = load_and_read(path, service=service, today=today, state_path=state_path)
    started = start_campaign(read.desired, read.company, options)
    if any(Path(file_name).name != file_name or file_name.startswith(".") for file_name in started.files):
        raise ConfigError(f"review start {name}: a reviewer's file name would leave {folder}; nothing was written.")
    folder.mkdir(parents=True)
    for file_name, text in started.files.items():
        # 0o644: the files are for git and for every reviewer, not secrets.
        write_owned(folder / file_name, text.encode("utf-8"), what="review file", error=ConfigError, mode=0o644)
    return (f"Started review {name} in {folder}: {plural(started.items, 'item')} on "
            f"{plural(started.workspaces, 'workspace')} for {plural(started.reviewers, 'reviewer')}, due "
            f"{due.isoformat()}; the company was read in {plural(read.company.calls, 'call')}.\n")


def _refuse_the_demo_company(name: str, path: Path, service: Service) -> None:
    """``ConfigError`` when ``--emulator FILE`` does not exist and no ``--seed`` is given: the emulator would be
    made from its built-in demo company, and the campaign written into the manifests would review a company that
    is not the user's (it did, silently: issue 41 item 10).  Before any call; nothing is written."""
    if service.emulator_file is None or service.emulator_seed is not None or service.emulator_file.exists():
        return
    from reconciler import emulator

    beside = manifest_root(path) / "seed.yaml"
    suggestion = f" (here, --seed {beside})" if beside.is_file() else ""
    demo = Path(emulator.__file__).parent / "demo_seed.yaml"
    raise ConfigError(f"review start {name}: the emulator data file {service.emulator_file} does not exist and no "
                      "--seed was given, so the campaign would review the emulator's built-in demo company, not "
                      f"yours. Give --seed with the seed of the company to rehearse on{suggestion}, or --emulator "
                      f"a data file that exists (to review the demo company on purpose: --seed {demo}). Nothing "
                      "was written.")


def _email(value: str, name: str) -> str:
    from reconciler.manifest.values import email_problem

    problem = email_problem(value.strip())
    if problem is not None:
        raise ConfigError(f"review start {name}: --fallback {printable(value)} is not an email address: {problem}.")
    return value.strip().lower()


def load_campaign(name: str, path: Path) -> tuple[Desired, DesiredCampaign]:
    """The manifests and the campaign ``name`` in them (``ConfigError`` when there is none)."""
    from reconciler.manifest import load_desired

    folder = campaign_dir(path, name)
    desired = load_desired(path)
    for campaign in desired.reviews:
        if campaign.name == name:
            return desired, campaign
    known = ", ".join(c.name for c in desired.reviews) or "none"
    raise ConfigError(f"review {name}: no campaign {folder / 'campaign.yaml'} (campaigns here: {known}); "
                      f"start one with reconciler review start {name} {path} --due DATE.")


def status(name: str, path: Path, *, today: date) -> CampaignStatus:
    """The campaign's progress on ``today``; no call to the service."""
    from reconciler.review.status import campaign_status

    _, campaign = load_campaign(name, path)
    return campaign_status(campaign, today)


def render_status(result: CampaignStatus, fmt: str) -> str:
    """The status as ``text``, ``markdown`` or ``json``."""
    from reconciler.review.status import render_status as render

    return render(result, fmt)


def close(name: str, path: Path, *, today: date, state_path: Path | str | None = None,
          accept_undecided: bool = False) -> str:
    """Remove the manifest lines the campaign's revocations imply and mark it closed; return the summary.

    The edited manifests are loaded again before anything is kept: when they do not load (an
    authoritative list left without an owner), every file is put back and the problems are the error."""
    from reconciler.errors import ManifestError
    from reconciler.manifest import load_desired
    from reconciler.owned_files import write_owned
    from reconciler.manifest.reviews import campaign_files, decisions_digest
    from reconciler.plan.moves import moved_state
    from reconciler.review.close import closed_campaign_text, edited_texts, plan_close
    from reconciler.state.backend import read_state

    desired, campaign = load_campaign(name, path)
    if campaign.closed is not None:
        raise ConfigError(f"review close {name}: the campaign was closed on {campaign.closed.isoformat()} already "
                          f"({campaign.location.file}).")
    undecided = _undecided(campaign)
    if undecided and not accept_undecided:
        counted = ", ".join(f"{printable(Path(file).name)}{'' if Path(file).exists() else ' (missing)'}: {n}"
                            for file, n in sorted(undecided.items()))
        raise ConfigError(f"review close {name}: {plural(sum(undecided.values()), 'item')} nobody decided yet "
                          f"({counted}); a closed campaign acts on no later decision. Decide them, or close with "
                          "--accept-undecided to record in campaign.yaml that they were left undecided. Nothing was "
                          "changed.")
    # The addresses as the manifests' moved: entries make them, as the plan reads them: a member recorded under
    # the address a pending move leaves still holds its group's list.
    state = moved_state(desired, read_state(state_path, path))
    closing = plan_close(desired, campaign, state)
    if closing.conflicts:
        raise ConfigError(f"review close {name}: a removal from a team would override another reviewer's keep:\n"
                          + "\n".join(f"  {printable(c)}" for c in closing.conflicts)
                          + "\nNeither is carried out: decide one of them again (keep on both, or revoke on both "
                          "with removeFromTeam: true; a revoke without it is not carried out, and keeps the person). "
                          "Nothing was changed.")
    texts = edited_texts(closing.edits)
    campaign_file = Path(campaign.location.file)
    reviewer_files = [(p.name, p.read_bytes()) for p in campaign_files(campaign_file.parent)
                      if p.name != campaign_file.name]
    texts[str(campaign_file)] = closed_campaign_text(campaign_file.read_text(encoding="utf-8"), today,
                                                     decisions_digest(reviewer_files), sum(undecided.values()))
    before = {file: Path(file).read_bytes() for file in texts}
    for file, text in texts.items():
        write_owned(Path(file), text.encode("utf-8"), what="manifest", error=ConfigError, mode=0o644)
    try:
        load_desired(path)
    except ManifestError as exc:
        for file, data in before.items():
            write_owned(Path(file), data, what="manifest", error=ConfigError, mode=0o644)
        raise ConfigError(f"review close {name}: the manifests would not load once edited, so nothing was "
                          "changed:\n" + "\n".join(f"  {p}" for p in exc.problems)) from exc
    lines = [f"Closed review {name} on {today.isoformat()}: "
             f"{plural(len(closing.edits), 'manifest line')} removed"
             + (":" if closing.edits else ".")]
    lines += [f"  {edit.location}: {printable(edit.what)} (revoked by {printable(edit.item.reviewer)})"
              for edit in closing.edits]
    lines += [f"Left as they are: {printable(note)}" for note in closing.notes]
    lines.append("Commit the diff with the decisions; the next plan carries out the revocations.")
    return "\n".join(lines) + "\n"


def reassign(name: str, path: Path, *, source: str, target: str, reason: str, by: str | None,
             now: datetime.datetime) -> str:
    """Move ``source``'s undecided items of campaign ``name`` to ``target`` and record it in campaign.yaml
    (``reconciler.review.reassign``); return the summary.  The manifests are loaded again before anything is
    kept: when they do not load, every file is put back and the problems are the error."""
    from reconciler.errors import ManifestError
    from reconciler.manifest import load_desired
    from reconciler.owned_files import write_owned
    from reconciler.review.reassign import plan_reassign

    desired, campaign = load_campaign(name, path)
    reason = reason.strip()
    if not reason:
        raise ConfigError(f"review reassign {name}: --reason is empty; say why the items move (it is recorded in "
                          "campaign.yaml). Nothing was changed.")
    who = _email_of(by if by is not None else _git_user_email(manifest_root(path)), name, "--by" if by else None)
    source, target = (_email_of(source, name, "--from"), _email_of(target, name, "--to"))
    folder = Path(campaign.location.file).parent
    done = plan_reassign(desired, campaign, (folder / "campaign.yaml").read_text(encoding="utf-8"), source=source,
                         target=target, reason=reason, by=who, at=now)
    before = {file_name: (folder / file_name).read_bytes() if (folder / file_name).is_file() else None
              for file_name in done.files}
    _write_all(folder, done.files, write_owned)
    try:
        load_desired(path)
    except ManifestError as exc:
        _write_all(folder, {f: (d.decode("utf-8") if d is not None else None) for f, d in before.items()},
                   write_owned)
        raise ConfigError(f"review reassign {name}: the manifests would not load once reassigned, so nothing was "
                          "changed:\n" + "\n".join(f"  {p}" for p in exc.problems)) from exc
    already = (f"; {plural(done.held_already, 'item')} of an entry {printable(target)} reviews already left "
               f"{printable(source)}'s file" if done.held_already else "")
    return (f"Reassigned {plural(done.moved, 'undecided item')} of review {name} from {printable(source)} to "
            f"{printable(target)}{already}; recorded in {folder / 'campaign.yaml'} (by {printable(who)}, "
            f"{now.strftime('%Y-%m-%dT%H:%M:%SZ')}). Commit the diff.\n")


def _write_all(folder: Path, files: dict[str, str | None], write_owned: Any) -> None:
    for file_name, text in files.items():
        if text is None:
            (folder / file_name).unlink(missing_ok=True)
        else:
            write_owned(folder / file_name, text.encode("utf-8"), what="review file", error=ConfigError, mode=0o644)


def _git_user_email(root: Path) -> str:
    """Who runs the command, as git knows them (``git config user.email``), for the record."""
    import subprocess

    try:
        done = subprocess.run(["git", "config", "user.email"], cwd=root, capture_output=True, text=True,
                              check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        done = None
    if done is None or done.returncode != 0 or not done.stdout.strip():
        raise ConfigError("review reassign: who reassigns is recorded in the campaign, and git config user.email "
                          "is not set here: give --by EMAIL. Nothing was changed.")
    return done.stdout.strip()


def _email_of(value: str, name: str, option: str | None) -> str:
    from reconciler.manifest.values import email_problem

    problem = email_problem(value.strip())
    if problem is not None:
        given = option or "git config user.email"
        raise ConfigError(f"review reassign {name}: {given} {printable(value)} is not an email address: {problem}. "
                          "Nothing was changed.")
    return value.strip().lower()


def _undecided(campaign: DesiredCampaign) -> dict[str, int]:
    """Reviewer file -> how many of its entries nobody decided (an entry two owners hold is decided when
    either decided it)."""
    from reconciler.manifest.review_meaning import deciding_items

    found: dict[str, int] = {}
    for item in deciding_items(campaign.items).values():
        if item.decision is None:
            found[item.location.file] = found.get(item.location.file, 0) + 1
    return found


def report(name: str, path: Path, *, out: Path, today: date, state_path: Path | str | None = None) -> str:
    """Write evidence.csv and evidence.html to ``out``; return the summary.  With ``state_path`` (or a
    state file beside the manifests) whether each revocation was applied is read from it."""
    from reconciler.commands.report import check_out_dir
    from reconciler.owned_files import write_owned
    from reconciler.review.evidence import evidence_csv, evidence_html, make_evidence
    from reconciler.state.backend import read_stored_state

    check_out_dir(out)
    desired, campaign = load_campaign(name, path)
    _refuse_a_missing_state(name, state_path, path)
    state = read_stored_state(state_path, path)
    evidence = make_evidence(desired, campaign, state, today)
    out.mkdir(parents=True, exist_ok=True)
    for file_name, text in (("evidence.csv", evidence_csv(evidence)), ("evidence.html", evidence_html(evidence))):
        write_owned(out / file_name, text.encode("utf-8"), what="review evidence", error=ConfigError, mode=0o644)
    f = evidence.figures()
    return (f"Wrote evidence.csv, evidence.html to {out}: {plural(f.items, 'item')}, {f.decided} decided "
            f"({f.kept} kept, {f.revoked} revoked, {f.revoked_applied} revoked and applied), {f.overdue} overdue.\n"
            f"{evidence.git}\n")


def _refuse_a_missing_state(name: str, state_path: Path | str | None, path: Path) -> None:
    """A ``--state`` that holds no state is a mistake, not a state with nothing applied: the evidence would
    say "0 revoked and applied" of revocations the applies did make (issue 39 item 8)."""
    from reconciler.state.backend import backend_for

    if state_path is None:
        return
    store = backend_for(state_path, path)
    try:
        if store.exists():
            return
        where = store.address
    finally:
        store.close()
    raise ConfigError(f"review report {name}: --state {where} holds no state, so whether each revocation was "
                      "applied cannot be read from it. Give the state the applies use, or leave --state out to "
                      "report from the state beside the manifests (or without one). Nothing was written.")


def page(name: str, path: Path, *, out: Path, service: Service, today: date,
         state_path: Path | str | None = None) -> str:
    """Write review.html, the reviewers' page, to ``out``; return the summary.  The company is read once (as
    ``review start`` reads it: ceil(N/100) listing calls, nothing written) for what each decision will do."""
    from reconciler.commands.report import check_out_dir
    from reconciler.company.read import load_and_read
    from reconciler.live import one_list_each
    from reconciler.owned_files import write_owned
    from reconciler.review.page import consequences, render_review_page

    check_out_dir(out)
    load_campaign(name, path)  # before any call: a campaign that is not there is refused without one
    read = load_and_read(path, service=service, today=today, state_path=state_path)
    campaign = next(c for c in read.desired.reviews if c.name == name)
    joined = [(w.id, w.group_homepage) for w in read.company.workspaces
              if w.group_homepage is not None and w.group_homepage != w.id]
    found = consequences(read.desired, read.company, one_list_each(read.live.workspaces.values(), read.live.sharing, joined))
    out.mkdir(parents=True, exist_ok=True)
    write_owned(out / "review.html", render_review_page(campaign, found).encode("utf-8"), what="review page",
                error=ConfigError, mode=0o644)
    return (f"Wrote review.html to {out}: {plural(len(campaign.items), 'item')} for "
            f"{plural(len(campaign.reviewer_files), 'reviewer')}; the company was read in "
            f"{plural(read.company.calls, 'call')} for what each decision does. Open it, decide, download your "
            f"file and commit it as reviews/{name}/<your email>.yaml.\n")
