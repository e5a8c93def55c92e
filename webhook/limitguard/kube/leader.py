"""Leader election through a coordination.k8s.io/v1 Lease, with client-go's leaderelection semantics.

Only one replica may decide the requests that touch the binding ledger, and the apiserver is the
only thing all replicas agree on, so the choice is made there (SPEC 4: never a home-made consensus).
What is carried over from client-go (tools/leaderelection/leaderelection.go, resourcelock/leaselock.go):

- The Lease spec is the election record: holderIdentity, leaseDurationSeconds, acquireTime,
  renewTime, leaseTransitions. Every write is a PUT carrying the resourceVersion that was read, so two
  candidates racing for an expired lease cannot both win: the second gets 409 Conflict.
- Expiry is judged by *observed* time: a candidate notes its own monotonic clock when it sees the
  record change (a new resourceVersion) and treats the lease as held until that moment plus
  leaseDurationSeconds. The renewTime written in the Lease is informational, so wall-clock skew
  between replicas does not matter; only clock rates do, as in client-go.
- A leader renews every retryPeriod. It counts as leader only until the start of its last
  successful renew attempt plus renewDeadline; past that it steps down, even while a hung request
  is still out. Since renewDeadline < leaseDuration and any follower's observation of that renew
  is later than its start, the old leader stops deciding before any follower may take over.
- A released lease (holderIdentity "", leaseDurationSeconds 1) is free at once, like ReleaseOnCancel.

Beyond client-go: a replica that *created* the Lease (none existed, so no replica ever led under
it) has no predecessor's approvals to catch up on and decides at once; and `first_round` is set
once the first attempt has read or written the Lease, so a replica started into a burst can wait
for it instead of deciding alone before it knows that another replica leads.

Where the leader listens is written next to the record, in the `limitguard.io/leader-address`
annotation (POD_IP:port), so followers can forward to it.

The decisions are pure functions over plain data (`claim`, `lease_valid`); `Elector` does the I/O,
with the clock and sleep injected so tests drive time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from limitguard.kube.leaderwork import LeaderWork

log = logging.getLogger(__name__)

ADDRESS_ANNOTATION = "limitguard.io/leader-address"
LEASE_API_VERSION = "coordination.k8s.io/v1"
JITTER_FACTOR = 1.2  # client-go's JitterFactor for the acquire retry

Now = Callable[[], float]
Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class ElectionTiming:
    """client-go's defaults (kube-scheduler and controller-manager use the same)."""

    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def problems(self) -> list[str]:
        """The same checks as client-go's NewLeaderElector."""
        found = []
        if self.lease_duration <= self.renew_deadline:
            found.append("leaseDurationSeconds must be greater than renewDeadlineSeconds")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            found.append("renewDeadlineSeconds must be greater than retryPeriodSeconds x 1.2")
        if self.retry_period <= 0 or self.lease_duration != int(self.lease_duration):
            found.append("retryPeriodSeconds must be > 0 and leaseDurationSeconds whole seconds")
        return found


@dataclass(frozen=True)
class LeaseRecord:
    holder: str = ""
    duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    transitions: int = 0
    address: str = ""


@dataclass(frozen=True)
class Observation:
    """The last Lease this replica saw, and when (its own clock) it first saw that version."""

    record: LeaseRecord
    resource_version: str
    observed_at: float


def micro_time(moment: datetime) -> str:
    """metav1.MicroTime's wire form: RFC 3339 with microseconds, in UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def record_from_lease(obj: Mapping[str, Any]) -> LeaseRecord:
    spec = obj.get("spec") if isinstance(obj.get("spec"), Mapping) else {}
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    annotations = metadata.get("annotations") if isinstance(metadata.get("annotations"), Mapping) else {}
    return LeaseRecord(
        holder=str(spec.get("holderIdentity") or ""),
        duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
        acquire_time=spec.get("acquireTime"),
        renew_time=spec.get("renewTime"),
        transitions=int(spec.get("leaseTransitions") or 0),
        address=str(annotations.get(ADDRESS_ANNOTATION) or ""),
    )


def resource_version(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") if isinstance(obj.get("metadata"), Mapping) else {}
    return str(metadata.get("resourceVersion") or "")


def lease_object(namespace: str, name: str, record: LeaseRecord, version: str = "") -> dict[str, Any]:
    """The Lease to write; *version* makes the PUT a compare-and-swap."""
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if version:
        metadata["resourceVersion"] = version
    if record.address:
        metadata["annotations"] = {ADDRESS_ANNOTATION: record.address}
    spec: dict[str, Any] = {
        "holderIdentity": record.holder,
        "leaseDurationSeconds": record.duration_seconds,
        "leaseTransitions": record.transitions,
    }
    if record.acquire_time:
        spec["acquireTime"] = record.acquire_time
    if record.renew_time:
        spec["renewTime"] = record.renew_time
    return {"apiVersion": LEASE_API_VERSION, "kind": "Lease", "metadata": metadata, "spec": spec}


def lease_valid(observed: Observation | None, now: float) -> bool:
    """Held by someone, and not yet expired by this replica's own observation."""
    if observed is None or not observed.record.holder:
        return False
    return observed.observed_at + observed.record.duration_seconds > now


