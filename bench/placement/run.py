"""One scenario in one mode: pods created through /mutate, scheduled by the model, bound through
/validate, written; then the figures. Real time throughout (limitguard's ledger runs on it)."""

from __future__ import annotations

import asyncio
import copy
import random
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.harness import percentile_ms
from bench.placement.columns import Columns
from bench.placement.live import HINT_MODES, Live
from bench.placement.model import Resources
from bench.placement.scenarios import RATIO, Scenario
from bench.placement.scheduler import NodeState, PodState, SchedulingQueue, profile_weights
from limitguard.core.quantity import to_units

MODES = ("admission", "hints", "hints-avoid", "extender")
HINT_ANNOTATION = "limitguard.io/placement-hint"
ROOM_LABEL = "limitguard.io/limit-room-"


@dataclass
class Result:
    scenario: str
    mode: str
    pods: int
    placed: int
    stranded: int
    denied: int
    attempts: int
    unschedulable: int  # attempts where no node passed the filters (the extender's included)
    hinted: int
    unchecked: int
    p50_s: float
    p99_s: float
    seconds: float
    workload: bool = False
    node_writes: int = 0  # node updates the scheduler's watch saw during the run (limitguard's writes)
    bindings: int = 0  # allowed bindings
    deferred: int = 0  # writes that waited for the clusterWrites rate limit
    over_rate: int = 0  # writes past burst + rate x time, counted from the watch (0: never over)
    added_labelled_p50_s: float = float("nan")  # (d): from a node's add to its room labels
    added_labelled_p99_s: float = float("nan")
    placed_on_added: int = 0  # (d): pods placed on the nodes added during the run
    queued_at_end: int = 0  # node writes still waiting in limitguard's queue when the run ended
    stalest_at_end_s: float = float("nan")  # how long the stalest room label had waited then
    replicas: int = 1  # limitguard replicas (2: a replica set, one leader)
    extender_via: str = "leader"  # the replica kube-scheduler's extender calls went to
    relayed: int = 0  # extender calls that replica had the leader answer
    seed: int = 1

    @property
    def denied_per_placed(self) -> float:
        return self.denied / self.placed if self.placed else float("inf")

    @property
    def writes_per_binding(self) -> float:
        return self.node_writes / self.bindings if self.bindings else float("nan")


@dataclass(frozen=True)
class ApiDelays:
    """The apiserver's time around limitguard's binding check, which the test apiserver on this
    machine does not take: from kube-scheduler's binding call to the validating webhook (its
    authentication and admission chain), and from the webhook's answer to the pod bound on every
    watch (the write to etcd and the watch cache). 0: as fast as the test apiserver."""

    to_webhook_s: float = 0.0
    to_watch_s: float = 0.0


