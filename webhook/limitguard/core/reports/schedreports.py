"""A scheduler ConfigMap's validator findings as policy report results: now and after an upgrade.

Pure: the caller judges the ConfigMap (limitguard.schedcfg) for the release the cluster runs and for
the next minor, and hands the findings in. Policy `scheduler-config` holds the running release's
verdict: `fail` per error, `warn` per warning, one `pass` when clean. Policy `scheduler-config-upgrade`
holds upgrade readiness: what the next minor release adds - `fail` per new error, `warn` per new
warning, one `pass` (`ready`) when nothing new fails, `skip` when limitguard knows no newer release.
Errors found while the reading scheduler was guessed are warnings, as the ConfigMap webhook answers
them (denying on a guess could block a configuration its real scheduler accepts).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from limitguard.core.reports.policyreport import (
    HIGH,
    LOW,
    MEDIUM,
    ObjectRef,
    ReportApi,
    Result,
    report_object,
)

CURRENT_POLICY = "scheduler-config"
UPGRADE_POLICY = "scheduler-config-upgrade"
CATEGORY = "Scheduler configuration"
FINDING = "scheduler-config"
VALID_RULE, READY_RULE = "valid", "ready"


class FindingLike(Protocol):
    """What a validator finding says (limitguard.schedcfg.Finding is one)."""

    @property
    def severity(self) -> str: ...

    @property
    def path(self) -> str: ...

    @property
    def rule(self) -> str: ...


@dataclass(frozen=True)
class Verdict:
    """One release's judgement of one ConfigMap."""

    kubernetes: str  # the release whose rules applied, e.g. "1.37"
    scheduler: str  # the reading scheduler as the validator names it
    errors: tuple[tuple[str, str, str], ...]  # (path, rule, text) of each error
    warnings: tuple[tuple[str, str, str], ...]
    certain: bool = True  # False: the reading scheduler was guessed


def verdict(
    kubernetes: str, scheduler: str, findings: Iterable[FindingLike], certain: bool = True
) -> Verdict:
    findings = list(findings)

    def of(severity: str) -> tuple[tuple[str, str, str], ...]:
        return tuple((f.path, f.rule, str(f)) for f in findings if f.severity == severity)

    return Verdict(kubernetes, scheduler, of("error"), of("warning"), certain)


def _properties(judged: Verdict, path: str = "") -> dict[str, str]:
    properties = {"kubernetesVersion": judged.kubernetes, "scheduler": judged.scheduler}
    if path:
        properties["path"] = path
    if not judged.certain:
        properties["schedulerCertain"] = "false"
    return properties


def _findings(
    policy: str, judged: Verdict, errors: Sequence, warnings: Sequence, error_severity: str
) -> list[Result]:
    guessed = (
        ""
        if judged.certain
        else " (the reading scheduler was guessed: set annotation limitguard.io/scheduler)"
    )
    results = [
        Result(
            policy,
            rule,
            "fail" if judged.certain else "warn",
            error_severity,
            CATEGORY,
            f"{text}{guessed}",
            path,
            _properties(judged, path),
        )
        for path, rule, text in errors
    ]
    results += [
        Result(policy, rule, "warn", LOW, CATEGORY, text, path, _properties(judged, path))
        for path, rule, text in warnings
    ]
    return results


def current_results(judged: Verdict) -> list[Result]:
    results = _findings(CURRENT_POLICY, judged, judged.errors, judged.warnings, HIGH)
    if not results:
        message = f"valid for {judged.scheduler} (Kubernetes {judged.kubernetes})"
        results.append(
            Result(CURRENT_POLICY, VALID_RULE, "pass", HIGH, CATEGORY, message, "", _properties(judged))
        )
    return results


def upgrade_results(current: Verdict, upcoming: Verdict | None, next_release: str) -> list[Result]:
    """What the next minor release adds to the running release's verdict."""
    if upcoming is None:
        message = f"Kubernetes {next_release} is newer than the newest release limitguard knows: not judged"
        return [
            Result(
                UPGRADE_POLICY,
                READY_RULE,
                "skip",
                MEDIUM,
                CATEGORY,
                message,
                "",
                {"kubernetesVersion": next_release},
            )
        ]
    # A warning now that is an error next is exactly what an upgrade breaks.
    failing = {(path, rule) for path, rule, _ in current.errors}
    known = failing | {(path, rule) for path, rule, _ in current.warnings}
    errors = [e for e in upcoming.errors if (e[0], e[1]) not in failing]
    warnings = [w for w in upcoming.warnings if (w[0], w[1]) not in known]
    results = _findings(UPGRADE_POLICY, upcoming, errors, warnings, MEDIUM)
    if not any(r.result == "fail" for r in results):
        if upcoming.kubernetes == current.kubernetes:
            message = f"{upcoming.scheduler} applies the rules of Kubernetes {upcoming.kubernetes} whatever the cluster runs"
        else:
            message = f"no new errors under Kubernetes {upcoming.kubernetes} ({upcoming.scheduler})"
        results.append(
            Result(UPGRADE_POLICY, READY_RULE, "pass", MEDIUM, CATEGORY, message, "", _properties(upcoming))
        )
    return results


def configmap_scope(namespace: str, name: str, uid: str) -> ObjectRef:
    return ObjectRef("v1", "ConfigMap", name, namespace, uid)


def configmap_report(
    api: ReportApi, scope: ObjectRef, current: Verdict, upcoming: Verdict | None, next_release: str
) -> dict:
    results = current_results(current) + upgrade_results(current, upcoming, next_release)
    return report_object(api, scope, FINDING, results)
