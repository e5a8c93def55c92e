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
from bench.placement.live import Live
from bench.placement.model import Resources
from bench.placement.scenarios import RATIO, Scenario
from bench.placement.scheduler import NodeState, PodState, SchedulingQueue, profile_weights
from limitguard.core.quantity import to_units

MODES = ("admission", "hints", "extender")
HINT_ANNOTATION = "limitguard.io/placement-hint"


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

    @property
    def denied_per_placed(self) -> float:
        return self.denied / self.placed if self.placed else float("inf")


def node_states(scenario: Scenario) -> list[NodeState]:
    states = []
    for obj in scenario.nodes:
        allocatable = obj["status"]["allocatable"]
        cpu, memory = to_units("cpu", allocatable["cpu"]), to_units("memory", allocatable["memory"])
        states.append(
            NodeState(
                obj["metadata"]["name"],
                dict(obj["metadata"].get("labels") or {}),
                Resources(cpu, memory),
                Resources(cpu * RATIO["cpu"] // 100, memory * RATIO["memory"] // 100),
                allowed_pods=int(allocatable["pods"]),
                taints=tuple(obj.get("spec", {}).get("taints") or ()),
            )
        )
    by_name = {state.name: state for state in states}
    for bound in scenario.bound:
        by_name[bound["spec"]["nodeName"]].add(PodState("", bound, 0))
    return states


def now_ns() -> int:
    return time.time_ns()


class Run:
    """The scheduler loop, its binding calls and the creation of the pods, on one event loop."""

    def __init__(self, scenario: Scenario, mode: str, live: Live, seed: int, settle: float) -> None:
        self.scenario, self.mode, self.live, self.settle = scenario, mode, live, settle
        self.cluster = Columns(node_states(scenario))
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
        if await self.live.bind(pod.body, name):
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

    async def run(self) -> Result:
        started = time.monotonic()
        loop = asyncio.create_task(self.scheduler())
        pods = self.scenario.pods
        try:
            for first in range(0, len(pods), self.scenario.burst):
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
        finally:
            self.stopped = True
            self.running.set()
            self.wakeup.set()
            await asyncio.gather(loop, return_exceptions=True)
            await asyncio.gather(*self.binds, return_exceptions=True)
        return self.result(time.monotonic() - started)

    def _check(self, loop: asyncio.Task[None]) -> None:
        if self.failure is not None:
            raise RuntimeError(f"a binding call failed: {self.failure!r}") from self.failure
        if loop.done():
            loop.result()  # the scheduler loop's own error
            raise RuntimeError("the scheduler loop ended")

    def result(self, seconds: float) -> Result:
        placed = [p for p in self.pods if p.node is not None]
        pending = [p for p in self.pods if p.node is None]
        waits = [(p.placed_ns - p.created_ns) / 1e9 for p in placed if p.placed_ns is not None]
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
        )


async def run_one(scenario: Scenario, mode: str, seed: int, settle: float, port: int) -> Result:
    async with Live(scenario, hints=mode == "hints", port=port) as live:
        return await Run(scenario, mode, live, seed, settle).run()
