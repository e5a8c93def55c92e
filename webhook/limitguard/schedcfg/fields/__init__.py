"""Field readers: what every rule uses to read a configuration's fields and say what is wrong with
them (defensive value accessors, Go durations, Kubernetes-style findings). Above the tables, below
the schemas, the args and the rules."""
