"""Serving certificates: a self-signed set on disk, or a Secret and caBundle patches in a cluster."""
