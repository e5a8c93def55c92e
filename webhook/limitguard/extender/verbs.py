"""The extender's verbs over their decoded arguments: what to answer, and what to answer fail-open.

Plain functions, no HTTP: `limitguard.http` serves them through the same transport as admission.
kube-scheduler treats any non-200 answer as a failed call (an error unless the extender is
`ignorable`), so a bug is answered fail-open (all candidates pass, every score 0, every proposed
victim kept), never a 500.
"""

from __future__ import annotations

from dataclasses import dataclass

from limitguard.extender.preempt import Preemption, proposed
from limitguard.extender.protocol import (
    ExtenderArgs,
    encode_filter_error,
    encode_filter_result,
    encode_priority_columns,
)
from limitguard.extender.service import Extender, ExtenderUnavailable
from limitguard.extender.victims import PreemptionArgs, encode_preemption_result

DEFAULT_PREFIX = "/extender"
VERBS = ("filter", "prioritize")  # over ExtenderArgs; "preempt" takes ExtenderPreemptionArgs
PREEMPT = "preempt"


@dataclass(frozen=True, slots=True)
class Reply:
    payload: bytes
    outcome: str  # checked | scored | not-ready | unavailable | internal-error | ...
    filtered: int = 0  # candidates the filter removed (preempt: nodes left out of the answer)
    unknown: int = 0  # candidates not in the cluster state (passed, scored 0; preempt: kept as proposed)


def filter_reply(extender: Extender, args: ExtenderArgs) -> Reply:
    try:
        outcome = extender.filter(args)
    except ExtenderUnavailable as error:
        return Reply(encode_filter_error(str(error)), "unavailable")
    payload = encode_filter_result(args, outcome.passed, outcome.failed)
    return Reply(payload, outcome.reason, len(outcome.failed), outcome.unknown)


def prioritize_reply(extender: Extender, args: ExtenderArgs) -> Reply:
    outcome = extender.prioritize(args)
    scores = outcome.score_array if outcome.score_array is not None else outcome.scores
    payload = None
    if outcome.template is not None and outcome.score_array is not None:
        payload = outcome.template.encode(outcome.score_array)
    if payload is None:
        payload = encode_priority_columns(outcome.hosts, scores, outcome.host_json)
    return Reply(payload, outcome.reason, unknown=outcome.unknown)


def fail_open_reply(verb: str, args: ExtenderArgs) -> Reply:
    if verb == "filter":
        return Reply(encode_filter_result(args, args.node_names, {}), "internal-error")
    return Reply(encode_priority_columns(args.node_names, [0] * len(args.node_names)), "internal-error")


def preempt_reply(preemption: Preemption, args: PreemptionArgs) -> Reply:
    outcome = preemption.preempt(args)
    return Reply(encode_preemption_result(outcome.kept), outcome.reason, outcome.dropped, outcome.unknown)


def preempt_fail_open_reply(args: PreemptionArgs) -> Reply:
    """Every node that came with victims, as it came (a node with none is never answered)."""
    return Reply(encode_preemption_result(proposed(args.victims)), "internal-error")
