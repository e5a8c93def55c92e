"""Rules of the scheduler-configuration validator, split by topic as kube-scheduler's are:

* ``releases`` / ``plugin_tables`` - what each supported Kubernetes release serves, gates and registers;
* ``defaults`` - v1 defaulting (defaults.go) with warnings where a user's value is replaced;
* ``config`` - configuration-level rules (validation.go);
* ``effective`` - what the framework runs at each extension point (defaults and profile merged);
* ``framework`` - what the framework refuses when it builds a profile (plugins and extension points);
* ``fields`` - fields a release's strict decoder does not know (feature gates: limitguard.core.kubefeatures);
* ``durations`` - Go duration strings.

Plugin args rules live in ``limitguard.schedcfg.args`` (validation_pluginargs.go), one module per kind.
"""
