"""kube-scheduler's candidate list read from its bytes when the same list was sent before.

kube-scheduler encodes ExtenderArgs with encoding/json, in the struct's field order and with the
names last: `{"Pod":{...},"Nodes":null,"NodeNames":["node-a",...]}`. A list comes again: the
prioritize after a filter sends the names that passed it (kept by the filter here), and a cluster
whose every node is sent in the same order sends one list call after call. Parsing 5,000 names
makes 5,000 str objects (about 110 us with orjson, and ~50 us more to free them); comparing the
array's bytes with a list kept is one memcmp (3 us). So a body of that form is read in two parts:
the document with its NodeNames set to null (the pod: what is left to parse), and the array's bytes.

The split is exact, not a guess. The `"NodeNames":[` found is preceded by `,` or `{`, so its quote
is not escaped, and the document before it, closed with `"NodeNames":null}`, must parse as an
object: the quote therefore opens a key of the outermost object, which the body's last byte
closes, and no key follows it. The array's bytes, up to the body's last `]`, must be a list of
strings (equal to one kept, or parsed). The body is then exactly that document with that list as
its NodeNames, the last key, which every JSON reader takes. Any other body is parsed whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from limitguard.state.candidates import MOST_KEPT_KEY_BYTES, checked_names, kept_lists

_KEY = b'"NodeNames":['
_WITHOUT_NAMES = b'"NodeNames":null}'
# A list is kept only below both bounds: ~4 MB of str objects at most each (a 15,000-node cluster's
# names are about 0.5 MB of JSON).
MOST_KEPT_NAMES = 32_768


@dataclass(frozen=True, slots=True)
class SentNames:
    """An ExtenderArgs body read in two parts."""

    document: dict[str, Any]  # the body, its NodeNames null
    names: list[str]  # the NodeNames; possibly the list of an earlier call: never modified
    names_json: bytes | memoryview  # the array as sent: the node table's key for the list


class NameLists:
    """The candidate lists read lately, by their bytes: one per extender, shared by its verbs."""

    __slots__ = ("_kept",)

    def __init__(self) -> None:
        self._kept = kept_lists("extender-name-lists")  # the names parsed of each list

    def split(self, body: bytes, most_document_bytes: int) -> SentNames | None:
        """*body* read in two parts, or None when it is not in kube-scheduler's form with the names
        last, or its document part is *most_document_bytes* or more (the caller reads it whole)."""
        if not body.endswith(b"]}"):
            return None
        at = body.find(_KEY)
        if at <= 0 or at >= most_document_bytes or body[at - 1] not in b",{":
            return None
        try:
            document = orjson.loads(body[:at] + _WITHOUT_NAMES)
        except orjson.JSONDecodeError:
            return None
        if type(document) is not dict:
            return None
        start, end = at + len(_KEY) - 1, len(body) - 1
        if end - start >= MOST_KEPT_KEY_BYTES:  # kept by no one: read in place, never copied
            array: bytes | memoryview = memoryview(body)[start:end]
            names = self._parsed(array)
        else:
            array = bytes(body[start:end])
            names = self._names(array)
        return None if names is None else SentNames(document, names, array)

    def keep(self, array: bytes, names: list[str]) -> None:
        """Keep *names*, whose JSON array is *array*, for a call that sends them (never modified)."""
        if len(names) <= MOST_KEPT_NAMES:
            # the list of str objects: about its JSON text again, plus a pointer and header per name
            self._kept.put(array, names, value_bytes=len(array) + 64 * len(names))

    def _names(self, array: bytes) -> list[str] | None:
        kept = self._kept.get(array)
        if kept is not None:
            return kept
        found = self._parsed(array)
        if found is not None:
            self.keep(array, found)
        return found

    @staticmethod
    def _parsed(array: bytes | memoryview) -> list[str] | None:
        try:
            names = orjson.loads(array)
        except orjson.JSONDecodeError:
            return None
        if type(names) is not list or not checked_names(names):
            return None  # the whole body's parse says what is wrong with it
        return names
