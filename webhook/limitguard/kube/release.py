"""Follow the cluster's Kubernetes release for the pod rules (``limitguard.core.podrules``).

When nothing else names the release, the apiserver's GET /version decides: read once before the first
list (so the first counts already use the cluster's rules) and again whenever the pods watch connects
or reconnects - a control-plane upgrade restarts the apiserver, which ends every watch. The release is
resolved by ``limitguard.core.kuberelease`` like everywhere else; a changed release hands its rules
to the state and relists the pods, so every pod is counted again under them. A release outside the
supported range is judged by the nearest supported one, with a warning; an unreadable answer keeps
the rules the state has.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

import aiohttp

from limitguard.core.kuberelease import KubernetesRelease, resolve_release
from limitguard.core.kubeversion import VersionError, parse_minor
from limitguard.core.podrules import rules_for
from limitguard.core.text import clip
from limitguard.state.store import ClusterState

log = logging.getLogger("limitguard.release")


class ReleaseFollower:
    """Keeps ``state``'s pod rules those of the release the cluster's /version reports."""

    def __init__(
        self, client: Any, state: ClusterState, on_change: Callable[[KubernetesRelease], None] | None = None
    ) -> None:
        self.client = client
        self.state = state
        self.on_change = on_change  # called after the rules changed (the feed relists pods)
        self.version: str | None = None  # the last gitVersion read
        self.why: str | None = None  # why the release it last resolved applies
        self._task: asyncio.Task[None] | None = None

    async def read_version(self) -> str | None:
        try:
            version = await self.client.server_version()
        except Exception as error:  # any failure: keep the rules in effect, say why
            log.warning("cannot read the cluster's /version", extra={"error": clip(str(error))})
            return None
        return version or None

    async def check(self) -> bool:
        """Read /version and hand its release's rules to the state; True when the rules changed."""
        version = await self.read_version()
        if version is None:
            return False
        try:
            parse_minor(version)
        except VersionError as error:
            log.warning("unreadable cluster version: pod rules unchanged", extra={"error": clip(str(error))})
            return False
        release, why = resolve_release(cluster=version, cluster_asked=True)
        if release.note and version != self.version:
            log.warning(release.note)
        self.version, self.why = version, why
        before = self.state.pod_rules.minor
        if release.minor == before:
            return False
        self.state.use_pod_rules(rules_for(release.minor))
        log.warning(
            f"the cluster runs Kubernetes {clip(version)}: applying the pod rules of {release.name}",
            extra={"was": f"1.{before}"},
        )
        if self.on_change is not None:
            self.on_change(release)
        return True

    def watch_connecting(self) -> None:
        """A watch is (re)connecting: check the release in the background, one check at a time."""
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self.check(), name="release-check")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


class ReconnectNotifyingClient:
    """The list/watch client of one reflector, telling a ReleaseFollower when a watch connects."""

    def __init__(self, client: Any, follower: ReleaseFollower) -> None:
        self._client = client
        self._follower = follower

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)

    def get(self, path: str, params: Mapping[str, str], timeout: aiohttp.ClientTimeout) -> Any:
        if params.get("watch"):
            self._follower.watch_connecting()
        return self._client.get(path, params, timeout)

    async def get_json(self, path: str, params: Mapping[str, str], timeout: aiohttp.ClientTimeout) -> Any:
        return await self._client.get_json(path, params, timeout)
