"""Test support shipped with the package: the fake apiserver, shared by the test suite and the benchmarks.

Nothing in limitguard itself imports this package (an import-linter contract checks it)."""
