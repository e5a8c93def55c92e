"""Where the cluster state comes from: the Kubernetes API client, list/watch reflectors, and the
live and file feeds that fill `limitguard.state`."""
