"""The reference oracle: limitguard's node checks worked out node by node, over the state's dicts.

Production answers every node question on the node table (limitguard.state.scan,
limitguard.extender.columnar). This is the plain implementation those scans replaced, kept where
the product cannot import it (the import contract forbids the product importing
limitguard.testing), for the property tests to compare with: `check_unbound` (any eligible node
with room, one node at a time), `ReferenceValidator` and `ReferenceExtender` (the validator and
the extender answering through it and through per-node loops).
"""

from limitguard.testing.reference.extender import ReferenceExtender
from limitguard.testing.reference.unbound import check_unbound
from limitguard.testing.reference.validator import ReferenceValidator

__all__ = ["ReferenceExtender", "ReferenceValidator", "check_unbound"]
