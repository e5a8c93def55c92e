"""Reads and patches of Node objects over the live feed's API connection (the labeller's and the
uninstall cleanup's I/O)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any
from urllib.parse import quote

import aiohttp

from limitguard.kube.client import ApiError, KubeClient

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
NODES = "/api/v1/nodes"
LIST_PAGE = 500


class NodeApi:
    """GET, list and PATCH of core/v1 nodes."""

    def __init__(self, client: KubeClient, timeout_seconds: float = 10.0) -> None:
        self.client = client
        self.timeout = aiohttp.ClientTimeout(total=timeout_seconds)

    async def get(self, name: str, *, from_cache: bool = False) -> Mapping[str, Any] | None:
        """The node, or None when it does not exist. *from_cache*: resourceVersion=0, served from the
        apiserver's watch cache (cheaper, possibly a little behind), as upstream's taint helpers read
        first; a conflict is then retried with a fresh read."""
        params = {"resourceVersion": "0"} if from_cache else None
        try:
            return await self.client.send_json("GET", self._path(name), None, self.timeout, params=params)
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    async def patch(self, name: str, body: Mapping[str, Any], patch_type: str) -> Mapping[str, Any]:
        """The node as patched; ApiError on any refusal (404 gone, 409 conflict, 422 invalid)."""
        return await self.client.send_json("PATCH", self._path(name), body, self.timeout, patch_type)

    async def pages(self) -> AsyncIterator[list[Mapping[str, Any]]]:
        """Every node, a page at a time (a consistent paginated list)."""
        token = ""
        while True:
            params = {"limit": str(LIST_PAGE), **({"continue": token} if token else {})}
            page = await self.client.get_json(NODES, params, self.timeout)
            yield list(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue") or ""
            if not token:
                return

    @staticmethod
    def _path(name: str) -> str:
        return f"{NODES}/{quote(name, safe='')}"
