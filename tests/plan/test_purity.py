"""plan/ is pure: importing it must not pull in the HTTP client."""

import subprocess
import sys


def test_plan_package_imports_nothing_from_api() -> None:
    code = (
        "import sys, reconciler.plan;"
        "bad = sorted(m for m in sys.modules if m.startswith(('reconciler.api', 'httpx')));"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_plan_package_imports_of_the_state_only_its_model() -> None:
    """plan/ names ``reconciler.state.model`` (records, no I/O), never a backend, the journal or the lock."""
    import ast
    from pathlib import Path

    plan_dir = Path(__file__).resolve().parents[2] / "reconciler" / "plan"
    imported = set()
    for source in plan_dir.glob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("reconciler.state"):
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(a.name for a in node.names if a.name.startswith("reconciler.state"))
    assert imported == {"reconciler.state.model"}
