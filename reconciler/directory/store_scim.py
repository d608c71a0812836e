"""The directory store as scim2-server's storage: what ``directory serve`` reads and writes through.

scim2-server's own ``InMemoryStorage`` does the SCIM work of a storage (filters, sorting, paging,
cursors, uniqueness of ``userName`` and the like, version checks, copies), and passes its
``ScimStorageContract``: rather than translate filters by hand, every call runs on an
``InMemoryStorage`` holding the stored document, and a write hands what changed to
``DirectoryStore.change`` (under the store's exclusive lock, the document read afresh), which keeps
the deactivation days and tombstones. The ``InMemoryStorage`` is kept between calls while the
document's serial is unchanged, so a call pays for the models again only after a write (from this
process or another one).

A resource's ``meta.version`` is the serial of the write that changed it (``W/"12"``): unique across
processes and restarts, unlike a counter in memory. A user's ``password`` is never stored.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any, TypeVar, cast

from scim2_models import Resource, ResourceType, ResponseParameters, SCIMException, ScimProvider, SearchRequest
from scim2_server.memory import InMemoryStorage
from scim2_server.storage import AsyncScimStorage, ScimStorage, SearchPage, search_page

from reconciler.directory.store import DirectoryStore
from reconciler.directory.store_document import GROUP, USER, DirectoryDocument

T = TypeVar("T")


class _Memory(InMemoryStorage):
    """An ``InMemoryStorage`` whose writes take the version of the store's write in progress."""

    pending_version = 'W/"0"'
    # Whether a write began changing the memory (every change of a resource takes a version first; a delete
    # checks the version before removing): a write refused before that leaves the memory as it was.
    touched = False

    def next_version(self) -> str:
        self.touched = True
        return self.pending_version


