"""What Microsoft Entra ID sends that RFC 7644 does not say, read as what it means, before scim2-server reads it.

Entra's provisioning service is the most common identity provider after
Okta, and three of its request shapes are refused by a strict reading of the
RFC.  Refusing them is not safe: the third would keep every removal from a
group out of the directory, so a person taken out of a team would keep the
team's access.  Each is rewritten into the RFC's own form:

1. A ``schemas`` list naming Entra's own schema
   (``http://schemas.microsoft.com/2006/11/ResourceManagement/ADSCIM/2.0/Group``,
   and any other URN) with no attribute under it, beside a core schema: the
   empty extension is dropped.  An unknown URN that does carry attributes is left alone, so it
   is still refused.
2. The enterprise ``manager`` set to a bare id (``"value": "<id>"``): read as
   ``{"value": "<id>"}``, the complex attribute RFC 7643 §4.3 defines.
3. ``Remove`` on ``members`` with a list of members as its value (Entra's
   default unless the tenant's ``aadOptscim062020`` flag is set): one
   ``remove`` per member, with the path ``members[value eq "<id>"]`` the RFC
   uses to select them.

Anything that is not JSON, or not of these shapes, is passed on untouched,
for scim2-server to accept or refuse as it does.
"""

from __future__ import annotations

import json
from typing import Any

ENTERPRISE_MANAGER = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager"
_PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
# The core schemas are never dropped, whatever the body holds.
_CORE = ("urn:ietf:params:scim:schemas:core:", "urn:ietf:params:scim:api:messages:")


def entra_compatible(method: str, body: bytes) -> bytes:
    """``body`` with Entra's shapes (the module's docstring) in the RFC's form; the same bytes otherwise."""
    if method.upper() not in ("POST", "PUT", "PATCH") or not body:
        return body
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return body
    if not isinstance(document, dict):
        return body
    changed = _without_empty_extensions(document)
    if method.upper() == "PATCH":
        changed = _patch_in_rfc_form(document) or changed
    return json.dumps(document).encode("utf-8") if changed else body


def _without_empty_extensions(document: dict[str, Any]) -> bool:
    schemas = document.get("schemas")
    # Only beside a core schema: a body naming none is refused as it is, not made into one that names nothing.
    if not isinstance(schemas, list) or not any(isinstance(s, str) and s.startswith(_CORE) for s in schemas):
        return False
    kept = [s for s in schemas if not isinstance(s, str) or s.startswith(_CORE) or s in document]
    if len(kept) == len(schemas):
        return False
    document["schemas"] = kept
    return True


def _patch_in_rfc_form(document: dict[str, Any]) -> bool:
    operations = document.get("Operations")
    if _PATCH_OP not in (document.get("schemas") or ()) or not isinstance(operations, list):
        return False
    rewritten: list[Any] = []
    changed = False
    for operation in operations:
        replaced = _operation_in_rfc_form(operation) if isinstance(operation, dict) else None
        if replaced is None:
            rewritten.append(operation)
        else:
            rewritten.extend(replaced)
            changed = True
    document["Operations"] = rewritten
    return changed


def _operation_in_rfc_form(operation: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The operations ``operation`` means, when it is one of Entra's shapes; None when it is not."""
    op = str(operation.get("op", "")).lower()
    path = operation.get("path")
    value = operation.get("value")
    if op in ("add", "replace") and isinstance(path, str) and path.lower() == ENTERPRISE_MANAGER.lower() \
            and isinstance(value, str):
        return [{**operation, "value": {"value": value}}]
    if op == "remove" and isinstance(path, str) and path.lower() == "members" and isinstance(value, list) \
            and value and all(isinstance(m, dict) and isinstance(m.get("value"), str) for m in value):
        return [{"op": "remove", "path": f'members[value eq {json.dumps(m["value"])}]'} for m in value]
    return None
