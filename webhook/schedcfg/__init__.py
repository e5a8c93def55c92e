"""Validator for kube-scheduler configuration files (KubeSchedulerConfiguration and plugin args).

Public API used by the webhook and the CLI:

* :func:`validate_text` - validate any input form (bare config, ConfigMap, List, multi-document YAML);
* :func:`configmap_verdict` - cheap verdict for a ConfigMap in an admission request (None when no data
  value mentions ``KubeSchedulerConfiguration``);
* :class:`Report` / :class:`Finding` - results; ``str(finding)`` is the one-line SPEC 6 form.
"""

from .report import Finding, Report
from .validator import configmap_verdict, validate_text

__all__ = ["Finding", "Report", "configmap_verdict", "validate_text"]
