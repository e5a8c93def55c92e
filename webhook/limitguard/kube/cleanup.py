"""Uninstall: every limit-room label and limit-full taint off every node, and the leader's Lease gone.

`helm uninstall` deletes the Deployment and its RBAC, then runs this as a post-delete hook with RBAC
of its own. A server pod still terminating could be the leader for a moment longer, so when told the
Lease, the cleanup first waits until nobody holds it (released, or not renewed for its duration, by
this process's own observation as in client-go), then cleans, then deletes the Lease. Each node is
one write through the one queue of cluster writes, under the same rate limit as the server's: a
strategic merge patch that removes limitguard's labels and, when the node carries the taint, replaces
`spec.taints` without it under the node's resourceVersion (409: read again).
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from functools import partial
from typing import Any

from limitguard.clock import Clock
from limitguard.core.roomlabels import has_full_taint, own_labels, taints_with
from limitguard.kube.client import ApiError
from limitguard.kube.leader import Observation, lease_valid, record_from_lease, resource_version
from limitguard.kube.leaseapi import KubeLeaseApi
from limitguard.kube.nodeapi import STRATEGIC_MERGE_PATCH, NodeApi
from limitguard.kube.writes import ClusterWrites, Outcome, Permit

log = logging.getLogger(__name__)

CLEANUP = "node-cleanup"  # the kind of write, as the metrics and the summary name it
ATTEMPTS = 3
POLL_SECONDS = 1.0


def carries_ours(node: Mapping[str, Any]) -> bool:
    labels = (node.get("metadata") or {}).get("labels") or {}
    return bool(own_labels(labels)) or has_full_taint((node.get("spec") or {}).get("taints") or [])


def clearing_patch(node: Mapping[str, Any]) -> dict[str, Any] | None:
    """The patch that takes limitguard's labels and taint off *node*; None when it carries neither."""
    metadata = node.get("metadata") or {}
    patch: dict[str, Any] = {}
    labels = own_labels(metadata.get("labels") or {})
    if labels:
        patch["metadata"] = {"labels": dict.fromkeys(labels)}
    taints = [taint for taint in (node.get("spec") or {}).get("taints") or () if isinstance(taint, dict)]
    remaining = taints_with(taints, False)
    if remaining is not None:
        patch.setdefault("metadata", {})["resourceVersion"] = str(metadata.get("resourceVersion") or "")
        patch["spec"] = {"taints": remaining}
    return patch or None


async def clear_node(nodes: NodeApi, name: str, permit: Permit) -> Outcome:
    for attempt in range(ATTEMPTS):
        node = await nodes.get(name, from_cache=attempt == 0)
        if node is None:
            return Outcome.GONE
        patch = clearing_patch(node)
        if patch is None:
            return Outcome.UNCHANGED
        await permit()
        try:
            await nodes.patch(name, patch, STRATEGIC_MERGE_PATCH)
        except ApiError as error:
            if error.status == 409:
                continue
            if error.status == 404:
                return Outcome.GONE
            log.warning("cannot clean node", extra={"node": name, "error": str(error)})
            return Outcome.FAILED
        return Outcome.WRITTEN
    return Outcome.CONFLICT


async def wait_until_released(lease: KubeLeaseApi, clock: Clock, limit_seconds: float) -> bool:
    """Until nobody holds the Lease (or there is none); False when *limit_seconds* passed first."""
    deadline = clock.now() + limit_seconds
    observed: Observation | None = None
    while True:
        found = await lease.get()
        now = clock.now()
        if found is None:
            return True
        version = resource_version(found)
        if observed is None or observed.resource_version != version:
            observed = Observation(record_from_lease(found), version, now)
        if not lease_valid(observed, now):
            return True
        if now >= deadline:
            return False
        await clock.sleep(POLL_SECONDS)


async def clean_nodes(
    nodes: NodeApi, writes: ClusterWrites, passes: int = ATTEMPTS
) -> tuple[Counter[str], int]:
    """Every node that carries limitguard's labels or taint, cleaned: the outcomes by name, and how
    many nodes still carry them after *passes* lists (a write refused on one pass is tried again on
    the next; the queue's own delayed retries are not waited for)."""
    remaining = 0
    for _ in range(passes):
        remaining = 0
        async for page in nodes.pages():
            for node in page:
                if carries_ours(node):
                    remaining += 1
                    name = str((node.get("metadata") or {}).get("name") or "")
                    writes.submit(CLEANUP, name, partial(clear_node, nodes, name))
            await writes.drain()
        writes.clear()
        if not remaining:
            break
    else:
        remaining = sum([1 async for page in nodes.pages() for node in page if carries_ours(node)])
    outcomes = Counter(
        {outcome.value: n for (kind, outcome), n in writes.outcomes.items() if kind == CLEANUP}
    )
    return outcomes, remaining
