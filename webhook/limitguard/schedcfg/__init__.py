"""Validator for kube-scheduler configuration files (KubeSchedulerConfiguration and plugin args).

Public API used by the webhook and the CLI:

* :func:`validate_text` - validate any input form (bare config, ConfigMap, List, multi-document YAML);
* :func:`configmap_verdict` - cheap verdict for a ConfigMap in an admission request (None when no data
  value mentions ``KubeSchedulerConfiguration``);
* :class:`Report` / :class:`Finding` - results; ``str(finding)`` is the one-line SPEC 6 form;
* :class:`Release` - the kube-scheduler release (and feature gates) both validate for (default 1.37).

Layout: ``rules/`` (releases and plugin tables, defaulting, config-level rules, framework checks) and
``args/`` (one registry of args kinds, one module per kind) mirror kube-scheduler's validation.go and
validation_pluginargs.go; see docs/validator.md.
"""

from .report import Finding, Report
from .rules.releases import Release
from .validator import configmap_verdict, validate_text

__all__ = ["Finding", "Release", "Report", "configmap_verdict", "validate_text"]
