"""Validator for kube-scheduler configuration files (KubeSchedulerConfiguration and plugin args).

Public API used by the webhook and the CLI:

* :func:`validate_text` - validate any input form (bare config, ConfigMap, List, multi-document YAML);
* :func:`configmap_verdict` - cheap verdict for a ConfigMap in an admission request (None when no data
  value mentions ``KubeSchedulerConfiguration``);
* :class:`Report` / :class:`Finding` - results; ``str(finding)`` is the one-line Kubernetes field-error form;
* :class:`Release` - the Kubernetes release (and feature gates) of kube-scheduler's code both validate
  for (default 1.37); the scheduler build that reads a file is chosen per configuration.

Layers, each importing only those below it (import-linter contracts in pyproject.toml):

* ``validator`` - input forms and entry points; ``report`` - findings gathered, text and JSON;
* ``schedulers`` - which scheduler reads a file (named or detected); ``documents`` - bounded YAML;
* ``rules`` - defaulting, validation.go's rules, the framework's checks, the args dispatcher;
* ``args`` - one module per args kind (validation_pluginargs.go), the registry, the projects' builds;
* ``schemas`` - JSON Schemas as Kubernetes-style findings;
* ``fields`` - value accessors, Go durations, the findings every rule builds;
* ``tables`` - releases, plugin tables, builds, readers: facts without rules.

See docs/architecture.md and docs/validator.md.
"""

from .report import Finding, Report
from .tables.releases import Release
from .validator import configmap_verdict, validate_text

__all__ = ["Finding", "Release", "Report", "configmap_verdict", "validate_text"]