def claim(
    observed: Observation | None, identity: str, address: str, duration: int, now: float, wall: str
) -> LeaseRecord | None:
    """The record to write to take or keep the lease, or None while another holder's is valid.

    Renewing keeps acquireTime and leaseTransitions; taking over from someone else (or from an
    expired or released lease) counts a transition, as client-go's tryAcquireOrRenew does.
    """
    if observed is None:
        return LeaseRecord(identity, duration, wall, wall, 0, address)
    current = observed.record
    if current.holder == identity:
        return replace(current, duration_seconds=duration, renew_time=wall, address=address)
    if lease_valid(observed, now):
        return None
    return LeaseRecord(identity, duration, wall, wall, current.transitions + 1, address)


class LeaseApi(Protocol):
    """GET/POST/PUT of the one Lease; `get` answers None for 404, writes raise on 409."""

    async def get(self) -> Mapping[str, Any] | None: ...

    async def create(self, obj: Mapping[str, Any]) -> Mapping[str, Any]: ...

    async def update(self, obj: Mapping[str, Any]) -> Mapping[str, Any]: ...


class ElectionMetrics(Protocol):
    leader: Any  # Gauge: 1 while this replica leads
    deciding: Any  # Gauge: 1 while it leads and has caught up
    leader_transitions: Any  # Counter by direction (acquired, lost)
    catch_ups: Any  # Counter by how (watch, relist)


CatchUp = Callable[[str], Awaitable[str]]  # wait until the cache is at least at this resourceVersion


