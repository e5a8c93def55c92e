"""The leader's report writer: make the cluster's reports say what `DesiredReports` says, writing
only what differs, through the one queue of cluster writes.

A new leader first lists the reports limitguard wrote (its label), so a leader change or a restart
writes nothing the cluster already shows. After that it trusts what it wrote. A report whose
results are unchanged but for the numbers that move with every pod - summed limits, the pods
holding the most, the messages stating them - is rewritten at most once per `refresh_seconds`: a busy node's
sums change with every pod, and the one rate limit of cluster writes is shared with the node labels
that steer placement. A verdict change is queued at once.

A report whose resource is gone is left to garbage collection (it is owned by its resource). A
report the apiserver refuses (400, 403, 422) is not sent again until what it says changes.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from limitguard.clock import Clock
from limitguard.core.reports.policyreport import MANAGED_BY_LABEL, REPORT_LABEL, steady, verdicts
from limitguard.core.text import clip
from limitguard.kube.client import ApiError
from limitguard.kube.reports.desired import Desired
from limitguard.kube.reports.restapi import ReportKey, ReportRest, report_key
from limitguard.kube.writes import ClusterWrites, Outcome, Perform, Permit

log = logging.getLogger(__name__)

WRITE_KIND = "report"
REFRESH_SECONDS = 300.0
REFUSED = frozenset({400, 403, 422})
_OWN_FIELDS = ("scope", "source", "configuration", "summary", "results")


def content(report: Mapping[str, Any]) -> tuple[Any, ...]:
    """What limitguard says in a report: compared with what the cluster holds to skip a write."""
    metadata = report.get("metadata") or {}
    labels = metadata.get("labels") or {}
    own_labels = {key: labels.get(key) for key in (MANAGED_BY_LABEL, REPORT_LABEL)}
    return (own_labels, metadata.get("ownerReferences"), *(report.get(name) for name in _OWN_FIELDS))


def _digest(value: Any) -> bytes:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).digest()


def verdict_rows(report: Mapping[str, Any]) -> tuple[tuple[str, str, str, str], ...]:
    """(policy, rule, status, field path) of each result: what transitions are made of."""
    return tuple(
        (
            policy,
            rule,
            status,
            str(((r.get("properties") or {}) if isinstance(r, Mapping) else {}).get("path", "")),
        )
        for (policy, rule, status), r in zip(verdicts(report), report.get("results") or (), strict=False)
    )


@dataclass(frozen=True, slots=True)
class Held:
    """What the cluster holds of one report, in a few hundred bytes instead of the object: its
    version, what others may have added (labels, annotations), its scope, and digests of what
    limitguard said in it (5,000 node reports are ~20 MB as objects)."""

    resource_version: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    scope: Mapping[str, Any]
    said: bytes  # digest of content()
    steady: bytes  # digest of steady()
    verdicts: tuple[tuple[str, str, str, str], ...]

    @property
    def finding(self) -> str:
        return str(self.labels.get(REPORT_LABEL) or "")


def held(report: Mapping[str, Any]) -> Held:
    metadata = report.get("metadata") or {}
    return Held(
        str(metadata.get("resourceVersion") or ""),
        dict(metadata.get("labels") or {}),
        dict(metadata.get("annotations") or {}),
        dict(report.get("scope") or {}),
        _digest(content(report)),
        _digest(steady(report)),
        verdict_rows(report),
    )


def _with_version(want: Mapping[str, Any], have: Held) -> dict[str, Any]:
    """*want* as a replacement of *have*: its resourceVersion (compare-and-swap), and the labels and
    annotations others added kept."""
    metadata = dict(want["metadata"])
    metadata["resourceVersion"] = have.resource_version
    metadata["labels"] = {**have.labels, **metadata["labels"]}
    if have.annotations:
        metadata["annotations"] = dict(have.annotations)
    return {**want, "metadata": metadata}


class ReportWriter:
    def __init__(
        self,
        rest: ReportRest,
        writes: ClusterWrites,
        clock: Clock,
        subject_alive: Callable[[Mapping[str, Any]], bool],  # from a report's scope
        *,
        refresh_seconds: float = REFRESH_SECONDS,
        on_missing_api: Callable[[], None] = lambda: None,
    ) -> None:
        self.rest = rest
        self.writes = writes
        self.clock = clock
        self.subject_alive = subject_alive
        self.refresh_seconds = refresh_seconds
        self.on_missing_api = on_missing_api
        self.observed: dict[ReportKey, Held] = {}  # what the cluster holds, as last read or written
        self.desired: dict[ReportKey, dict[str, Any]] = {}
        self.listed = False
        self._written_at: dict[ReportKey, float] = {}
        self._refused: dict[ReportKey, bytes] = {}
        # digests of the desired objects, kept while the same object is desired (unchanged nodes)
        self._digests: dict[ReportKey, tuple[dict[str, Any], bytes, bytes]] = {}

    async def load(self) -> None:
        """Read the reports the cluster holds (a new leader starts from what it observes)."""
        listed = await self.rest.list_own()
        now = self.clock.now()
        self.observed = {report_key(self.rest.api, report): held(report) for report in listed}
        self._written_at = dict.fromkeys(self.observed, now)
        self.listed = True
        log.info("policy reports listed", extra={"api": self.rest.api.api_version, "reports": len(listed)})

    def forget(self) -> None:
        """The API went away: nothing is known any more, nothing queued is worth writing."""
        for key in set(self.observed) | set(self.desired):
            self.writes.cancel(WRITE_KIND, key)
        self.observed.clear()
        self.desired.clear()
        self._written_at.clear()
        self._digests.clear()
        self.listed = False

    def _said(self, key: ReportKey, want: dict[str, Any]) -> tuple[bytes, bytes]:
        """Digests of content() and steady() of a desired report (computed once per object)."""
        cached = self._digests.get(key)
        if cached is not None and cached[0] is want:
            return cached[1], cached[2]
        said, still = _digest(content(want)), _digest(steady(want))
        self._digests[key] = (want, said, still)
        return said, still

    def sync(self, desired: Desired) -> int:
        """Queue a write for each report that must change; returns how many were queued."""
        self.desired = desired.reports
        self._digests = {key: value for key, value in self._digests.items() if key in desired.reports}
        now = self.clock.now()
        queued = 0
        for key, want in desired.reports.items():
            have = self.observed.get(key)
            said, still = self._said(key, want)
            if have is not None and have.said == said:
                continue
            if self._refused.get(key) == said:
                continue
            if (
                have is not None
                and have.steady == still
                and now - self._written_at.get(key, float("-inf")) < self.refresh_seconds
            ):
                continue  # only the numbers moved: they wait for the refresh
            self.writes.submit(WRITE_KIND, key, self._perform(key))
            queued += 1
        for key, have in list(self.observed.items()):
            if key in desired.reports or have.finding not in desired.complete:
                continue
            if not self.subject_alive(have.scope):
                # Owned by its resource: garbage collection removes it, no write needed.
                self.observed.pop(key, None)
                self.writes.cancel(WRITE_KIND, key)
                continue
            self.writes.submit(WRITE_KIND, key, self._perform(key))
            queued += 1
        return queued

    def _perform(self, key: ReportKey) -> Perform:
        async def perform(permit: Permit) -> Outcome:
            want = self.desired.get(key)
            have = self.observed.get(key)
            try:
                if want is None:
                    return await self._delete(key, have, permit)
                if have is not None and have.said == self._said(key, want)[0]:
                    return Outcome.UNCHANGED
                await permit()
                if have is None:
                    written = await self.rest.create(key, want)
                else:
                    written = await self.rest.replace(key, _with_version(want, have))
            except ApiError as error:
                return await self._failed(key, want, have, error)
            self.observed[key] = held(written)
            self._written_at[key] = self.clock.now()
            self._refused.pop(key, None)
            return Outcome.WRITTEN

        return perform

    async def _delete(self, key: ReportKey, have: Held | None, permit: Permit) -> Outcome:
        if have is None:
            return Outcome.UNCHANGED
        await permit()
        try:
            await self.rest.delete(key)
        except ApiError as error:
            if error.status != 404:
                raise
            self.observed.pop(key, None)
            return Outcome.GONE
        self.observed.pop(key, None)
        self._written_at.pop(key, None)
        return Outcome.WRITTEN

    async def _failed(
        self, key: ReportKey, want: dict[str, Any] | None, have: Held | None, error: ApiError
    ) -> Outcome:
        if error.status == 409:  # AlreadyExists, or modified meanwhile: read it, then try again
            fresh = await self.rest.get(key)
            if fresh is None:
                self.observed.pop(key, None)
            else:
                self.observed[key] = held(fresh)
            return Outcome.CONFLICT
        if error.status == 404:
            if have is not None:  # deleted meanwhile (its resource went): create it next time
                self.observed.pop(key, None)
                return Outcome.CONFLICT
            self.on_missing_api()  # the collection itself is gone: the CRDs were removed
            return Outcome.GONE
        if error.status in REFUSED and want is not None:
            self._refused[key] = self._said(key, want)[0]
            log.warning(
                "policy report refused by the apiserver",
                extra={"report": "/".join(key), "status": error.status, "error": clip(error.message, 300)},
            )
            return Outcome.REJECTED
        raise error
