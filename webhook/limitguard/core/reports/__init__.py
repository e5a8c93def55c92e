"""Reports over the whole cluster for the operator: `explain` (one pod, every node) and `audit`."""
