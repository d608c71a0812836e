"""The floor program of ``bench.plan_floor``, a process of its own: imports only what its steps need, so
its start costs what the tool's own start cannot go under.

    python -m bench.plan_floor_child MANIFEST   # RECONCILER_BASE_URL and RECONCILER_TOKEN set
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from pathlib import Path


def child(manifest: Path) -> None:
    """The floor program: prints its wanted and differing workspaces and the CPU of each step."""
    gc.disable()  # as the tool's own load and listing pause it
    marks = [0.0]  # the process's CPU counts from its start: the interpreter's own start is in the first step
    import httpx

    from reconciler.manifest.models import ManifestSpec
    from reconciler.manifest.yaml_read import load_yaml

    marks.append(time.process_time())
    document = load_yaml(manifest.read_text(encoding="utf-8"), str(manifest)).document
    marks.append(time.process_time())
    ManifestSpec.model_validate(document)
    marks.append(time.process_time())
    pages = []
    query = [("properties[]", p) for p in ("name", "workspaceUsers.role", "workspaceUsers.user.email",
                                            "workspaceDomains.domain", "workspaceDomains.role")]
    with httpx.Client(base_url=os.environ["RECONCILER_BASE_URL"],
                      headers={"Authorization": f"Bearer {os.environ['RECONCILER_TOKEN']}"}) as http:
        page = 1
        while True:
            body = json.loads(http.get("/v1/workspaces", params=[*query, ("page", page), ("limit", 100)]).content)
            pages.append(body["data"]["workspaces"])
            if not body["data"]["pageInfo"]["hasNextPage"]:
                break
            page += 1
    marks.append(time.process_time())
    teams = document["teams"]
    ensure = document["rules"]["baseline"]["ensure"]
    ruled = {u["email"]: u["role"] for u in ensure["users"]}
    for grant in ensure["teams"]:
        ruled.update(dict.fromkeys(teams[grant["team"]], grant["role"]))
    listed = {w["id"]: w for workspaces in pages for w in workspaces}
    differ = 0
    for entry in document["workspaces"].values():
        access = entry["access"]
        users = {u["email"]: u["role"] for u in access["users"]}
        for grant in access.get("teams", ()):
            users.update(dict.fromkeys(teams[grant["team"]], grant["role"]))
        users.update(ruled)
        domains = {d["domain"]: d["role"] for d in access["domains"]}
        live = listed[entry["id"]]
        if (users != {u["user"]["email"]: u["role"] for u in live["workspaceUsers"]}
                or domains != {d["domain"]: d["role"] for d in live["workspaceDomains"]}):
            differ += 1
    marks.append(time.process_time())
    print(json.dumps({"workspaces": len(document["workspaces"]), "listed": len(listed), "differ": differ,
                      "steps": [round(b - a, 3) for a, b in zip(marks, marks[1:], strict=False)]}))



if __name__ == "__main__":
    child(Path(sys.argv[1]))
