"""The extender's preempt verb: keep a candidate node only where evicting its victims frees the
preemptor's limits.

kube-scheduler picks victims by requests alone (DefaultPreemption's SelectVictimsOnNode runs the
in-tree filters, never the extenders), then asks each extender with a `preemptVerb` to confirm or
narrow its candidates (pkg/scheduler/framework/preemption `callExtenders`). Without this verb it
would evict lower-priority pods on a node that still lacks room by limits, for a binding limitguard
then denies. So each node is judged as the binding check judges the preemptor's binding there, with
the victims gone: the node's summed limits (the ledger included) plus the room held for nominated
pods of equal or higher priority, minus what each victim adds to that sum, against the node's ratio.

What is answered (ExtenderPreemptionResult holds NodeNameToMetaVictims, UIDs only):

- a node where the victims free the room: its victims and NumPDBViolations as they came;
- a node where they do not: left out, so kube-scheduler drops it (the answer proposes no extra
  victims: limitguard does not watch PodDisruptionBudgets, so it could not tell which addition
  would violate one);
- never a node with no victims: a non-ignorable extender's empty list fails the whole preemption
  ("expected at least one victim pod on node");
- never a UID that did not come with that node: kube-scheduler resolves each against its own cache.

What limitguard cannot judge is answered as it came (fail open), logged and counted: a node or a
victim it does not know (or knows on another node), a preemptor that is exempt, excluded, has no
limits, is not enforced under Deny or cannot be read, and a state that is not synced yet.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from limitguard.core.config import Config, Enforcement
from limitguard.core.fit import fits
from limitguard.core.limitaware import effective_ratios
from limitguard.core.podlimits import PodSpecError, pod_amounts
from limitguard.extender.victims import NodeVictims, PreemptionArgs
from limitguard.state.records import PodRecord, controller_of, is_mirror_pod
from limitguard.state.store import ClusterState

log = logging.getLogger(__name__)

MAX_NAMED = 8  # node names in the log line about nodes passed unjudged (a call may carry hundreds)


@dataclass(frozen=True)
class PreemptionOutcome:
    kept: dict[str, NodeVictims]  # the answer: node -> its victims (as they came)
    reason: str  # checked | exempt | excluded | no-limits | not-enforced | not-ready | unreadable-pod
    dropped: int = 0  # nodes left out: their victims do not free the pod's limits, or there are none
    unknown: int = 0  # nodes passed as they came because limitguard does not know them or a victim


def proposed(victims: Mapping[str, NodeVictims]) -> dict[str, NodeVictims]:
    """The nodes that came with at least one victim, as they came (the fail-open answer)."""
    return {node: found for node, found in victims.items() if found.uids}


class Preemption:
    """Answers `POST <prefix>/preempt` from the cluster state, without HTTP."""

    def __init__(self, state: ClusterState, config: Config) -> None:
        self.state = state
        self.config = config

    def _as_they_came(self, args: PreemptionArgs, reason: str) -> PreemptionOutcome:
        kept = proposed(args.victims)
        return PreemptionOutcome(kept, reason, dropped=len(args.victims) - len(kept))

    def _not_judged(self, args: PreemptionArgs) -> str | None:
        """Why the preemptor is not limitguard's to judge (every node answered as it came), or None."""
        limit_aware = self.config.limit_aware
        metadata = args.pod_metadata
        namespace = str(metadata.get("namespace") or "default")
        if namespace in self.config.excluded_namespaces:
            return "excluded"
        enforcement = limit_aware.namespace_enforcement.get(namespace) or limit_aware.enforcement
        if enforcement is not Enforcement.DENY:
            return "not-enforced"  # the binding would be allowed wherever it goes
        if limit_aware.exempts(controller_of(metadata)) or is_mirror_pod(metadata):
            return "exempt"
        return None

    def _victim_records(self, args: PreemptionArgs) -> dict[str, PodRecord]:
        """uid -> the state's record of each victim that can be found. Whole pods are looked up by
        name; UIDs alone by one pass over the pods bound to the candidate nodes."""
        records: dict[str, PodRecord] = {}
        by_uid: set[str] = set()
        for found in args.victims.values():
            if found.names is None:
                by_uid.update(found.uids)
                continue
            for uid, (namespace, name) in zip(found.uids, found.names, strict=True):
                record = self.state.pod(namespace, name)
                if record is not None and record.uid == uid:
                    records[uid] = record
        if by_uid:
            nodes = set(args.victims)
            for record in self.state.pods():
                if record.node_name in nodes and record.uid in by_uid:
                    records[record.uid] = record
        return records

    def preempt(self, args: PreemptionArgs) -> PreemptionOutcome:
        if not self.state.ready:
            log.info("extender preempt: state not synced, victims passed as proposed")
            return self._as_they_came(args, "not-ready")
        if reason := self._not_judged(args):
            return self._as_they_came(args, reason)
        try:
            status = args.pod.get("status")
            amounts = pod_amounts(args.pod_spec, status if isinstance(status, Mapping) else None)
        except PodSpecError as error:
            log.warning("extender preempt: pod %s unreadable, victims passed: %s", args.describe_pod(), error)
            return self._as_they_came(args, "unreadable-pod")
        used = [(resource, amount) for resource, amount in amounts.limits.items() if amount > 0]
        if not used:
            return self._as_they_came(args, "no-limits")
        priority = args.pod_spec.get("priority")
        priority = priority if type(priority) is int else 0
        pod_key = args.describe_pod()
        records = self._victim_records(args)
        limit_aware = self.config.limit_aware
        kept: dict[str, NodeVictims] = {}
        dropped = 0
        unknown: list[str] = []
        for node_name, found in args.victims.items():
            if not found.uids:
                dropped += 1  # never answered: an empty list fails a non-ignorable extender's call
                continue
            node = self.state.node(node_name)
            victims = [records.get(uid) for uid in dict.fromkeys(found.uids)]  # each pod once
            if node is None or any(victim is None or victim.node_name != node_name for victim in victims):
                unknown.append(node_name)
                kept[node_name] = found
                continue
            after = dict(self.state.allocated(node_name))
            # room held for nominated pods of equal or higher priority, as filter and binding count it
            for resource, amount in self.state.nominated_room(node_name, priority, pod_key).items():
                after[resource] = after.get(resource, 0) + amount
            for victim in victims:
                if victim is not None and victim.counted_node:  # what the victim adds to the sum
                    for resource, amount in victim.limits.items():
                        after[resource] = after.get(resource, 0) - amount
            if fits(used, node.allocatable, after, effective_ratios(node, limit_aware)):
                kept[node_name] = found
            else:
                dropped += 1
        if unknown:
            log.info(
                "extender preempt: nodes or victims not in the cache, passed as proposed",
                extra={"pod": pod_key, "nodes": len(unknown), "first": unknown[:MAX_NAMED]},
            )
        return PreemptionOutcome(kept, "checked", dropped, len(unknown))
