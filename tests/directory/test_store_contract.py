"""scim2-server's contract of a storage (``ScimStorageContract``), run against the directory store on both
state backends: filters, sorting, paging, cursors, uniqueness, versions and copies behave as the library's
own storage does."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from scim2_models import ScimProvider
from scim2_server.testing import ScimStorageContract

from reconciler.directory.store import open_directory_store
from reconciler.directory.store_scim import DirectoryScimStorage


class TestDirectoryScimStorage(ScimStorageContract):
    @pytest.fixture
    def storage(self, state_address: str, provider: ScimProvider) -> Iterator[DirectoryScimStorage]:
        with open_directory_store(state_address) as store:
            yield DirectoryScimStorage(store, provider)
