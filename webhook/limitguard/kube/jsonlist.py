"""The items of a large JSON List, parsed by orjson a window of whole items at a time.

ijson streams a List item by item, but builds each object through its parser's callbacks: ~3x
the time orjson takes for the same bytes, and most of a 150,000-pod file's load. orjson parses
only whole documents, and the whole 51 MB file is over 500 MB of objects at once. So this finds
where the items end, with a few vector passes over each window of the file, and hands orjson a
run of whole items at a time (`[` + the run + `]`):

- a quote is a string delimiter unless the run of backslashes right before it has odd length;
- a bracket is structural when an even number of delimiters precede it (it is outside strings);
- the running sum of structural openers (+1) and closers (-1) is the depth; an item of the List's
  top-level `items` array ends where a closer brings the depth back to the array's.

orjson still reads every byte of every item and the rest of the document is parsed too (with an
empty `items`), so invalid JSON is refused as it would be whole; the scan only decides where to
cut. A document whose top-level `items` array does not open in its first megabyte is `NotAList`:
the caller reads it another way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

import numpy as np
import orjson

from limitguard.errors import LimitguardError

# Read, scanned and (in whole items) parsed at a time: about 200 pods. Larger runs cost memory (1 MB:
# 26 MB more retained at 150,000 pods, the survivors of each run scattered over its freed objects).
WINDOW_BYTES = 1 << 16
HEAD_BYTES = 1 << 20  # the top-level `items` array must open within this much of the document
QUOTE, BACKSLASH = 0x22, 0x5C
WHITESPACE = b" \t\n\r"  # JSON's; bytes.strip() would also take \x0b and \x0c


class NotAList(LimitguardError):
    """No top-level `items` array opens within the first HEAD_BYTES: no item was handed out."""


class ListError(LimitguardError, ValueError):
    """The document is not valid JSON (the message says where)."""


class Scanner:
    """Structural brackets of consecutive windows, with the state carried between them."""

    def __init__(self) -> None:
        self.in_string = False
        self.depth = 0

    def feed(
        self, window: bytes | memoryview, backslashes: bool | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(positions, depth after each, whether each opens) of the brackets outside strings.
        *window* must not end inside a run of backslashes (the caller holds such a run back).
        *backslashes*: whether the window holds any, when the caller knows (a memoryview is not
        searched as fast as bytes)."""
        data = np.frombuffer(window, np.uint8)
        quotes = np.flatnonzero(data == QUOTE)
        if len(quotes) and (BACKSLASH in window if backslashes is None else backslashes):
            quotes = quotes[~_escaped(data, quotes)]
        folded = data | 0x20  # '[' -> '{', ']' -> '}'
        brackets = np.flatnonzero((folded == 0x7B) | (folded == 0x7D))
        outside = (np.searchsorted(quotes, brackets) + self.in_string) % 2 == 0
        brackets = brackets[outside]
        opens = (data[brackets] & 0x02) != 0  # '{' and '[' have bit 1 set, '}' and ']' do not
        depths = self.depth + np.cumsum(np.where(opens, 1, -1))
        if len(depths):
            self.depth = int(depths[-1])
        self.in_string ^= bool(len(quotes) % 2)
        return brackets, depths, opens


def _escaped(data: np.ndarray, quotes: np.ndarray) -> np.ndarray:
    """Which *quotes* follow a run of backslashes of odd length (runs never cross the window start)."""
    slashes = np.flatnonzero(data == BACKSLASH)
    after_slash = np.zeros(len(quotes), bool)
    inner = quotes > 0
    after_slash[inner] = data[quotes[inner] - 1] == BACKSLASH
    if not after_slash.any():
        return after_slash
    starts = np.ones(len(slashes), bool)
    starts[1:] = slashes[1:] != slashes[:-1] + 1
    run_start = slashes[starts][np.cumsum(starts) - 1]  # per backslash, where its run begins
    candidates = quotes[after_slash]
    lengths = candidates - run_start[np.searchsorted(slashes, candidates - 1)]
    escaped = np.zeros(len(quotes), bool)
    escaped[after_slash] = lengths % 2 == 1
    return escaped


def _read_window(stream: BinaryIO, size: int, held: bytes) -> tuple[bytes, bytes]:
    """(window, backslashes held back for the next one): *held* plus what was read, never ending
    in a backslash unless the stream has ended."""
    window = held + stream.read(size)
    while window.endswith(b"\\"):
        kept = window.rstrip(b"\\")
        if kept:
            return kept, window[len(kept) :]
        more = stream.read(size)  # a window of backslashes only: read on until the run ends
        if not more:
            return window, b""
        window += more
    return window, b""


