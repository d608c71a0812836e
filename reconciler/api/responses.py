"""Reading the service's answers: JSON bodies, the error envelope, unwrapping.

Successful answers are ``{data: {<name>: ...}}``; errors are
``{error: {code, message}}``.  Anything else still yields a readable error
(``InvalidResponse``, or the status's own class with an excerpt of the body)
rather than a ``KeyError`` or a ``JSONDecodeError``.

A body is read in pieces and never beyond ``limits.MAX_BODY_BYTES``
(``read_body``); the other functions take the bytes read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from reconciler.api.limits import describe_bytes

JsonObject = dict[str, Any]

_EXCERPT_CHARS = 200


class BodyError(Exception):
    """A body that cannot be read as documented; the caller names the call."""


class BodyTooLarge(BodyError):
    """A body beyond the cap: announced so (``Content-Length``) or found so
    while reading (reading stopped there)."""

    status: int | None = None  # of the answer, set by the caller that knows it


def read_body(response: httpx.Response, *, limit: int, give_up: Callable[[], bool] = lambda: False) -> bytes:
    """The body of a streamed ``response``, read in pieces, at most ``limit``
    bytes (after any ``Content-Encoding`` is undone, so a small compressed
    body cannot unpack into a huge one).

    Raises ``BodyTooLarge`` as soon as the body is known to be larger, before
    reading it when ``Content-Length`` says so; raises ``httpx.ReadTimeout``
    when ``give_up()`` turns true between two pieces (the answer's deadline,
    for transports that do not bound their own reads by it).
    """
    announced = _content_length(response)
    if announced is not None and announced > limit and "content-encoding" not in response.headers:
        raise BodyTooLarge(f"it announces {describe_bytes(announced)} (Content-Length: {announced}), more "
                           f"than the {describe_bytes(limit)} reconciler reads of one answer; none of it was read")
    body = bytearray()
    for piece in response.iter_bytes():
        if len(body) + len(piece) > limit:
            raise BodyTooLarge(f"it is larger than the {describe_bytes(limit)} reconciler reads of one answer; "
                               f"reading stopped there")
        body += piece
        if give_up():
            raise httpx.ReadTimeout("the answer was not complete in time", request=response.request)
    return bytes(body)


def _content_length(response: httpx.Response) -> int | None:
    raw = response.headers.get("content-length", "").strip()
    return int(raw) if raw.isdigit() else None


def error_details(content: bytes) -> tuple[str | None, str]:
    """``(code, message)`` of an error answer.

    From the ``{error: {code, message}}`` envelope when the body is one;
    otherwise no code, and a message quoting the start of the body.
    """
    try:
        doc = json.loads(content) if content else None
    except (ValueError, RecursionError):
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("error"), dict):
        envelope = doc["error"]
        code = envelope.get("code")
        message = envelope.get("message")
        return (
            code if isinstance(code, str) and code else None,
            message if isinstance(message, str) and message.strip() else "(no message given)",
        )
    if not content:
        return None, "(the answer had no body)"
    return None, f"(the answer is not the documented error envelope; it begins: {excerpt(content)})"


def json_object(content: bytes) -> JsonObject:
    """The body as a JSON object; ``BodyError`` when it is not one."""
    try:
        doc = json.loads(content)
    except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested past the interpreter's limit
        raise BodyError(f"the body is not JSON; it begins: {excerpt(content)}") from None
    if not isinstance(doc, dict):
        raise BodyError(f"the body is JSON but not an object; it begins: {excerpt(content)}")
    return doc


def unwrap(doc: JsonObject, name: str) -> Any:
    """``doc["data"][name]``; ``BodyError`` naming what is missing."""
    data = doc.get("data")
    if not isinstance(data, dict):
        raise BodyError("the body has no 'data' object")
    if name not in data:
        found = ", ".join(repr(k) for k in data) or "nothing"
        raise BodyError(f"'data' has no {name!r} (it has {found})")
    return data[name]


def excerpt(content: bytes) -> str:
    """The start of the body, on one line, quoted."""
    text = " ".join(content[: _EXCERPT_CHARS * 4].decode("utf-8", "replace").split())
    if not text:
        return "''"
    return repr(text[:_EXCERPT_CHARS] + ("..." if len(text) > _EXCERPT_CHARS else ""))
