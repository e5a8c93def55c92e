"""`serve --event-loop`: which loop each choice gives, a clear error when uvloop is demanded but absent,
and the running loop known without a system call."""

from __future__ import annotations

import asyncio
import sys

import pytest

from limitguard.http.eventloop import EventLoopError, loop_factory, running_loop

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


@pytest.mark.parametrize("choice", ["uvloop", "asyncio"])
def test_the_served_loop_is_known_without_asking_asyncio(
    choice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """asyncio.get_running_loop() makes a getpid() system call on CPython 3.11, once per call."""
    _, factory = loop_factory(choice)

    async def both() -> tuple[object, object]:
        served = asyncio.get_running_loop()
        with monkeypatch.context() as patched:
            patched.setattr(asyncio, "get_running_loop", lambda: pytest.fail("asked asyncio"))
            return served, running_loop()

    with asyncio.Runner(loop_factory=factory) as runner:
        served, known = runner.run(both())
    assert known is served


def test_any_other_loop_is_asked_for_and_none_running_is_an_error() -> None:
    _, factory = loop_factory("asyncio")
    with asyncio.Runner(loop_factory=factory) as runner:
        served = runner.get_loop()

        async def in_a_thread() -> tuple[object, object]:
            return asyncio.get_running_loop(), running_loop()

        # another thread's loop, while the served one is made and idle
        own, known = asyncio.run(asyncio.to_thread(asyncio.run, in_a_thread()))
        assert known is own and own is not served

        async def beside_it() -> tuple[object, object]:
            return asyncio.get_running_loop(), running_loop()

        other = asyncio.new_event_loop()  # not made by loop_factory
        try:
            own, known = other.run_until_complete(beside_it())
        finally:
            other.close()
        assert known is own and own is not served
    with pytest.raises(RuntimeError):
        running_loop()
