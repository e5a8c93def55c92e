"""Release ledger entries the apiserver never wrote (a later webhook or quota denied, or a forgery).

An approval holds room until the watch shows the pod bound, but the apiserver may never write it.
Validating webhooks run in parallel, so a write can land up to the slowest one's timeout after
limitguard answered: past that *horizon* nothing can write it any more. Then:

1. `fence`: a `limit=1` list of pods (a consistent read, the way client-go reads the current
   resourceVersion) returns R, a version newer than any write that could still carry the object;
   every entry past the horizon is stamped with it.
2. Once the pod watch has applied R, an entry still held was not shown bound: it goes.
3. A pod watch that is idle moves only with bookmarks (about once a minute). An entry fenced more
   than *grace* seconds ago is therefore also settled by a consistent read of its node's active
   pods (`spec.nodeName=` field selector, which the apiserver's watch cache indexes): a pod not
   listed there was not written there.

Each release is logged at warning level with the pod, node and the caller's address, and counted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp

from limitguard.clock import Clock
from limitguard.kube.client import ApiError
from limitguard.kube.listwatch import ListWatchClient, ProtocolError
from limitguard.kube.reflector import Reflector
from limitguard.state.ledger import BindingLedger, Unwritten

log = logging.getLogger(__name__)

PODS_PATH = "/api/v1/pods"
ACTIVE = "status.phase!=Succeeded,status.phase!=Failed"


class UnwrittenMetrics(Protocol):
    ledger_unwritten: Any


@dataclass(frozen=True)
class UnwrittenSettings:
    horizon_seconds: float = 10.0  # the slowest validating webhook's timeout after our answer
    interval_seconds: float = 1.0
    grace_seconds: float = 2.0  # a fence the watch has not reached by then is read per node
    nodes_per_round: int = 20  # bounds the reads one round makes, whatever the ledger holds
    timeout_seconds: float = 5.0


def _version(page: Any) -> int | None:
    metadata = page.get("metadata") if isinstance(page, Mapping) else None
    text = str(metadata.get("resourceVersion") or "") if isinstance(metadata, Mapping) else ""
    return int(text) if text.isdigit() else None  # not an etcd revision: only the TTL applies


class UnwrittenReleaser:
    def __init__(
        self,
        client: ListWatchClient,
        ledger: Callable[[], BindingLedger],  # the state's, read each round (tests replace it)
        pods: Reflector,
        clock: Clock,
        settings: UnwrittenSettings | None = None,
    ) -> None:
        self.client = client
        self._ledger = ledger
        self.pods = pods
        self.clock = clock
        self.settings = settings or UnwrittenSettings()
        self.metrics: UnwrittenMetrics | None = None
        self._timeout = aiohttp.ClientTimeout(total=self.settings.timeout_seconds)

    @property
    def ledger(self) -> BindingLedger:
        return self._ledger()

    async def run(self) -> None:
        """A round every interval; a failed read leaves the entries to the next round or the TTL."""
        while True:
            await self.clock.sleep(self.settings.interval_seconds)
            try:
                await self.round()
            except (ApiError, aiohttp.ClientError, TimeoutError, OSError, ProtocolError, ValueError) as error:
                log.info("could not check unwritten ledger entries", extra={"error": str(error)})

    async def round(self) -> list[Unwritten]:
        """Fence what passed the horizon, release what the watch or a node read shows unwritten."""
        ledger = self.ledger
        released: list[Unwritten] = []
        if not len(ledger):
            return released
        cutoff = self.clock.now() - self.settings.horizon_seconds
        if ledger.awaiting_fence(cutoff):
            version = _version(await self._list({"limit": "1"}))
            if version is not None:
                ledger.fence(cutoff, version)
        applied = self.pods.resource_version
        if applied.isdigit():
            released += self._report(ledger.release_unwritten(int(applied)), "the watch passed its fence")
        pending = ledger.fenced_before(self.clock.now() - self.settings.grace_seconds)
        for node, keys in list(pending.items())[: self.settings.nodes_per_round]:
            page = await self._list({"fieldSelector": f"spec.nodeName={node},{ACTIVE}"})
            version = _version(page)
            items = page.get("items") if isinstance(page, Mapping) else None
            if version is None or not isinstance(items, list):
                continue
            present = {_pod_key(item) for item in items if isinstance(item, Mapping)}
            released += self._report(
                ledger.release_absent(node, keys, present, version), "a read of its node did not list it"
            )
        return released

    async def _list(self, params: Mapping[str, str]) -> Any:
        return await self.client.get_json(PODS_PATH, params, self._timeout)

    def _report(self, released: list[Unwritten], how: str) -> list[Unwritten]:
        for entry in released:
            hold = "resize" if entry.resize else "binding"
            log.warning(
                "ledger entry released: the apiserver never wrote it",
                extra={
                    "pod": entry.pod_key,
                    "node": entry.node,
                    "caller": entry.caller or "unknown",
                    "hold": hold,
                    "how": how,
                },
            )
            if self.metrics is not None:
                self.metrics.ledger_unwritten.labels(hold).inc()
        return released


def _pod_key(item: Mapping[str, Any]) -> str:
    metadata = item.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    return f"{metadata.get('namespace') or ''}/{metadata.get('name') or ''}"
