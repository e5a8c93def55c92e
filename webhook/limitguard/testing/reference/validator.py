"""The validating webhook with its unbound-pod check worked out node by node (check_unbound)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from limitguard.admission.validating import Validator
from limitguard.core.eligibility import Placement
from limitguard.core.response import Response
from limitguard.state.records import NodeRecord
from limitguard.testing.reference.unbound import check_unbound


class ReferenceValidator(Validator):
    """Validator, but an unbound pod is judged by visiting the nodes one by one."""

    def _candidates(self, placement: Placement) -> Iterable[NodeRecord]:
        """Only nodes that can match the pod's nodeSelector, looked up in the label index (name
        order; the production scan names the same example node)."""
        if placement.selector:
            return self.state.nodes_labelled(dict(placement.selector))
        return self.state.nodes()

    def unbound(
        self,
        subject: str,
        limits: Mapping[str, int],
        placement: Placement,
        namespace: str,
        exempt: str | None,
        sources: Mapping[str, str] | None,
    ) -> Response:
        return check_unbound(
            subject,
            limits,
            placement,
            self._candidates(placement),
            self.state.allocated,
            self._limit_aware(namespace),
            exempt=exempt is not None,
            exempt_reason=exempt or "",
            sources=sources,
        )
