"""Names of the kube-scheduler configuration API: defined once, imported everywhere."""

from __future__ import annotations

GROUP = "kubescheduler.config.k8s.io"
KIND = "KubeSchedulerConfiguration"

#: Configuration API versions limitguard has schemas for (newest first). Which of them a Kubernetes
#: release still serves is in ``tables.releases``.
CONFIG_VERSIONS: tuple[str, ...] = ("v1", "v1beta3", "v1beta2")


def api_version(version: str) -> str:
    """``kubescheduler.config.k8s.io/<version>``."""
    return f"{GROUP}/{version}"
