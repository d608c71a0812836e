"""What every endpoint method does the same way: send, unwrap, validate, page."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cache
from typing import Any, Required, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, TypeAdapter, ValidationError
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict only from Python 3.12

from reconciler.api.errors import InconsistentListing, UnsafeId
from reconciler.api.limits import MAX_LISTED_ITEMS
from reconciler.api.models import PageInfo, Resource
from reconciler.api.requester import Answer, Query, Requester
from reconciler.api.responses import BodyError, JsonObject, json_object, unwrap
from reconciler.text import plural, quoted

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


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
        """Every item of a list as ``model``, page by page (``_paged``)."""
        return self._paged(path, query, lambda content: model_page(content, name, model),
                           lambda item: getattr(item, "id", None))

    def _listed(self, path: str, name: str, item: Any, query: Query) -> Iterator[Any]:
        """Every item of a list as ``item`` (a TypedDict: plain dicts), each page parsed and validated from
        its bytes in one pydantic call (``listed_page``), page by page (``_paged``)."""
        adapter, shown = _page_of(name, item), item.__name__.removeprefix("Listed")
        return self._paged(path, query, lambda content: listed_page(content, name, adapter, shown),
                           lambda entry: entry.get("id"))

    def _paged(self, path: str, query: Query, read: Callable[[bytes], tuple[list[T], PageInfo | None]],
               id_of: Callable[[T], object]) -> Iterator[T]:
        """Every item of a list, following ``page=1,2,...`` with ``limit``; ``read`` makes a page's body
        its items and ``pageInfo`` (``BodyError`` when it cannot).

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
            answer = self.requester.request_content("GET", path, query=paged)
            try:
                items, info = read(answer.content)
            except BodyError as exc:
                raise self.requester.invalid("GET", path, str(exc), status=answer.status) from None
            if page == 1:
                self.listed_total = info.total if info is not None else None
                total = info.total if info is not None else None
                pages = info.pages if info is not None else None
            listed += len(items)
            if total is not None and listed > total:
                raise self._inconsistent(path, f"page {page} brings the items to {listed}, more than the "
                                               f"{total} the first page announced in pageInfo.total")
            if listed > self.max_listed_items:
                raise self._inconsistent(path, f"it has listed more than {self.max_listed_items:,} items, the most "
                                               "reconciler follows pages for")
            for item in items:
                item_id = id_of(item)
                if isinstance(item_id, str):
                    if item_id in seen:
                        raise self._inconsistent(path, f"page {page} repeats the id {quoted(item_id)}, already "
                                                       "listed on an earlier page")
                    seen.add(item_id)
            yield from items
            if not items or info is None or not info.hasNextPage:
                return
            if pages is not None and page >= pages:
                raise self._inconsistent(path, f"page {page} says pageInfo.hasNextPage is true, but the first "
                                               f"page announced {plural(pages, 'page')} in all")
            page += 1

    def _inconsistent(self, path: str, problem: str) -> InconsistentListing:
        return InconsistentListing(method="GET", path=path, message=problem)


def model_page(content: bytes, name: str, model: type[M], shown: str = "") -> tuple[list[M], PageInfo | None]:
    """A page's items (``data.<name>``) as ``model`` and its ``pageInfo``; ``BodyError`` naming the first
    problem, an item as "a <shown>" (default: the model's name)."""
    body = json_object(content)
    items = unwrap(body, name)
    if not isinstance(items, list):
        raise BodyError(f"'data.{name}' is not a list")
    info = _page_info(body)
    return validate_all(model, items, shown), info


def listed_page(content: bytes, name: str, adapter: TypeAdapter[Any],
                shown: str) -> tuple[list[Any], PageInfo | None]:
    """A page's items (``data.<name>``) as plain dicts, parsed and validated by ``adapter`` in one call, and
    its ``pageInfo``. A body it refuses is read again the ordinary way (``model_page`` with the tolerant
    model ``Resource``), so the ``BodyError`` says what is wrong as every other listing says it: not JSON,
    no ``data.<name>`` list, no ``id``; anything else is a field of an item (``shown``: "a Workspace")."""
    try:
        page = adapter.validate_json(content)
    except ValidationError as exc:
        model_page(content, name, Resource, shown)  # raises its own BodyError for a body that is not a page
        raise _shape_error(shown, exc, 3) from None  # where in the item: after data, <name>, its index
    data = page["data"]
    raw = data.get("pageInfo")
    return data[name], None if raw is None else validate(PageInfo, raw)


def validate(model: type[M], raw: object) -> M:
    """``raw`` as ``model``; ``BodyError`` naming the first problem."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise _shape_error(model.__name__, exc, 0) from None


def validate_all(model: type[M], raw: list[object], shown: str = "") -> list[M]:
    """Each item of a page as ``model``, validated in one call (a page of 100 workspaces was 100 calls into
    pydantic, issue 40); ``BodyError`` naming the first problem as ``validate`` names it, the item's index
    left out of where."""
    try:
        return _list_of(model).validate_python(raw)
    except ValidationError as exc:
        raise _shape_error(shown or model.__name__, exc, 1) from None  # where in the item: after its index


@cache
def _list_of(model: type[M]) -> TypeAdapter[list[M]]:
    return TypeAdapter(list[model])  # type: ignore[valid-type]


@cache
def _page_of(name: str, item: Any) -> TypeAdapter[Any]:
    """``{data: {<name>: [item, ...], pageInfo?}}``, anything else in the body ignored."""
    data = TypedDict("ListedData", {name: Required[list[item]], "pageInfo": Any}, total=False)  # type: ignore[misc]
    return TypeAdapter(TypedDict("ListedPage", {"data": data}))  # type: ignore[operator]


def _shape_error(shown: str, exc: ValidationError, skip: int) -> BodyError:
    """``BodyError`` naming the first problem, where it is without its first ``skip`` steps."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"][skip:]) or "the object"
    return BodyError(f"a {shown} did not have the documented shape ({where}: {first['msg']})")


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
