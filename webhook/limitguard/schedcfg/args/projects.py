"""The out-of-tree projects' builds by scheduler name, tabled beside the args kinds they decode."""

from __future__ import annotations

from ..tables.builds import Build
from ..tables.readers import KOORD_SCHEDULER, SCHEDULER_PLUGINS
from . import koordinator, sigs

#: Scheduler name -> its builds, oldest first.
PROJECT_BUILDS: dict[str, tuple[Build, ...]] = {
    KOORD_SCHEDULER: koordinator.BUILDS,
    SCHEDULER_PLUGINS: sigs.BUILDS,
}


def plugins_of(builds: tuple[Build, ...]) -> frozenset[str]:
    """Every plugin any of ``builds`` registers."""
    return frozenset(name for build in builds for name in build.plugins)


def owners(plugin: str) -> list[str]:
    """The out-of-tree schedulers any build of which registers ``plugin``."""
    return [name for name, builds in PROJECT_BUILDS.items() if plugin in plugins_of(builds)]


__all__ = ["PROJECT_BUILDS", "owners", "plugins_of"]
