"""Plan tasks, sections and pages of a workspace."""

from __future__ import annotations

from collections.abc import Sequence

from reconciler.api import properties as props
from reconciler.api.endpoints.base import EndpointBase, segment
from reconciler.api.models import WorkspacePage, WorkspacePlanTask, WorkspaceSection
from reconciler.api.properties import properties_query


class PlanItemEndpoints(EndpointBase):
    def update_workspace_plan_task(
        self, task_id: str, *, completed: bool, properties: Sequence[str] = ()
    ) -> WorkspacePlanTask:
        """Mark a plan task done or not done (PATCH /workspace-plan-tasks/{id}).

        How ``completed`` moves ``status`` is not documented; read ``status``
        back (``properties=["status", "completedAt"]``) rather than assume it.
        """
        path = f"/workspace-plan-tasks/{segment(task_id)}"
        query = properties_query(properties, props.PLAN_TASK, endpoint="PATCH /workspace-plan-tasks/{id}")
        return self._one("PATCH", path, "workspacePlanTask", WorkspacePlanTask, query=query,
                         body={"completed": completed})

    def update_workspace_section(
        self, section_id: str, *, is_hidden: bool, properties: Sequence[str] = ()
    ) -> WorkspaceSection:
        """Hide or show a workspace section (PATCH /workspace-sections/{id})."""
        path = f"/workspace-sections/{segment(section_id)}"
        query = properties_query(properties, props.SECTION, endpoint="PATCH /workspace-sections/{id}")
        return self._one("PATCH", path, "workspaceSection", WorkspaceSection, query=query,
                         body={"isHidden": is_hidden})

    def update_workspace_page(
        self, page_id: str, *, is_hidden: bool, properties: Sequence[str] = ()
    ) -> WorkspacePage:
        """Hide or show a workspace page (PATCH /workspace-pages/{id})."""
        path = f"/workspace-pages/{segment(page_id)}"
        query = properties_query(properties, props.PAGE, endpoint="PATCH /workspace-pages/{id}")
        return self._one("PATCH", path, "workspacePage", WorkspacePage, query=query, body={"isHidden": is_hidden})