class DirectoryScimStorage(ScimStorage):
    """scim2-server's storage over a ``DirectoryStore`` (the module's docstring)."""

    supports_cursors = True

    def __init__(self, store: DirectoryStore, provider: ScimProvider) -> None:
        self.store = store
        self.provider = provider
        self._types = {rt.name: rt for rt in provider.resource_types}
        self._memory: _Memory | None = None
        self._serial = -1
        # The cached InMemoryStorage is used and changed by one call at a time.
        self._lock = threading.Lock()

    # -- reads -------------------------------------------------------------------------------

    def get(self, resource_type: ResourceType, resource_id: str, *,
            response_parameters: ResponseParameters[Any] | None = None) -> Resource[Any]:
        return self._reading(lambda memory: memory.get(resource_type, resource_id))

    def search(self, resource_types: list[ResourceType], search_request: SearchRequest[Any], *,
               position: Any = None) -> SearchPage:
        return self._reading(lambda memory: search_page(memory, resource_types, search_request, position))

    # -- writes ------------------------------------------------------------------------------

    def create(self, resource_type: ResourceType, resource: Resource[Any]) -> Resource[Any]:
        def write(memory: _Memory, document: DirectoryDocument) -> Resource[Any]:
            created = memory.create(resource_type, _without_password(resource))
            document.put(str(resource_type.name), created.model_dump(), today=self.store.today())
            return created

        return self._changing(write)

    def update(self, resource_type: ResourceType, resource: Resource[Any], *,
               expected_version: str | None = None) -> Resource[Any]:
        def write(memory: _Memory, document: DirectoryDocument) -> Resource[Any]:
            updated = memory.update(resource_type, _without_password(resource), expected_version=expected_version)
            document.put(str(resource_type.name), updated.model_dump(), today=self.store.today())
            return updated

        return self._changing(write)

    def delete(self, resource_type: ResourceType, resource_id: str, *, expected_version: str | None = None) -> None:
        def write(memory: _Memory, document: DirectoryDocument) -> None:
            memory.delete(resource_type, resource_id, expected_version=expected_version)
            memory.touched = True
            document.remove(str(resource_type.name), resource_id, today=self.store.today())
            if resource_type.name == USER:
                self._leave_groups(memory, document, resource_id)

        self._changing(write)

    def _leave_groups(self, memory: _Memory, document: DirectoryDocument, user_id: str) -> None:
        """A deleted user is no member of any group any more (RFC 7644 §3.6 leaves it to the provider;
        a member left behind would be a dangling reference in every read of the group)."""
        group_type = self._types[GROUP]
        for group_id, group in list(document.groups.items()):
            members = group.get("members") or []
            kept = [m for m in members if not (isinstance(m, dict) and m.get("value") == user_id)]
            if len(kept) == len(members):
                continue
            stored = memory.get(group_type, group_id)
            stored.members = [m for m in stored.members or [] if m.value != user_id]  # type: ignore[attr-defined]
            updated = memory.update(group_type, stored)
            document.put(GROUP, updated.model_dump(), today=self.store.today())

    # -- the cached InMemoryStorage ----------------------------------------------------------

    def _reading(self, call: Callable[[_Memory], T]) -> T:
        document = self.store.read()
        with self._lock:
            return call(self._memory_of(document))

    def _changing(self, call: Callable[[_Memory, DirectoryDocument], T]) -> T:
        with self._lock:
            read: list[int] = []

            def edit(document: DirectoryDocument) -> T:
                memory = self._memory_of(document)
                self._serial = -1  # the memory is the new document only once that is written
                read.append(document.serial)
                memory.pending_version, memory.touched = f'W/"{document.serial + 1}"', False
                return call(memory, document)

            try:
                result = self.store.change(edit)
            except SCIMException:
                # Refused by the memory before it changed anything (a lost version race, a taken userName):
                # it is still the document it was built from, and the retry that usually follows reuses it.
                if read and self._memory is not None and not self._memory.touched:
                    self._serial = read[-1]
                else:
                    self._memory = None
                raise
            except BaseException:
                self._memory = None  # it may hold what was not written
                raise
            self._serial = read[-1] + 1
            return result

    def _memory_of(self, document: DirectoryDocument) -> _Memory:
        if self._memory is not None and self._serial == document.serial:
            return self._memory
        memory = _Memory(clock=self.store.now)
        memory.resources = [self._model(USER, r) for r in document.users.values()] + [
            self._model(GROUP, r) for r in document.groups.values()]
        self._memory, self._serial = memory, document.serial
        return memory

    def _model(self, kind: str, resource: dict[str, Any]) -> Resource[Any]:
        model = cast(type[Resource[Any]], self.provider.model_for(self._types[kind]))
        return model.model_validate(resource)


def _without_password(resource: Resource[Any]) -> Resource[Any]:
    if getattr(resource, "password", None) is None:
        return resource
    return resource.model_copy(update={"password": None})


class AsyncDirectoryScimStorage(AsyncScimStorage):
    """``DirectoryScimStorage`` for the ASGI server: each call in a worker thread, so a write waiting for the
    lock (another process's write) or for the disk never stalls the server's other requests."""

    supports_cursors = True

    def __init__(self, storage: DirectoryScimStorage) -> None:
        self.storage = storage

    async def get(self, resource_type: ResourceType, resource_id: str, *,
                  response_parameters: ResponseParameters[Any] | None = None) -> Resource[Any]:
        return await asyncio.to_thread(self.storage.get, resource_type, resource_id)

    async def search(self, resource_types: list[ResourceType], search_request: SearchRequest[Any], *,
                     position: Any = None) -> SearchPage:
        return await asyncio.to_thread(self.storage.search, resource_types, search_request, position=position)

    async def create(self, resource_type: ResourceType, resource: Resource[Any]) -> Resource[Any]:
        return await asyncio.to_thread(self.storage.create, resource_type, resource)

    async def update(self, resource_type: ResourceType, resource: Resource[Any], *,
                     expected_version: str | None = None) -> Resource[Any]:
        return await asyncio.to_thread(self.storage.update, resource_type, resource,
                                       expected_version=expected_version)

    async def delete(self, resource_type: ResourceType, resource_id: str, *,
                     expected_version: str | None = None) -> None:
        await asyncio.to_thread(self.storage.delete, resource_type, resource_id, expected_version=expected_version)
