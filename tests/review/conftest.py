"""A small company on the emulator for review tests, run through the real CLI."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.conftest import run_cli

EPOCH = "1800000000"  # 2027-01-15 08:00:00 UTC
TODAY = "2027-01-15"

MANIFEST = """version: 1
policy:
  allowedDomains: [acme.com]
teams:
  security: [sam@acme.com, sue@acme.com]
workspaces:
  alpha:
    id: ws_a
    access:
      authoritative: false
      users:
        - {email: jane@acme.com, role: owner}
"""


def workspaces() -> list[dict[str, Any]]:
    return [
        {"id": "ws_a", "name": "Alpha", "published": True,
         "users": [{"email": "jane@acme.com", "role": "owner"}, {"email": "bob@ext.com", "role": "editor"}],
         "domains": [{"domain": "ext.com", "role": "viewer"}]},
        {"id": "ws_b", "name": "Beta", "published": True,
         "users": [{"email": "carl@acme.com", "role": "viewer"}]},
        {"id": "ws_c", "name": "Gamma", "published": True,
         "users": [{"email": "joe@acme.com", "role": "owner"}, {"email": "jane@acme.com", "role": "owner"},
                   {"email": "dee@acme.com", "role": "editor"}]},
    ]


def seed(spaces: list[dict[str, Any]]) -> dict[str, Any]:
    return {"companies": {"acme": {"token": "dev-token-acme", "verified": True, "plan": "paid", "credits": 10,
                                   "workspaces": spaces}}}


def git(root: Path, *argv: str, email: str = "jane@acme.com", when: str = "2027-01-20T10:00:00Z") -> str:
    """git in ``root``, as ``email`` at ``when`` (author and committer)."""
    env = {**os.environ, "GIT_AUTHOR_NAME": email.partition("@")[0], "GIT_AUTHOR_EMAIL": email,
           "GIT_COMMITTER_NAME": email.partition("@")[0], "GIT_COMMITTER_EMAIL": email, "GIT_AUTHOR_DATE": when,
           "GIT_COMMITTER_DATE": when}
    return subprocess.run(["git", *argv], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


def commit_all(root: Path, message: str, **who: str) -> str:
    """Commit the manifests and the reviews (not the emulator's files); the commit's id."""
    if not (root / ".git").exists():
        git(root, "init", "-q")
    git(root, "add", "-A", "--", "m.yaml", "reviews")
    git(root, "commit", "-qm", message, **who)
    return git(root, "rev-parse", "HEAD").strip()


class Company:
    """Manifests in ``root``, the emulator's files beside them (not manifests: the loader skips them)."""

    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.root = root
        self.capsys = capsys

    def emulator_args(self) -> list[str]:
        data = self.root / "emulator.yaml"
        return ["--emulator", str(data)] + ([] if data.exists() else ["--seed", str(self.root / "seed.yaml")])

    def run(self, *argv: str, service: bool = True) -> tuple[int, str, str]:
        args = list(argv) + (self.emulator_args() if service else [])
        return run_cli(args, self.capsys)

    def file(self, name: str, campaign: str = "q4") -> Path:
        return self.root / "reviews" / campaign / name

    def decide_on(self, reviewer: str, decisions: dict[tuple[str, str], tuple[str, str | None]],
                  campaign: str = "q4") -> None:
        """Set the decision and reason of the item of (workspace id, email or domain) in the reviewer's file,
        as a person would; an entry the file does not hold fails the test (which reviewer holds an entry is
        the campaign's assignment, not the item's position)."""
        path = self.file(f"{reviewer}.yaml", campaign)
        lines = path.read_text(encoding="utf-8").split("\n")
        starts = [n for n, line in enumerate(lines) if line.startswith("  - ")] + [len(lines)]
        found: set[tuple[str, str]] = set()
        for begin, end in zip(starts, starts[1:], strict=False):
            fields = {line.strip().partition(": ")[0].lstrip("- "): line.partition(": ")[2]
                      for line in lines[begin:end] if ": " in line}
            entry = (yaml.safe_load(fields["workspace"]), yaml.safe_load(fields["key"]))
            if entry not in decisions:
                continue
            found.add(entry)
            decision, reason = decisions[entry]
            for number in range(begin, end):
                if lines[number].startswith("    decision: "):
                    lines[number] = f"    decision: {decision}"
                if lines[number].startswith("    reason: ") and reason is not None:
                    lines[number] = f"    reason: {reason}"
        assert found == set(decisions), f"{path.name} holds no item of {sorted(set(decisions) - found)}"
        path.write_text("\n".join(lines), encoding="utf-8")

    def decide_all(self, reviewer: str, decision: str, campaign: str = "q4") -> None:
        """Set every item of the reviewer's file to ``decision``."""
        self.decide_on(reviewer, dict.fromkeys(self.entries(reviewer, campaign), (decision, None)), campaign)

    def entries(self, reviewer: str, campaign: str = "q4") -> list[tuple[str, str]]:
        """(workspace id, email or domain) of each item of the reviewer's file, in the file's order."""
        items = yaml.safe_load(self.file(f"{reviewer}.yaml", campaign).read_text(encoding="utf-8"))["items"]
        return [(item["workspace"], item["key"]) for item in items]

    def decide(self, reviewer: str, decisions: dict[int, tuple[str, str | None]], campaign: str = "q4") -> None:
        """Set item ``index``'s decision and reason in the reviewer's file, as a person would (tests outside
        tests/review; these decide by entry, ``decide_on``)."""
        path = self.file(f"{reviewer}.yaml", campaign)
        lines = path.read_text(encoding="utf-8").split("\n")
        found = -1
        for number, line in enumerate(lines):
            if line.startswith("  - "):
                found += 1
            if found in decisions and line.startswith("    decision: "):
                lines[number] = f"    decision: {decisions[found][0]}"
            if found in decisions and line.startswith("    reason: ") and decisions[found][1] is not None:
                lines[number] = f"    reason: {decisions[found][1]}"
        path.write_text("\n".join(lines), encoding="utf-8")


@pytest.fixture
def make_company(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                 monkeypatch: pytest.MonkeyPatch) -> Callable[..., Company]:
    return company_maker(tmp_path, capsys, monkeypatch)


def company_maker(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                  monkeypatch: pytest.MonkeyPatch) -> Callable[..., Company]:
    """What ``make_company`` gives, for a test module outside tests/review."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    monkeypatch.delenv("RECONCILER_BASE_URL", raising=False)
    monkeypatch.delenv("RECONCILER_TOKEN", raising=False)

    def make(spaces: list[dict[str, Any]] | None = None, manifest: str = MANIFEST, root: Path | None = None) -> Company:
        root = root or tmp_path / "company"
        root.mkdir()
        (root / "m.yaml").write_text(manifest, encoding="utf-8")
        (root / "seed.yaml").write_text(yaml.safe_dump(seed(spaces if spaces is not None else workspaces()),
                                                       sort_keys=False), encoding="utf-8")
        return Company(root, capsys)

    return make


@pytest.fixture
def started(make_company: Callable[..., Company]) -> Company:
    """The small company with campaign q4 started (due 2027-02-01; ws_b, with no owner, to sec@acme.com)."""
    return start_q4(make_company())


def start_q4(company: Company, *extra: str) -> Company:
    code, _, err = company.run("review", "start", "q4", str(company.root), "--due", "2027-02-01",
                               "--fallback", "sec@acme.com", *extra)
    assert code == 0, err
    return company
