"""Rules of the scheduler-configuration validator, split by topic as kube-scheduler's are:

* ``defaults`` - v1 defaulting (defaults.go) with warnings where a user's value is replaced;
* ``config`` - configuration-level rules (validation.go);
* ``unknown_fields`` - fields a release's strict decoder does not know;
* ``effective`` - what the framework runs at each extension point (defaults and profile merged);
* ``framework`` - what the framework refuses when it builds a profile (plugins and extension points);
* ``queue_sort`` - one queue sort, the same in every profile, and a bind plugin;
* ``score_weights`` - a score plugin that alone decides the ranking;
* ``plugin_args`` - ``pluginConfig[].args`` dispatched to their kind (``limitguard.schedcfg.args``).

Every rule is given the ``tables.readers.Reader``: the scheduler that reads the file and the
Kubernetes release of its in-tree code.
"""
