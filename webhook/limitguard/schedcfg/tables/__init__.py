"""The tables of the scheduler-configuration validator: facts, no rules. What a Kubernetes release of
kube-scheduler serves and registers (``releases``, ``plugin_tables``, ``api``; its feature gates are
limitguard.core.kubefeatures'), what each out-of-tree scheduler build is (``builds``), and the reader
every rule is given (``readers``). The lowest layer of ``limitguard.schedcfg``."""
