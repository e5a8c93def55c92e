import pytest

from limitguard.core.config import Enforcement
from limitguard.core.response import (
    MAX_MESSAGE_LENGTH,
    MAX_WARNING_LENGTH,
    Response,
    allowed,
    denied,
    enforce,
    errored,
    patched,
    warned,
    warning,
)
from limitguard.core.text import VALUE_LENGTH, clip


def test_long_warnings_are_cut_below_the_limit():
    assert warning("short") == "short"
    cut = warning("x" * 500)
    assert len(cut) < MAX_WARNING_LENGTH and cut.endswith(" ...")
    assert warning("y" * (MAX_WARNING_LENGTH - 1)) == "y" * (MAX_WARNING_LENGTH - 1)


def test_enforcement_actions():
    deny = enforce("exceeds", "long message", "brief", Enforcement.DENY)
    warn = enforce("exceeds", "long message", "brief", Enforcement.WARN)
    dry = enforce("exceeds", "long message", "brief", Enforcement.DRY_RUN)
    assert (deny.allowed, deny.code, deny.action, deny.message) == (False, 403, "deny", "long message")
    assert (warn.allowed, warn.warnings, warn.action) == (True, ("brief",), "warn")
    assert (dry.allowed, dry.warnings, dry.action) == (True, (), "dryrun")


def test_constructors_build_the_answers_of_each_kind():
    assert allowed("fits", "w" * 500).warnings[0].endswith(" ...")
    assert (denied("exceeds", "why").allowed, denied("exceeds", "why").code) == (False, 403)
    assert errored("malformed", "bad").code == 400 and errored("incomplete", "later", 503).code == 503
    assert warned("no-room", "long", "brief") == Response(
        True, "no-room", message="long", warnings=("brief",), action="warn"
    )
    patch = [{"op": "add", "path": "/x", "value": {"a": "ü"}}]
    answer = patched("defaulted", patch)
    assert (answer.patch.operations(), answer.action) == (patch, "mutate")
    answer.patch.operations()[0]["value"]["a"] = "changed"  # a fresh copy each time: nothing shared
    assert answer.patch.operations() == patch and patched("again", answer.patch).patch is answer.patch


def test_clip_keeps_short_text_and_says_how_much_it_cut():
    assert clip("500m") == "500m"
    for size in (VALUE_LENGTH + 1, 1000, 10**7):
        clipped = clip("x" * size)
        kept = clipped.index(".")
        assert clipped == "x" * kept + f"... ({size - kept} more characters)"
        assert VALUE_LENGTH - 10 < len(clipped) <= VALUE_LENGTH


@pytest.mark.parametrize("build", [lambda m: denied("r", m), lambda m: errored("r", m)])
def test_messages_are_bounded_whatever_they_echo(build):
    response = build("pod " + "n" * 1_000_000)
    assert len(response.message) <= MAX_MESSAGE_LENGTH
    assert response.message.startswith("pod nnn")
