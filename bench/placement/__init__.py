"""Placement benchmark: kube-scheduler's default profile, modelled, against a real limitguard.

(placeholder: the model's sources)
"""