def node_state(obj: dict[str, Any]) -> NodeState:
    allocatable = obj["status"]["allocatable"]
    cpu, memory = to_units("cpu", allocatable["cpu"]), to_units("memory", allocatable["memory"])
    return NodeState(
        obj["metadata"]["name"],
        dict(obj["metadata"].get("labels") or {}),
        Resources(cpu, memory),
        Resources(cpu * RATIO["cpu"] // 100, memory * RATIO["memory"] // 100),
        allowed_pods=int(allocatable["pods"]),
        taints=tuple(obj.get("spec", {}).get("taints") or ()),
    )


def node_states(scenario: Scenario, nodes: list[dict[str, Any]] | None = None) -> list[NodeState]:
    """The scheduler's view of *nodes* (default: the scenario's) with the scenario's bound pods."""
    states = [node_state(obj) for obj in (scenario.nodes if nodes is None else nodes)]
    by_name = {state.name: state for state in states}
    for bound in scenario.bound:
        by_name[bound["spec"]["nodeName"]].add(PodState("", bound, 0))
    return states


def now_ns() -> int:
    return time.time_ns()


class Run:
    """The scheduler loop, its binding calls and the creation of the pods, on one event loop."""

    def __init__(
        self,
        scenario: Scenario,
        mode: str,
        live: Live,
        seed: int,
        settle: float,
        delays: ApiDelays | None = None,
    ) -> None:
        self.scenario, self.mode, self.live, self.settle = scenario, mode, live, settle
        self.delays = delays or ApiDelays()
        self.cluster = Columns(node_states(scenario, live.nodes))  # as the apiserver holds them
        self.queue = SchedulingQueue()
        self.weights = profile_weights()
        self.rng = random.Random(seed)
        self.pods: list[PodState] = []
        self.running = asyncio.Event()  # cleared while a burst is being created
        self.wakeup = asyncio.Event()
        self.binds: set[asyncio.Task[None]] = set()
        self.first_attempts = 0
        self.first_attempt_done = asyncio.Event()
        self.last_progress = time.monotonic()
        self.unschedulable = 0
        self.failure: BaseException | None = None
        self.stopped = False
        self.write_times: list[float] = []  # when the watch showed each node write (monotonic)
        self.bindings = 0
        self.added_at: dict[str, float] = {}  # node added during the run -> when it was written
        self.labelled_after: dict[str, float] = {}  # ... -> seconds until the watch showed its labels

    def node_event(self, kind: str, obj: dict[str, Any], at: float) -> None:
        """The scheduler's node informer: a node added or changed (labels, taints) by anyone;
        here only limitguard's leader and the scenario's autoscaler write nodes."""
        name = obj["metadata"]["name"]
        labels = dict(obj["metadata"].get("labels") or {})
        taints = tuple(obj.get("spec", {}).get("taints") or ())
        index = self.cluster.index.get(name)
        if index is None:
            if kind != "DELETED":
                self.cluster.add_node(node_state(obj))
        elif kind == "MODIFIED":
            self.write_times.append(at)
            self.cluster.set_node(index, labels, taints)
        if (
            name in self.added_at
            and name not in self.labelled_after
            and any(k.startswith(ROOM_LABEL) for k in labels)
        ):
            self.labelled_after[name] = at - self.added_at[name]
        self.wakeup.set()

    async def scheduler(self) -> None:
        """Until run() sets *stopped*: a flag, not a cancellation, which asyncio.wait_for can lose
        on Python 3.11 when its timeout fires at the same moment (the loop then ran on)."""
        while not self.stopped:
            await self.running.wait()
            self.queue.flush(now_ns())
            pod = self.queue.pop()
            if pod is None:
                self.wakeup.clear()
                until_window = 1 - time.time() % 1 + 0.001  # the queue is flushed each second
                waiter = asyncio.ensure_future(self.wakeup.wait())
                try:
                    await asyncio.wait({waiter}, timeout=until_window)
                finally:
                    waiter.cancel()
                continue
            await self.attempt(pod)
            await asyncio.sleep(0)  # let binding answers in

    async def attempt(self, pod: PodState) -> None:
        pod.attempts += 1
        cluster = self.cluster
        candidates = cluster.feasible(pod)
        extender = None
        if self.mode == "extender" and len(candidates):
            passed = set(await self.live.extender_filter(pod.body, [cluster.names[i] for i in candidates]))
            candidates = np.array([i for i in candidates if cluster.names[i] in passed], dtype=np.int64)
            if len(candidates) > 1:
                extender = await self.live.extender_prioritize(
                    pod.body, [cluster.names[i] for i in candidates]
                )
        if not len(candidates):
            self.unschedulable += 1
            self.queue.failed(pod, now_ns(), error=False)
            self._attempted(pod)
            return
        index = cluster.choose(pod, candidates, self.weights, self.rng, extender)
        cluster.add(index, pod)  # assumed: the cache counts it until the binding fails
        task = asyncio.create_task(self.bind(pod, index))
        self.binds.add(task)
        task.add_done_callback(self.binds.discard)

    async def bind(self, pod: PodState, index: int) -> None:
        try:
            await self._bind(pod, index)
        except Exception as error:  # reported by run(), which would otherwise wait for this pod
            self.failure = error
            self.first_attempt_done.set()
            raise

    async def _bind(self, pod: PodState, index: int) -> None:
        name = self.cluster.names[index]
        if self.delays.to_webhook_s:
            await asyncio.sleep(self.delays.to_webhook_s)
        if await self.live.bind(pod.body, name):
            if self.delays.to_watch_s:
                await asyncio.sleep(self.delays.to_watch_s)
            self.bindings += 1
            pod.node, pod.placed_ns = name, now_ns()
            self.cluster.forget(pod)
            bound = copy.deepcopy(pod.body)
            bound["spec"]["nodeName"] = name
            await self.live.write("pods", [bound])
            self.last_progress = time.monotonic()
        else:
            self.cluster.add(index, pod, -1)
            pod.denied += 1
            self.queue.failed(pod, now_ns(), error=True)
            self.wakeup.set()
        self._attempted(pod)

    def _attempted(self, pod: PodState) -> None:
        if pod.attempts == 1 and (pod.node is not None or pod.denied or pod.unschedulable_count):
            self.first_attempts += 1
            self.first_attempt_done.set()

    async def create(self, bodies: list[dict[str, Any]]) -> None:
        """One burst: every pod through /mutate and stored before the scheduler sees any of them."""
        self.running.clear()
        created = now_ns()
        mutated = await asyncio.gather(*(self.live.mutate(body) for body in bodies))
        await self.live.write("pods", list(mutated))
        await self.live.wait_seen(len(self.pods) + len(mutated))
        for body in mutated:
            pod = PodState(f"{body['metadata']['namespace']}/{body['metadata']['name']}", body, created)
            self.pods.append(pod)
            self.queue.add(pod, now_ns())
        self.running.set()
        self.wakeup.set()

    async def add_nodes(self) -> None:
        """The scenario's autoscaler: its nodes written to the apiserver, empty and unlabelled."""
        now = time.monotonic()
        for obj in self.scenario.added:
            self.added_at[obj["metadata"]["name"]] = now
        await self.live.write("nodes", self.scenario.added)

    async def run(self) -> Result:
        started = time.monotonic()
        watch = asyncio.create_task(self.live.watch_nodes(await self.live.api_rv(), self.node_event))
        loop = asyncio.create_task(self.scheduler())
        pods = self.scenario.pods
        try:
            for first in range(0, len(pods), self.scenario.burst):
                if self.scenario.added and first >= self.scenario.add_after and not self.added_at:
                    await self.add_nodes()
                await self.create(pods[first : first + self.scenario.burst])
                while self.first_attempts < len(self.pods):  # the next burst once each was tried
                    self.first_attempt_done.clear()
                    waiter = asyncio.ensure_future(self.first_attempt_done.wait())
                    done, _ = await asyncio.wait(
                        [waiter, loop], timeout=300, return_when=asyncio.FIRST_COMPLETED
                    )
                    waiter.cancel()
                    self._check(loop)
                    if not done:
                        raise RuntimeError("no scheduling attempt finished in 300 s")
            self.last_progress = time.monotonic()
            while (
                any(p.node is None for p in self.pods) and time.monotonic() - self.last_progress < self.settle
            ):
                await asyncio.sleep(0.1)
                self._check(loop)
            # (d): the time from a node's add to its labels, for every added node (at most 10 minutes)
            deadline = time.monotonic() + 600
            while self.mode in HINT_MODES and len(self.labelled_after) < len(self.added_at):
                if time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.1)
        finally:
            self.stopped = True
            self.running.set()
            self.wakeup.set()
            await asyncio.gather(loop, return_exceptions=True)
            await asyncio.gather(*self.binds, return_exceptions=True)
            watch.cancel()
            await asyncio.gather(watch, return_exceptions=True)
        return self.result(time.monotonic() - started)

    def _check(self, loop: asyncio.Task[None]) -> None:
        if self.failure is not None:
            raise RuntimeError(f"a binding call failed: {self.failure!r}") from self.failure
        if loop.done():
            loop.result()  # the scheduler loop's own error
            raise RuntimeError("the scheduler loop ended")

    def over_rate(self) -> int:
        """Writes past what the token bucket allows: in any stretch of the run, at most burst +
        rate x its length (the watch's delivery jitter given 50 ms)."""
        times, rate, burst = self.write_times, self.live.max_per_second, self.live.burst
        worst, first = 0, 0
        for last in range(len(times)):
            while times[last] - times[first] > 60:
                first += 1
            for start in range(first, last + 1):
                allowed = burst + rate * (times[last] - times[start] + 0.05)
                worst = max(worst, int(last - start + 1 - allowed))
        return worst

    def result(self, seconds: float) -> Result:
        placed = [p for p in self.pods if p.node is not None]
        pending = [p for p in self.pods if p.node is None]
        waits = [(p.placed_ns - p.created_ns) / 1e9 for p in placed if p.placed_ns is not None]
        # a node never labelled counts as labelled at the end: its lag is at least that
        end = time.monotonic()
        lags = [self.labelled_after.get(name, end - at) for name, at in self.added_at.items()]
        return Result(
            self.scenario.name,
            self.mode,
            len(self.pods),
            len(placed),
            self.cluster.stranded(pending),
            sum(p.denied for p in self.pods),
            sum(p.attempts for p in self.pods),
            self.unschedulable,
            sum(1 for p in self.pods if HINT_ANNOTATION in (p.body["metadata"].get("annotations") or {})),
            self.live.unchecked,
            percentile_ms(waits, 0.5) / 1000,
            percentile_ms(waits, 0.99) / 1000,
            seconds,
            workload=self.scenario.workload,
            node_writes=len(self.write_times),
            bindings=self.bindings,
            over_rate=self.over_rate(),
            added_labelled_p50_s=percentile_ms(lags, 0.5) / 1000,
            added_labelled_p99_s=percentile_ms(lags, 0.99) / 1000,
            placed_on_added=sum(1 for p in placed if p.node in self.added_at),
        )


async def run_one(
    scenario: Scenario,
    mode: str,
    seed: int,
    settle: float,
    port: int,
    max_per_second: float = 5.0,
    burst: int = 10,
    replicas: int = 1,
    extender_via: str = "leader",
    delays: ApiDelays | None = None,
) -> Result:
    async with Live(scenario, mode, port, max_per_second, burst, replicas, extender_via) as live:
        result = await Run(scenario, mode, live, seed, settle, delays).run()
        _, deferred = await live.cluster_writes()
        result.deferred = sum(deferred.values())
        result.queued_at_end, result.stalest_at_end_s = await live.label_backlog()
        result.replicas, result.extender_via, result.seed = replicas, extender_via, seed
        result.relayed = await live.extender_relayed()
        return result
