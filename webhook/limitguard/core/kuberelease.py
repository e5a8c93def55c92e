"""Which Kubernetes release applies, and why: the one resolver every command and the server use.

A release is named, first to last: by the scheduler build that reads a configuration (koord-scheduler
v1.8.0 is built on Kubernetes 1.35 whatever the cluster runs), by a command-line flag, by a field of
the configuration file, by the cluster's ``/version``; else the newest supported release applies.
The answer says where it came from in words a user can act on: a flag is credited to the flag, a
file's value to the file and its field, ``/version`` to the cluster.

A server keeps answering, so a release outside the supported range is judged as the nearest
supported one and ``KubernetesRelease.note`` says so; a command refuses such a value where it reads
it (``limitguard.core.kubeversion.supported_minor``) before asking here. Pure: the cluster's version
is read by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass

from limitguard.core.kubeversion import (
    DEFAULT_MINOR,
    NEWEST_MINOR,
    OLDEST_MINOR,
    VersionError,
    clamped_minor,
)


@dataclass(frozen=True, slots=True)
class KubernetesRelease:
    """A supported Kubernetes minor, and why it is not the one named when it differs (``note``)."""

    minor: int = DEFAULT_MINOR
    note: str | None = None

    @property
    def name(self) -> str:
        return f"1.{self.minor}"


@dataclass(frozen=True, slots=True)
class Named:
    """A release as one source names it: the version text, and the words that credit that source."""

    text: str
    credit: str


def from_flag(flag: str, text: str | None) -> Named | None:
    """A command-line flag's value (``--kubernetes-version v1.36.2``); None when not given."""
    return Named(text, f"{flag} {text}") if text else None


def from_file(field: str, text: str | None, path: str | None = None) -> Named | None:
    """A configuration file's field (``kubernetesVersion 'v1.36.2' configured in config.yaml``)."""
    where = path or "the configuration file"
    return Named(text, f"{field} {text!r} configured in {where}") if text else None


@dataclass(frozen=True, slots=True)
class BuiltOn:
    """A scheduler build and the Kubernetes minor of the kube-scheduler code it is built on."""

    label: str  # koord-scheduler v1.8.0
    minor: int


def resolve_release(
    *named: Named | None,
    build: BuiltOn | None = None,
    cluster: str | None = None,
    cluster_asked: bool = False,
) -> tuple[KubernetesRelease, str]:
    """The release that applies and why: ``build``, else the first of ``named`` given, else the
    cluster's ``/version`` (``cluster``), else the newest supported release.

    ``cluster_asked``: the caller asked the apiserver (live mode), so a missing ``cluster`` means the
    read failed. A build outside the supported range is judged by the nearest supported minor without
    a note: its own minor is a fact the reader's description gives, and the tables are limitguard's.
    """
    if build is not None:
        minor = min(max(build.minor, OLDEST_MINOR), NEWEST_MINOR)
        return KubernetesRelease(minor), f"{build.label} is Kubernetes 1.{build.minor}"
    chosen = next((given for given in named if given is not None), None)
    if chosen is None and cluster:
        chosen = Named(cluster, f"cluster {cluster}, from the apiserver's /version")
    if chosen is None:
        reason = (
            "the apiserver's /version could not be read"
            if cluster_asked
            else "no release is named and there is no apiserver to ask"
        )
        return KubernetesRelease(), f"the newest supported release, the default: {reason}"
    try:
        minor, clamp = clamped_minor(chosen.text)
    except VersionError:
        return (
            KubernetesRelease(
                note=f"unreadable Kubernetes version {chosen.text!r}: applying the rules of 1.{DEFAULT_MINOR}"
            ),
            f"the newest supported release; unreadable: {chosen.credit}",
        )
    if clamp:
        return KubernetesRelease(minor, clamp), f"{chosen.credit}, nearest supported 1.{minor}"
    return KubernetesRelease(minor), chosen.credit


__all__ = ["BuiltOn", "KubernetesRelease", "Named", "from_file", "from_flag", "resolve_release"]