def _items_key(prefix: bytes, bracket: int) -> bool:
    """Whether the `[` at *bracket* is the value of a top-level key "items"."""
    end = len(prefix[:bracket].rstrip(WHITESPACE))
    if prefix[end - 1 : end] != b":":
        return False
    end = len(prefix[: end - 1].rstrip(WHITESPACE))
    if prefix[end - 7 : end] != b'"items"':
        return False
    slashes = end - 7 - len(prefix[: end - 7].rstrip(b"\\"))
    return slashes % 2 == 0  # the opening quote is not escaped


def _batch(run: bytes, first: bool, offset: int) -> list[Any]:
    """The items of *run* (whole items, after the first: each run starts with its comma)."""
    text = run.lstrip(WHITESPACE)
    if not text:
        return []  # the last run: nothing between the last item and the `]`
    if not first:
        if not text.startswith(b","):
            raise ListError(f"expected ',' between the items at byte {offset + len(run) - len(text)}")
        text = text[1:]
        if not text.strip(WHITESPACE):
            raise ListError(f"a ',' after the last item at byte {offset + len(run) - len(text) - 1}")
    try:
        items = orjson.loads(b"[" + text + b"]")
    except orjson.JSONDecodeError as error:  # its position counts the "[" and what lstrip took
        at = offset + len(run) - len(text) + error.pos - 1
        raise ListError(f"{error.msg} at byte {at}") from None
    return items  # type: ignore[no-any-return]


def _check_rest(head: bytes, tail: bytes, tail_at: int) -> None:
    """The document around the items (*tail* starts at byte *tail_at*), parsed with an empty
    `items` in their place."""
    try:
        document = orjson.loads(head + b"[]" + tail)
    except orjson.JSONDecodeError as error:
        at = error.pos if error.pos < len(head) else tail_at + error.pos - len(head) - 2
        raise ListError(f"{error.msg} at byte {at}") from None
    if document.get("items") != []:  # a second "items" key (an empty one is not seen: ijson's rule)
        raise ListError('the document has more than one top-level "items" key')


def _find_items(
    stream: BinaryIO, scanner: Scanner, window_bytes: int, head_bytes: int
) -> tuple[bytes, int, bytes, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(the document so far, where its top-level `items` array opens, backslashes held back, the
    brackets after the opening); NotAList when the array does not open within *head_bytes*."""
    prefix, held = b"", b""
    while len(prefix) < head_bytes:
        window, held = _read_window(stream, window_bytes, held)
        if not window:
            break
        brackets, depths, opens = scanner.feed(window)
        brackets += len(prefix)
        prefix += window
        start = prefix.lstrip(WHITESPACE)[:1]
        if start and start != b"{":
            raise NotAList("the document is not a JSON object")
        codes = np.frombuffer(prefix, np.uint8)[brackets]
        # a `[` opening a value of the top-level object, before that object closes
        closed = np.flatnonzero(depths == 0)
        before = brackets < brackets[closed[0]] if len(closed) else np.ones(len(brackets), bool)
        arrays = brackets[before & opens & (depths == 2) & (codes == ord("["))]
        opening = next((int(at) for at in arrays.tolist() if _items_key(prefix, at)), None)
        if opening is not None:
            later = brackets > opening
            return prefix, opening, held, (brackets[later], depths[later], opens[later])
        if len(closed):
            break
    raise NotAList('no top-level "items" array at the start of the document')


def list_items(
    stream: BinaryIO, window_bytes: int = WINDOW_BYTES, head_bytes: int = HEAD_BYTES
) -> Iterator[list[Any]]:
    """The top-level `items` of the JSON document in *stream*, in runs of whole items.

    Raises NotAList before yielding anything when that array does not open within *head_bytes*;
    ListError (a ValueError) for invalid JSON, at the latest after the last run."""
    scanner = Scanner()
    prefix, opening, held, (brackets, depths, opens) = _find_items(stream, scanner, window_bytes, head_bytes)
    head, pending, offset, first = prefix[:opening], prefix[opening + 1 :], opening + 1, True
    brackets = brackets - (opening + 1)  # positions in `pending` from here on
    while True:
        closes = ~opens
        array_end = brackets[closes & (depths == 1)]
        if len(array_end):
            end = int(array_end[0])
            if pending[end] != ord("]"):
                raise ListError(f"the items array is closed by {chr(pending[end])!r} at byte {offset + end}")
            yield _batch(pending[:end], first, offset)
            _check_rest(head, pending[end + 1 :] + held + stream.read(), offset + end + 1)
            return
        item_ends = brackets[closes & (depths == 2)]
        if len(item_ends):
            cut = int(item_ends[-1]) + 1
            yield _batch(pending[:cut], first, offset)
            pending, offset, first = pending[cut:], offset + cut, False
        window, held = _read_window(stream, window_bytes, held)
        if not window:
            raise ListError(f"the document ends inside the items, at byte {offset + len(pending)}")
        brackets, depths, opens = scanner.feed(window)
        brackets += len(pending)
        pending += window
