"""Metrics of the replica set: who leads, what is forwarded to the leader and how it went."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

FORWARD_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


class ReplicaMetrics:
    """Registered into the server's own registry (one per server, so tests can run several)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.leader = Gauge(
            "limitguard_leader",
            "1 while this replica holds the leader Lease, 0 as a follower",
            registry=registry,
        )
        self.deciding = Gauge(
            "limitguard_leader_deciding",
            "1 while this replica leads and its cache has caught up (it decides ledger requests)",
            registry=registry,
        )
        self.leader_transitions = Counter(
            "limitguard_leader_transitions",
            "This replica acquiring or losing the leader Lease",
            ["direction"],
            registry=registry,
        )
        self.catch_ups = Counter(
            "limitguard_leader_catch_ups",
            "A new leader's cache reached the Lease's resourceVersion (by the watch or a relist)",
            ["how"],
            registry=registry,
        )
        self.forwarded = Counter(
            "limitguard_forwarded_requests",
            "Ledger requests a follower forwarded to the leader, by answer",
            ["decision"],
            registry=registry,
        )
        self.forward_failures = Counter(
            "limitguard_forward_failures",
            "Forwards that got no answer from a leader, by reason",
            ["reason"],
            registry=registry,
        )
        self.forward_latency = Histogram(
            "limitguard_forward_duration_seconds",
            "Round trip of a forwarded AdmissionReview or extender call to the leader",
            buckets=FORWARD_BUCKETS,
            registry=registry,
        )
        self.extender_local_answers = Counter(
            "limitguard_extender_local_answers",
            "Extender calls a follower answered from its own state: no leader known, or no answer from it",
            ["reason"],
            registry=registry,
        )
        self.no_leader_answers = Counter(
            "limitguard_no_leader_answers",
            "Ledger requests answered by replicas.noLeaderPolicy (no deciding leader reachable)",
            ["policy"],
            registry=registry,
        )
