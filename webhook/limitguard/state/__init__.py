"""The cluster as limitguard knows it: node and pod records, per-node sums, and the binding ledger."""
