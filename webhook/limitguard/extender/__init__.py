"""kube-scheduler HTTP extender: filter by limit-to-allocatable ratio, prioritize by weighted scorers."""

from limitguard.extender.config import ExtenderConfig, ExtenderConfigError, extender_config_from_mapping

__all__ = ["ExtenderConfig", "ExtenderConfigError", "extender_config_from_mapping"]
