"""Reading and writing policy reports and events over the apiserver's REST paths.

Discovery answers whether the report API is served at all: `GET /apis/<group>/<version>` is 404 while
its CRDs are not installed (as client-go's `ServerResourcesForGroupVersion` finds out), and the
resource list must name both kinds. Reports are listed by limitguard's own label only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import aiohttp

from limitguard.core.reports.policyreport import MANAGED_BY_LABEL, SOURCE, ReportApi
from limitguard.kube.client import ApiError

TIMEOUT = aiohttp.ClientTimeout(total=10.0)
LIST_PAGE = 500
EVENTS_PATH = "/apis/events.k8s.io/v1/namespaces/{namespace}/events"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"

ReportKey = tuple[str, str, str]  # (plural, namespace or "", name)


class JsonClient(Protocol):
    """What the report and event writers need of limitguard.kube.client.KubeClient."""

    async def get_json(self, path: str, params: Mapping[str, str], timeout: aiohttp.ClientTimeout) -> Any: ...

    async def send_json(
        self, method: str, path: str, body: Any, timeout: aiohttp.ClientTimeout, content_type: str = ...
    ) -> Any: ...


def report_key(api: ReportApi, report: Mapping[str, Any]) -> ReportKey:
    metadata = report.get("metadata") or {}
    namespace = str(metadata.get("namespace") or "")
    return (api.plural(bool(namespace)), namespace, str(metadata.get("name") or ""))


def report_path(api: ReportApi, key: ReportKey, *, with_name: bool = True) -> str:
    plural, namespace, name = key
    where = f"/namespaces/{namespace}" if namespace else ""
    collection = f"/apis/{api.group}/{api.version}{where}/{plural}"
    return f"{collection}/{name}" if with_name else collection


class ReportRest:
    """The report kinds of one API through one client."""

    def __init__(self, client: JsonClient, api: ReportApi) -> None:
        self.client = client
        self.api = api

    async def served(self) -> bool:
        """True when both kinds are served; False on 404 (the CRDs are absent). Other errors raise."""
        try:
            listing = await self.client.get_json(f"/apis/{self.api.group}/{self.api.version}", {}, TIMEOUT)
        except ApiError as error:
            if error.status == 404:
                return False
            raise
        resources = listing.get("resources") if isinstance(listing, Mapping) else None
        names = {r.get("name") for r in resources or () if isinstance(r, Mapping)}
        return {self.api.namespaced_plural, self.api.cluster_plural} <= names

    async def list_own(self) -> list[dict[str, Any]]:
        """Every report limitguard wrote (both kinds, every namespace), page by page."""
        found: list[dict[str, Any]] = []
        for plural in (self.api.cluster_plural, self.api.namespaced_plural):
            path = f"/apis/{self.api.group}/{self.api.version}/{plural}"
            token = ""
            while True:
                params = {"labelSelector": f"{MANAGED_BY_LABEL}={SOURCE}", "limit": str(LIST_PAGE)}
                if token:
                    params["continue"] = token
                page = await self.client.get_json(path, params, TIMEOUT)
                items = page.get("items") if isinstance(page, Mapping) else None
                found += [item for item in items or () if isinstance(item, dict)]
                token = str(
                    ((page.get("metadata") or {}) if isinstance(page, Mapping) else {}).get("continue") or ""
                )
                if not token:
                    break
        return found

    async def get(self, key: ReportKey) -> dict[str, Any] | None:
        try:
            return await self.client.send_json("GET", report_path(self.api, key), None, TIMEOUT)
        except ApiError as error:
            if error.status == 404:
                return None
            raise

    async def create(self, key: ReportKey, report: Mapping[str, Any]) -> dict[str, Any]:
        return await self.client.send_json(
            "POST", report_path(self.api, key, with_name=False), report, TIMEOUT
        )

    async def replace(self, key: ReportKey, report: Mapping[str, Any]) -> dict[str, Any]:
        return await self.client.send_json("PUT", report_path(self.api, key), report, TIMEOUT)

    async def delete(self, key: ReportKey) -> None:
        await self.client.send_json("DELETE", report_path(self.api, key), None, TIMEOUT)


class EventRest:
    def __init__(self, client: JsonClient) -> None:
        self.client = client

    async def create(self, event: Mapping[str, Any]) -> dict[str, Any]:
        namespace = event["metadata"]["namespace"]
        return await self.client.send_json("POST", EVENTS_PATH.format(namespace=namespace), event, TIMEOUT)

    async def patch(self, namespace: str, name: str, patch: Mapping[str, Any]) -> dict[str, Any]:
        path = EVENTS_PATH.format(namespace=namespace) + f"/{name}"
        return await self.client.send_json("PATCH", path, patch, TIMEOUT, STRATEGIC_MERGE_PATCH)
