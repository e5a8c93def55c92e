"""The validating webhook with its unbound-pod check worked out node by node (check_unbound)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from limitguard.admission.validating import Validator
from limitguard.core.config import Config, LimitAwareConfig
from limitguard.core.eligibility import Placement
from limitguard.core.limitaware import NodeLike
from limitguard.core.response import Response
from limitguard.state.records import NodeRecord
from limitguard.state.store import ClusterState
from limitguard.state.table import NodeTable
from limitguard.testing.reference.unbound import check_unbound


class NodeByNode:
    """state.scan.UnboundVerdicts' place in the validator: every node visited, nothing remembered."""

    def __init__(self, state: ClusterState) -> None:
        self.state = state

    def _candidates(self, placement: Placement) -> Iterable[NodeRecord]:
        """Only nodes that can match the pod's nodeSelector, looked up in the label index (name
        order; the node table names the same example node)."""
        if placement.selector:
            return self.state.nodes_labelled(dict(placement.selector))
        return self.state.nodes()

    def verdict(
        self,
        table: NodeTable,
        subject: str,
        pod_limits: Mapping[str, int],
        placement: Placement,
        record_of: Callable[[str], NodeLike | None],
        allocated_of: Callable[[str], Mapping[str, int]],
        config: LimitAwareConfig,
        *,
        exempt_reason: str | None = None,
        sources: Mapping[str, str] | None = None,
    ) -> Response:
        return check_unbound(
            subject,
            pod_limits,
            placement,
            self._candidates(placement),
            allocated_of,
            config,
            exempt=exempt_reason is not None,
            exempt_reason=exempt_reason or "",
            sources=sources,
        )


class ReferenceValidator(Validator):
    """Validator, but an unbound pod is judged by visiting the nodes one by one."""

    def __init__(self, state: ClusterState, config: Config, *args: object, **kwargs: object) -> None:
        super().__init__(state, config, *args, **kwargs)  # type: ignore[arg-type]
        self._unbound = NodeByNode(state)  # type: ignore[assignment]
