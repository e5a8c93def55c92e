"""The Kubernetes releases limitguard knows, and how a version string names one.

Every layer reads the supported minors from here: the scheduler-configuration validator
(``limitguard.schedcfg``), the pod rules and the release resolver (``limitguard.core.kuberelease``).
A command refuses a release outside the range where it reads it (``supported_minor``); a server,
which must keep answering, judges it as the nearest supported one and says so (``clamped_minor``).
What each minor brings is ``limitguard.core.kubefeatures``.
"""

from __future__ import annotations

import re

from limitguard.errors import LimitguardError

SUPPORTED_MINORS: tuple[int, ...] = (31, 32, 33, 34, 35, 36, 37)
OLDEST_MINOR = SUPPORTED_MINORS[0]
NEWEST_MINOR = SUPPORTED_MINORS[-1]
DEFAULT_MINOR = NEWEST_MINOR

_VERSION = re.compile(r"v?1\.(\d+)(?:\.\d+)?(?:[-+].*)?")


class VersionError(LimitguardError, ValueError):
    """A malformed Kubernetes version, or (where the caller refuses them) an unsupported one."""


def supported_text() -> str:
    return f"1.{OLDEST_MINOR}-1.{NEWEST_MINOR}"


def parse_minor(text: str) -> int:
    """The minor of ``1.36``, ``v1.36`` or ``v1.36.2-gke.100`` (a /version gitVersion), any release."""
    match = _VERSION.fullmatch(str(text).strip())
    if not match:
        raise VersionError(
            f"invalid Kubernetes version {text!r}: expected 1.Y or v1.Y.Z, such as 1.{DEFAULT_MINOR}"
        )
    return int(match.group(1))


def supported_minor(text: str) -> int:
    """The minor of ``text``; VersionError when it is outside the supported range (CLI use)."""
    minor = parse_minor(text)
    if minor not in SUPPORTED_MINORS:
        raise VersionError(f"Kubernetes version {text!r} is not supported; supported: {supported_text()}")
    return minor


def clamped_minor(text: str) -> tuple[int, str | None]:
    """The nearest supported minor to ``text`` and a warning when it differs (server use).

    A cluster newer than the newest known release is judged by the newest rules, an older one by the
    oldest: both are the closest known behaviour, and the warning tells the operator so.
    """
    minor = parse_minor(text)
    nearest = min(max(minor, OLDEST_MINOR), NEWEST_MINOR)
    if nearest == minor:
        return minor, None
    return nearest, (
        f"Kubernetes version {text!r} is outside the supported {supported_text()}: "
        f"applying the rules of 1.{nearest}"
    )
