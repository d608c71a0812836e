"""``reconciler --help`` and ``reconciler validate`` start without the heavy stack.

The client (httpx), the emulator (and starlette/uvicorn behind it) and
deepdiff are imported only by the commands that need them, so a person
typing ``validate`` does not wait for them (bench/README.md has the times).
Each check runs in a fresh interpreter, since this test process has
imported everything already; it looks at ``sys.modules``, never at a clock.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# Modules (and packages, with their submodules) that neither --help nor validate may load.
HEAVY = ("httpx", "starlette", "uvicorn", "deepdiff", "respx", "reconciler.emulator", "reconciler.api.client",
         "reconciler.service", "reconciler.apply")

PROBE = textwrap.dedent("""
    import json, sys
    heavy = json.loads(sys.argv[1])
    def loaded():
        return sorted(m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy))
    import reconciler.cli
    after_import = loaded()
    args = json.loads(sys.argv[2])
    if args:
        try:
            reconciler.cli.main(args)
        except SystemExit as exc:
            code = exc.code
        else:
            code = 0
    else:
        code = None
    print(json.dumps({"after_import": after_import, "after_command": loaded(), "code": code}))
""")

MANIFEST = """\
version: 1
workspaces:
  portal:
    id: ws_1
    access: {users: [{email: jane@acme.com, role: owner}]}
"""


# What only a manifest with errors (the messages), one with assets (the MIME
# table) or a crash log (traceback) needs: a valid manifest without assets
# loads none of them. (tempfile and shutil are no longer imported by the CLI
# either, but pydantic's plugin discovery imports them through importlib.metadata.)
ONLY_WHEN_NEEDED = ("reconciler.manifest.messages", "mimetypes", "traceback")


def _probe(args: list[str], modules: tuple[str, ...] = HEAVY) -> dict[str, object]:
    """What the probe reports, and what the command wrote on stderr."""
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(modules), json.dumps(args)],
                          capture_output=True, text=True, check=True)
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "stderr": done.stderr}


def test_importing_the_cli_loads_none_of_the_heavy_modules() -> None:
    assert _probe([])["after_import"] == []


def test_validate_of_a_tiny_manifest_loads_none_of_the_heavy_modules(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(MANIFEST, encoding="utf-8")
    result = _probe(["validate", str(manifest)])
    assert result["code"] == 0
    assert result["after_command"] == []


def test_validate_of_a_valid_manifest_without_assets_loads_nothing_only_errors_or_assets_need(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(MANIFEST, encoding="utf-8")
    result = _probe(["validate", str(manifest)], ONLY_WHEN_NEEDED)
    assert result["code"] == 0
    assert result["after_command"] == []


def test_validate_of_a_manifest_with_an_error_loads_the_messages_and_explains_it(tmp_path: Path) -> None:
    manifest = tmp_path / "manifest.yaml"
    manifest.write_text(MANIFEST.replace("role: owner", "role: boss"), encoding="utf-8")
    result = _probe(["validate", str(manifest)], ONLY_WHEN_NEEDED)
    assert result["code"] == 1
    assert result["after_command"] == ["reconciler.manifest.messages"]
    assert "manifest.yaml:5" in str(result["stderr"]) and "boss" in str(result["stderr"])


@pytest.mark.parametrize("args", [["--help"], ["plan", "--help"], ["apply", "--help"]])
def test_help_loads_none_of_the_heavy_modules(args: list[str]) -> None:
    result = _probe(args)
    assert result["code"] == 0
    assert result["after_command"] == []
