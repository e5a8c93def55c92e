"""kube-scheduler HTTP extender: filter by limit-to-allocatable ratio, prioritize by weighted scorers."""

from limitguard.extender.config import ExtenderConfig, ExtenderConfigError, extender_config_from_mapping
from limitguard.extender.routes import add_extender_routes

__all__ = ["ExtenderConfig", "ExtenderConfigError", "add_extender_routes", "extender_config_from_mapping"]
