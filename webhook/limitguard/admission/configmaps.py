"""ConfigMaps carrying a KubeSchedulerConfiguration: validated on CREATE/UPDATE.

The verdict is that of the scheduler that reads the ConfigMap: its ``limitguard.io/scheduler``
annotation, else the server's ``schedulerConfigValidation.scheduler``, else detected from the plugins.
When detection cannot tell, the errors are returned as warnings: denying on a guess could block a
configuration its real scheduler accepts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from limitguard.core.config import Config
from limitguard.core.kuberelease import BuiltOn, Named, from_file, resolve_release
from limitguard.core.response import Response, allowed, warning
from limitguard.schedcfg import configmap_verdict
from limitguard.schedcfg.report import Report
from limitguard.schedcfg.schedulers import AUTO, resolve_leniently
from limitguard.schedcfg.tables.releases import DEFAULT_RELEASE, Release, reader_gates
from limitguard.schedcfg.validator import SCHEDULER_ANNOTATION

UNPROCESSABLE = 422
UNDETERMINED = (
    f"limitguard: cannot tell which scheduler reads this; set annotation {SCHEDULER_ANNOTATION} "
    "(errors only warned)"
)
_MAX_WARNINGS = 10


def configured_release(config: Config, config_path: str | None = None) -> Named | None:
    """The release the configuration names for scheduler configurations, credited to its key:
    ``schedulerConfigValidation.kubernetesVersion``, else ``kubernetesVersion``."""
    return from_file(
        "schedulerConfigValidation.kubernetesVersion", config.scheduler_kubernetes_version, config_path
    ) or from_file("kubernetesVersion", config.kubernetes_version, config_path)


def configmap_release(
    configured: Named | str | None,
    gates: Mapping[str, bool],
    cluster_version: str | None = None,
    scheduler: str = AUTO,
    *,
    cluster_asked: bool = False,
) -> tuple[Release, str]:
    """The release ConfigMaps are validated for, and why (``limitguard.core.kuberelease``): the reading
    scheduler's own minor when ``scheduler`` (``NAME[@VERSION]``) names a build (koord-scheduler v1.8.0:
    1.35, whatever the cluster runs), else ``configured`` (a bare string is
    ``schedulerConfigValidation.kubernetesVersion``), else the cluster's /version, else the newest
    supported. A server keeps answering: a release outside the supported range is judged as the nearest
    one, and gates that release refuses are left out; ``Release.note`` says so, and every verdict
    carries it as a warning. A version limitguard has no table for gets its scheduler's newest release,
    with a note: a newer build must never block ConfigMap writes."""
    notes: list[str] = []
    reader, unknown_version = resolve_leniently(scheduler)
    if unknown_version:  # a newer build than the tables: its newest release, and every verdict says so
        notes.append(f"schedulerConfigValidation.scheduler {unknown_version}")
    if isinstance(configured, str):
        configured = from_file("schedulerConfigValidation.kubernetesVersion", configured)
    if reader is not None and reader.kubernetes_minor is not None:
        built_on = BuiltOn(reader.label, reader.kubernetes_minor)
        release, why = resolve_release(configured, build=built_on)
        applied = reader.reader_for(Release(release.minor)).label
        gated = _gated(release.minor, gates, notes, f" by {applied}")
        return gated, f"{why}; {unknown_version}" if unknown_version else why
    release, why = resolve_release(configured, cluster=cluster_version, cluster_asked=cluster_asked)
    if release.note:
        notes.append(release.note)
    return _gated(release.minor, gates, notes), why


def _gated(minor: int, gates: Mapping[str, bool], notes: list[str], by: str = "") -> Release:
    """Release 1.<minor> with the gates it accepts; those it refuses are named in the note."""
    release, refused = reader_gates(Release(minor, dict(gates)))
    notes = [*notes, *(f"feature gate ignored{by}: {problem}" for problem in refused)]
    return replace(release, note="; ".join(notes) or None)


def configmap_check(
    configmap: Mapping[str, Any], release: Release = DEFAULT_RELEASE, scheduler: str = AUTO
) -> Response | None:
    """None for ConfigMaps without a scheduler configuration (cheap); else the verdict."""
    report = configmap_verdict(dict(configmap), release, scheduler)
    if report is None:
        return None
    notes = (warning(f"limitguard: {_applied_note(release, report)}"),) if release.note else ()
    guessed = not report.certain
    undetermined = (warning(UNDETERMINED),) if guessed else ()
    problems = report.findings if guessed else report.warnings
    shown = [f for f in problems if f.severity != "info"][:_MAX_WARNINGS]
    warnings = notes + undetermined + tuple(warning(f"limitguard: {finding}") for finding in shown)
    if report.ok or guessed:
        return allowed("valid-scheduler-config" if report.ok else "scheduler-undetermined", *warnings)
    metadata = configmap.get("metadata") if isinstance(configmap.get("metadata"), Mapping) else {}
    name = metadata.get("name", "")
    errors = "\n".join(f"* {finding}" for finding in report.errors)
    message = (
        f'ConfigMap "{name}" is invalid: its KubeSchedulerConfiguration has {len(report.errors)} '
        f"error(s):\n{errors}"
    )
    return Response(False, "invalid-scheduler-config", UNPROCESSABLE, message, warnings, action="deny")


def _applied_note(release: Release, report: Report) -> str | None:
    """The server release's note, led by the release actually applied when the ConfigMap's reader is
    built on another minor (auto-detected koord-scheduler: 1.35, whatever the cluster's clamp says)."""
    applied = sorted({reader.kubernetes for reader in report.readers} - {release.name})
    if not applied:
        return release.note
    names = ", ".join(sorted({f"{r.scheduler} {r.build_name}" for r in report.readers if r.build_name}))
    return f"rules of Kubernetes {', '.join(applied)} applied ({names}); server release: {release.note}"