class Elector:
    """One candidate: run() campaigns forever; `deciding` says whether this replica may decide now."""

    def __init__(
        self,
        api: LeaseApi,
        namespace: str,
        name: str,
        identity: str,
        address: str,
        timing: ElectionTiming,
        *,
        now: Now,
        sleep: Sleep,
        wall: Callable[[], datetime] = lambda: datetime.now(UTC),
        rng: random.Random | None = None,
        catch_up: CatchUp | None = None,
        metrics: ElectionMetrics | None = None,
        callbacks: LeaderWork | None = None,  # client-go's OnStartedLeading / OnStoppedLeading
    ) -> None:
        self.api = api
        self.namespace = namespace
        self.name = name
        self.identity = identity
        self.address = address
        self.timing = timing
        self.metrics = metrics
        self.callbacks = callbacks
        self.observed: Observation | None = None
        self.events: list[tuple[str, float]] = []  # (acquired | caught-up | stepped-down, clock)
        self._now = now
        self._sleep = sleep
        self._wall = wall
        self._rng = rng or random.Random()
        self._catch_up = catch_up
        self._leading = False
        self._renewed_at = -math.inf
        self._caught_up = False
        self._catch_up_task: asyncio.Task[None] | None = None
        self._stopped = False
        self._created_lease = False  # the last successful write created the Lease
        self.first_round = asyncio.Event()

    # -- what the request path asks -------------------------------------------------------------
    @property
    def leading(self) -> bool:
        """Holds the lease by its own reckoning: renewed less than renewDeadline ago."""
        return self._leading and self._now() < self._renewed_at + self.timing.renew_deadline

    @property
    def deciding(self) -> bool:
        """Leading, and the cache has caught up with what the previous leader approved."""
        return self._caught_up and self.leading

    def leader_address(self) -> str | None:
        """Where the current leader listens, when another replica holds a valid lease."""
        observed = self.observed
        if observed is None or observed.record.holder == self.identity:
            return None
        if not lease_valid(observed, self._now()) or not observed.record.address:
            return None
        return observed.record.address

    # -- one round ------------------------------------------------------------------------------
    def _observe(self, obj: Mapping[str, Any], now: float) -> None:
        version = resource_version(obj)
        if self.observed is None or self.observed.resource_version != version:
            self.observed = Observation(record_from_lease(obj), version, now)

    def _claim(self, now: float) -> LeaseRecord | None:
        return claim(
            self.observed,
            self.identity,
            self.address,
            int(self.timing.lease_duration),
            now,
            micro_time(self._wall()),
        )

    async def _write(self, record: LeaseRecord, create: bool) -> bool:
        version = "" if create or self.observed is None else self.observed.resource_version
        obj = lease_object(self.namespace, self.name, record, version)
        try:
            written = await (self.api.create(obj) if create else self.api.update(obj))
        except Exception as error:  # 409 Conflict included: someone else wrote first
            log.debug("lease write failed", extra={"lease": self.name, "error": str(error)})
            return False
        self.observed = None
        self._observe(written, self._now())
        return True

    async def try_acquire_or_renew(self) -> bool:
        """client-go's tryAcquireOrRenew: fast-path renew, else read, decide, compare-and-swap."""
        self._created_lease = False
        if self.leading and self.observed is not None:
            record = self._claim(self._now())
            if record is not None and await self._write(record, create=False):
                return True
        try:
            current = await self.api.get()
        except Exception as error:
            log.debug("lease read failed", extra={"lease": self.name, "error": str(error)})
            return False
        now = self._now()
        if current is None:
            self.observed = None
            record = self._claim(now)  # a fresh record: no transitions yet
            created = record is not None and await self._write(record, create=True)
            self._created_lease = created
            return created
        self._observe(current, now)
        record = self._claim(now)
        if record is None:
            return False
        return await self._write(record, create=False)

    # -- the loop -------------------------------------------------------------------------------
    async def run(self) -> None:
        """Campaign, lead, step down, campaign again: only cancellation or resign() ends it."""
        while not self._stopped:
            started = self._now()
            renewed = await self.try_acquire_or_renew()
            if self._stopped:
                break
            if renewed:
                self._renewed_at = started
                if not self._leading:
                    self._become_leader(started)
            elif self._leading and self._now() >= self._renewed_at + self.timing.renew_deadline:
                self._step_down("failed to renew within renewDeadline")
            elif self._leading and self.observed is not None and self.observed.record.holder != self.identity:
                self._step_down(f"lease taken by {self.observed.record.holder}")
            if renewed or self.observed is not None:
                self.first_round.set()  # the Lease was read or written: who leads is known
            period = self.timing.retry_period
            if not self._leading:
                period += self._rng.random() * JITTER_FACTOR * period
            await self._sleep(period)

    def _become_leader(self, now: float) -> None:
        self._leading = True
        self._caught_up = False
        self.events.append(("acquired", now))
        version = self.observed.resource_version if self.observed else ""
        log.info("became leader; catching up before deciding", extra={"lease": self.name, "rv": version})
        if self.metrics is not None:
            self.metrics.leader.set(1)
            self.metrics.leader_transitions.labels("acquired").inc()
        if self._created_lease:  # no Lease existed: no previous leader approved anything
            self._decide(version, "new-lease", now)
            return
        self._catch_up_task = asyncio.create_task(self._catch_up_then_decide(version))

    async def _catch_up_then_decide(self, version: str) -> None:
        started = self._now()
        try:
            how = await self._catch_up(version) if self._catch_up is not None else "none"
        except Exception:
            # Never lead without deciding for good: step down; the next round re-acquires and retries.
            log.exception("catch-up failed", extra={"lease": self.name, "rv": version})
            self._catch_up_task = None
            if self._leading:
                self._step_down("catch-up failed")
            return
        if not self._leading:
            return
        self._decide(version, how, started)

    def _decide(self, version: str, how: str, started: float) -> None:
        self._caught_up = True
        self.events.append(("caught-up", self._now()))
        log.info(
            "leader caught up; deciding",
            extra={"lease": self.name, "rv": version, "how": how, "waited_s": self._now() - started},
        )
        if self.metrics is not None:
            self.metrics.catch_ups.labels(how).inc()
            self.metrics.deciding.set(1)
        if self.callbacks is not None:
            self.callbacks.started_leading()

    def _step_down(self, why: str) -> None:
        self._leading = False
        self._caught_up = False
        self.events.append(("stepped-down", self._now()))
        if self._catch_up_task is not None:
            self._catch_up_task.cancel()
            self._catch_up_task = None
        log.warning("stepped down", extra={"lease": self.name, "why": why})
        if self.metrics is not None:
            self.metrics.leader.set(0)
            self.metrics.deciding.set(0)
            self.metrics.leader_transitions.labels("lost").inc()
        if self.callbacks is not None:
            self.callbacks.stopped_leading()

    def resign(self) -> bool:
        """Stop campaigning and deciding at once; returns whether this replica was leading."""
        self._stopped = True
        was_leading = self._leading
        if was_leading:
            self._step_down("shutting down")
        return was_leading

    async def release(self, grace: float = 0.0) -> None:
        """Free the lease for a fast takeover, after *grace* (time for the bindings approved last
        to be persisted, so the next leader's catch-up sees them)."""
        if grace > 0:
            await self._sleep(grace)
        observed = self.observed
        if observed is None or observed.record.holder != self.identity:
            return
        released = LeaseRecord("", 1, None, micro_time(self._wall()), observed.record.transitions)
        with contextlib.suppress(Exception):  # another holder took it, or the apiserver is away
            await self.api.update(
                lease_object(self.namespace, self.name, released, observed.resource_version)
            )
