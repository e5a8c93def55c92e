"""`serve --event-loop`: which loop each choice gives, and a clear error when uvloop is demanded but absent."""

from __future__ import annotations

import asyncio
import sys

import pytest
from limitguard.http.eventloop import EventLoopError, loop_factory

uvloop = pytest.importorskip("uvloop")


def run_on(factory) -> type:
    """The class of the loop *factory* makes, seen from a coroutine running on it."""

    async def running_loop() -> type:
        return type(asyncio.get_running_loop())

    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(running_loop())


@pytest.mark.parametrize(
    ("choice", "expected"), [("auto", "uvloop"), ("uvloop", "uvloop"), ("asyncio", "asyncio")]
)
def test_each_choice_runs_on_its_loop(choice: str, expected: str) -> None:
    name, factory = loop_factory(choice)
    assert name == expected
    loop_class = run_on(factory)
    assert issubclass(loop_class, uvloop.Loop) == (expected == "uvloop")


def test_without_uvloop_auto_falls_back_and_uvloop_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # `import uvloop` now raises ImportError
    name, factory = loop_factory("auto")
    assert name == "asyncio"
    assert not issubclass(run_on(factory), uvloop.Loop)
    with pytest.raises(EventLoopError, match="uvloop is not installed"):
        loop_factory("uvloop")


def test_an_unknown_loop_is_refused_with_the_choices() -> None:
    with pytest.raises(EventLoopError, match=r"'trio'.*auto, uvloop, asyncio"):
        loop_factory("trio")
