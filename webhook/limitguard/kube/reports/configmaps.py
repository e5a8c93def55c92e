"""The scheduler ConfigMaps the leader reports on: list/watch of a few namespaces, not of the cluster.

Every ConfigMap of the cluster would cost memory and the right to read all of them (kube-system's
included); scheduler configurations live where their schedulers run (koordinator-system, the
scheduler-plugins namespace, the chart's second scheduler in its release namespace). So only the
namespaces of `reports.schedulerConfigNamespaces` are watched, one reflector each, with RBAC for
those namespaces only, and only the ConfigMaps whose data mentions KubeSchedulerConfiguration (the
validator's own test) are kept, whole, so that a release change can judge them again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

from limitguard.clock import Clock
from limitguard.kube.listwatch import KindSink, ListWatchClient, ReflectorSettings
from limitguard.kube.reflector import Reflector

SCHEDULER_CONFIG_KIND = "KubeSchedulerConfiguration"


def holds_scheduler_config(configmap: Mapping[str, Any]) -> bool:
    data = configmap.get("data")
    return isinstance(data, Mapping) and any(
        isinstance(v, str) and SCHEDULER_CONFIG_KIND in v for v in data.values()
    )


def _key(configmap: Mapping[str, Any]) -> str:
    metadata = configmap.get("metadata") if isinstance(configmap.get("metadata"), Mapping) else {}
    return f"{metadata.get('namespace') or ''}/{metadata.get('name') or ''}"


class SchedulerConfigMaps:
    """namespace/name -> the ConfigMap, for those that hold a scheduler configuration."""

    def __init__(self, namespaces: Iterable[str]) -> None:
        self.namespaces = tuple(namespaces)
        self.objects: dict[str, Mapping[str, Any]] = {}
        self._uids: dict[str, str] = {}  # every ConfigMap of the namespaces: is a report's owner still there?
        self._synced: set[str] = set()

    @property
    def synced(self) -> bool:
        """Every namespace was listed once: a ConfigMap missing now is really gone."""
        return self._synced.issuperset(self.namespaces)

    def get(self, key: str) -> Mapping[str, Any] | None:
        return self.objects.get(key)

    def exists(self, key: str, uid: str) -> bool:
        """Whether the ConfigMap *key* with *uid* is there, holding a scheduler configuration or not."""
        return key in self._uids and (not uid or self._uids[key] == uid)

    def _drop(self, key: str) -> None:
        self.objects.pop(key, None)
        self._uids.pop(key, None)

    def sink(self, namespace: str) -> KindSink:
        def upsert(obj: Mapping[str, Any]) -> str:
            key = _key(obj)
            metadata = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
            self._uids[key] = str(metadata.get("uid") or "")
            if holds_scheduler_config(obj):
                self.objects[key] = obj
            else:
                self.objects.pop(key, None)
            return key

        def mark(synced: bool) -> None:
            if synced:
                self._synced.add(namespace)

        prefix = f"{namespace}/"
        return KindSink(
            upsert=upsert,
            delete=lambda obj: self._drop(_key(obj)),
            held_keys=lambda: {key for key in self._uids if key.startswith(prefix)},
            remove=self._drop,
            mark_synced=mark,
        )

    def reflectors(
        self, client: ListWatchClient, clock: Clock, settings: ReflectorSettings | None = None
    ) -> list[Reflector]:
        return [
            Reflector(
                client,
                "configmaps",
                f"/api/v1/namespaces/{namespace}/configmaps",
                self.sink(namespace),
                settings=settings,
                clock=clock,
            )
            for namespace in self.namespaces
        ]

    async def run(
        self, client: ListWatchClient, clock: Clock, settings: ReflectorSettings | None = None
    ) -> None:
        """List and watch every namespace until cancelled."""
        tasks = [
            asyncio.create_task(r.run(), name=f"reflector-configmaps-{r.path}")
            for r in self.reflectors(client, clock, settings)
        ]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
