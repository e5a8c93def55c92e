"""The one Lease limitguard writes, over the live feed's API connection (the I/O half of leader.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import aiohttp

from limitguard.kube.client import ApiError, KubeClient


class KubeLeaseApi:
    """GET/POST/PUT of coordination.k8s.io/v1 leases/{name} in one namespace."""

    def __init__(self, client: KubeClient, namespace: str, name: str, timeout_seconds: float) -> None:
        self.client = client
        self.collection = f"/apis/coordination.k8s.io/v1/namespaces/{quote(namespace)}/leases"
        self.path = f"{self.collection}/{quote(name)}"
        # A lease call must never outlive the renew loop's period: the leader's own clock bounds
        # its leadership anyway, and a stuck request must not delay the next attempt.
        self.timeout = aiohttp.ClientTimeout(total=timeout_seconds)

    async def get(self) -> Mapping[str, Any] | None:
        try:
            return await self.client.send_json("GET", self.path, None, self.timeout)
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    async def create(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        return await self.client.send_json("POST", self.collection, obj, self.timeout)

    async def update(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        return await self.client.send_json("PUT", self.path, obj, self.timeout)

    async def delete(self) -> bool:
        """Delete the Lease (uninstall); False when there was none."""
        try:
            await self.client.send_json("DELETE", self.path, None, self.timeout)
        except ApiError as error:
            if error.status == 404:
                return False
            raise
        return True
