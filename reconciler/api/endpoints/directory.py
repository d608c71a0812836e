"""Users, custom fields and accounts: the company's reference data (read only)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Literal

from reconciler.api import properties as props
from reconciler.api.endpoints.base import EndpointBase, filter_query, segment
from reconciler.api.models import Account, CustomField, User
from reconciler.api.properties import properties_query

CustomFieldObjectType = Literal["workspace", "account", "deal"]

# The description lists an object-type filter for GET /custom-fields without
# naming its query parameter; this name is our choice.
CUSTOM_FIELD_OBJECT_TYPE_PARAM = "objectType"


class DirectoryEndpoints(EndpointBase):
    def list_users(self, *, properties: Sequence[str] = ()) -> Iterator[User]:
        """Every user of the company, page by page (GET /users).

        Only referenced by the description: the answer is taken to be
        ``{data: {users: [...], pageInfo}}`` like the other lists, and the
        ``properties`` values to be the user fields seen in answers.
        """
        query = properties_query(properties, props.USER, endpoint="GET /users")
        return self._pages("/users", "users", User, query)

    def get_custom_field(self, custom_field_id: str, *, properties: Sequence[str] = ()) -> CustomField:
        """One custom field (GET /custom-fields/{id})."""
        path = f"/custom-fields/{segment(custom_field_id)}"
        query = properties_query(properties, props.CUSTOM_FIELD, endpoint="GET /custom-fields/{id}")
        return self._one("GET", path, "customField", CustomField, query=query)

    def list_custom_fields(
        self, *, object_type: CustomFieldObjectType | None = None, properties: Sequence[str] = ()
    ) -> Iterator[CustomField]:
        """Every custom field, optionally of one object type, page by page
        (GET /custom-fields).

        The object-type filter's parameter name is not shown; it is sent as
        ``objectType=<workspace|account|deal>``.
        """
        query = properties_query(properties, props.CUSTOM_FIELD, endpoint="GET /custom-fields")
        if object_type is not None:
            if object_type not in ("workspace", "account", "deal"):
                raise ValueError(f"object_type must be workspace, account or deal, not {object_type!r}")
            query.append((CUSTOM_FIELD_OBJECT_TYPE_PARAM, object_type))
        return self._pages("/custom-fields", "customFields", CustomField, query)

    def list_accounts(
        self, *, properties: Sequence[str] = (), filter: Mapping[str, str] | None = None
    ) -> Iterator[Account]:
        """Every account, page by page (GET /accounts).

        ``filter`` is sent as ``filter[key]=value`` (its attributes and
        encoding are not shown).
        """
        query = [*properties_query(properties, props.ACCOUNT, endpoint="GET /accounts"), *filter_query(filter)]
        return self._pages("/accounts", "accounts", Account, query)
