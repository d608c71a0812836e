"""What every endpoint method does the same way: send, unwrap, validate, page."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import cache
from typing import TypeVar
from urllib.parse import quote

from pydantic import BaseModel, TypeAdapter, ValidationError

from reconciler.api.errors import InconsistentListing, UnsafeId
from reconciler.api.limits import MAX_LISTED_ITEMS
from reconciler.api.models import PageInfo
from reconciler.api.requester import Answer, Query, Requester
from reconciler.api.responses import BodyError, JsonObject, unwrap
from reconciler.text import plural, quoted

M = TypeVar("M", bound=BaseModel)


class EndpointBase:
    """Plumbing shared by the endpoint mixins; ``WorkspaceClient`` sets the
    two attributes."""

    requester: Requester
    page_size: int
    # pageInfo.total of the last list started: how many items there are in
    # all, known from its first page (None when the service did not say).
    listed_total: int | None = None
    # The most items one listing follows pages for (limits.py); an attribute
    # so that a test can lower it.
    max_listed_items: int = MAX_LISTED_ITEMS

    def _one(self, method: str, path: str, name: str, model: type[M], *, query: Query = (),
             body: JsonObject | None = None) -> M:
        """Send one call and return ``data[name]`` as ``model``."""
        answer = self.requester.request(method, path, query=query, body=body)
        return self._read(answer, method, path, name, model)

    def _read(self, answer: Answer, method: str, path: str, name: str, model: type[M]) -> M:
        try:
            return validate(model, unwrap(answer.body, name))
        except BodyError as exc:
            raise self.requester.invalid(method, path, str(exc), status=answer.status) from None

    def _pages(self, path: str, name: str, model: type[M], query: Query) -> Iterator[M]:
        """Every item of a list, following ``page=1,2,...`` with ``limit``.

        Stops when ``pageInfo.hasNextPage`` is false, on an empty page, or
        when ``pageInfo`` is missing (following pages blindly could loop
        forever on a service that ignores ``page``).  Each page is requested
        only when the caller has consumed the one before.

        The pages must add up, or the listing stops with
        ``InconsistentListing`` naming the endpoint: no id may come twice,
        there may be no more items than the first page's ``pageInfo.total``
        and no page after its ``pageInfo.pages``, and never more than
        ``MAX_LISTED_ITEMS`` in all; so no service can make it endless.
        """
        page = 1
        seen: set[str] = set()
        listed = 0
        total: int | None = None
        pages: int | None = None
        while True:
            paged = [*query, ("page", str(page)), ("limit", str(self.page_size))]
            answer = self.requester.request("GET", path, query=paged)
            try:
                items = unwrap(answer.body, name)
                if not isinstance(items, list):
                    raise BodyError(f"'data.{name}' is not a list")
                info = _page_info(answer.body)
                models = validate_all(model, items)
            except BodyError as exc:
                raise self.requester.invalid("GET", path, str(exc), status=answer.status) from None
            if page == 1:
                self.listed_total = info.total if info is not None else None
                total = info.total if info is not None else None
                pages = info.pages if info is not None else None
            listed += len(models)
            if total is not None and listed > total:
                raise self._inconsistent(path, f"page {page} brings the items to {listed}, more than the "
                                               f"{total} the first page announced in pageInfo.total")
            if listed > self.max_listed_items:
                raise self._inconsistent(path, f"it has listed more than {self.max_listed_items:,} items, the most "
                                               "reconciler follows pages for")
            for item in models:
                item_id = getattr(item, "id", None)
                if isinstance(item_id, str):
                    if item_id in seen:
                        raise self._inconsistent(path, f"page {page} repeats the id {quoted(item_id)}, already "
                                                       "listed on an earlier page")
                    seen.add(item_id)
            yield from models
            if not items or info is None or not info.hasNextPage:
                return
            if pages is not None and page >= pages:
                raise self._inconsistent(path, f"page {page} says pageInfo.hasNextPage is true, but the first "
                                               f"page announced {plural(pages, 'page')} in all")
            page += 1

    def _inconsistent(self, path: str, problem: str) -> InconsistentListing:
        return InconsistentListing(method="GET", path=path, message=problem)


def validate(model: type[M], raw: object) -> M:
    """``raw`` as ``model``; ``BodyError`` naming the first problem."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise _shape_error(model, exc, ()) from None


def validate_all(model: type[M], raw: list[object]) -> list[M]:
    """Each item of a page as ``model``, validated in one call (a page of 100 workspaces was 100 calls into
    pydantic, issue 40); ``BodyError`` naming the first problem as ``validate`` names it, the item's index
    left out of where."""
    try:
        return _list_of(model).validate_python(raw)
    except ValidationError as exc:
        raise _shape_error(model, exc, (0,)) from None


@cache
def _list_of(model: type[M]) -> TypeAdapter[list[M]]:
    return TypeAdapter(list[model])  # type: ignore[valid-type]


def _shape_error(model: type[BaseModel], exc: ValidationError, index: tuple[int, ...]) -> BodyError:
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"][len(index):]) or "the object"
    return BodyError(f"a {model.__name__} did not have the documented shape ({where}: {first['msg']})")


def segment(resource_id: str) -> str:
    """``resource_id`` percent-encoded as one path segment: a ``/``, ``?``,
    ``#`` or ``%`` in it cannot end the segment or the path.

    ``.`` and ``..`` are refused (``UnsafeId``, a ``ValueError``): they would
    stay dot segments whether encoded or not (servers decode ``%2E``), and
    URL rules resolve them to another path.  An empty id is a ``ValueError``.
    """
    if not resource_id:
        raise ValueError("a resource id must not be empty")
    if resource_id in (".", ".."):
        raise UnsafeId(f"The id {resource_id!r} cannot be put into a request path: as a path segment it means "
                       "'this folder' or 'the folder above', and the call would go to another address. "
                       "Nothing was sent; no real id of the service is '.' or '..'.")
    return quote(resource_id, safe="")


def filter_query(filter: Mapping[str, str] | None) -> list[tuple[str, str]]:
    """A ``filter`` object as ``filter[key]=value`` query keys.

    The description gives ``filter`` the type "object" and shows neither its
    attributes nor its encoding; brackets are the usual encoding of an object
    in a query string (as ``properties[]`` is of an array).
    """
    return [(f"filter[{key}]", value) for key, value in (filter or {}).items()]


def _page_info(body: JsonObject) -> PageInfo | None:
    raw = body.get("data", {}).get("pageInfo")
    return None if raw is None else validate(PageInfo, raw)
