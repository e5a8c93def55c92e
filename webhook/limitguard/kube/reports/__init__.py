"""Policy reports and events: the findings where platform teams look, kept by the leader."""
