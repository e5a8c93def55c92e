"""PodState score (kubernetes-sigs/scheduler-plugins `PodState`).

Terminating pods will leave the node soon, so they raise its score; nominated pods (preemptors
waiting for room the scheduler freed on that node) will arrive soon, so they lower it:

    raw = terminating pods on the node - pods nominated to the node

then min-max normalised across the candidates (all equal -> 0).
"""

from __future__ import annotations

NAME = "PodState"


def pod_state_raw(terminating: int, nominated: int) -> int:
    return terminating - nominated
