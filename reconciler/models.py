"""The base of the tool's own pydantic values: the plan, the company read,
the access report, a review's status and evidence.

Written once so that every such value is made the same way: frozen (a value,
never changed once made), no field it does not declare, and every field
written, so a JSON Schema made of it (``reconciler schema plan``, the
report's) requires them all (``kind`` above all: it tells the change kinds
apart).  The manifests' and the API's models are not values of this kind:
they validate input, and have their own bases.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", json_schema_serialization_defaults_required=True)
