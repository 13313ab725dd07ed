"""The store as a token without the `write` scope sees it: reads pass, anything else is a 403.

Deny by default: a store method is a read only if it is listed here, so a writing method
added later is refused to read tokens until someone decides otherwise.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bathtub_api.auth import scope_refusal

if TYPE_CHECKING:
    from bathtub_api.store.base import Store

READS = frozenset({
    "kind", "schema_version", "token_owner", "get_item", "list_items", "dataset_page", "dataset_all_rows",
    "get_job", "queue_position", "find_item", "owned_item", "items_created_before", "find_key", "outbox",
    "list_jobs", "dataset_rows", "dataset_snapshot", "tracking_measurements", "live_share_link", "list_share_links",
    "get_share_link",
})


class ReadOnlyStore:
    __slots__ = ("_store",)

    def __init__(self, store: Store) -> None:
        self._store = store

    def __getattr__(self, name: str) -> Any:
        if name in READS:
            return getattr(self._store, name)
        raise scope_refusal("write", "this request would store data")
