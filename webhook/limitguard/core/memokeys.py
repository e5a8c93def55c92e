"""Whether a memo key made from a request is small enough to keep.

Answers are remembered by the shape of the pod they were worked out for (its resources, its
placement), since the pods of one workload share it. The shape comes from the request, and anyone
on the pod network can send a review as large as a body may be (4 MiB): a 1 MiB nodeSelector or
limits map makes a key of ~10 MiB of Python objects, and a memo of a few hundred of them would hold
gigabytes until the process is killed. Real pods' shapes are small (a few resources per container,
a few selector terms and tolerations: a pod of three containers with requests and limits is ~4 KiB
by this measure), so a key past MAX_KEPT_KEY_SIZE is not kept and its answer is worked out again
each time it is asked. The one memo type (core.memo.Memo) measures a key on a miss, to keep it
within its byte budget; a hit pays nothing.
"""

from __future__ import annotations

OBJECT_SIZE = 64  # bytes: about what CPython takes for a small tuple, str or int
MAX_KEPT_KEY_SIZE = 8 * 1024  # bytes, as OBJECT_SIZE per object plus each string's characters


def key_size(key: object, limit: int = MAX_KEPT_KEY_SIZE) -> int | None:
    """The bytes *key* (tuples and frozensets of strings, bytes, numbers and slotted records such as
    eligibility.Requirement, to any depth) takes by this measure, or None past *limit* (it stops
    counting there)."""
    size = 0
    pending = [key]
    while pending:
        item = pending.pop()
        size += OBJECT_SIZE
        if type(item) is str or type(item) is bytes:  # bytes: a client certificate's DER
            size += len(item)
        elif isinstance(item, (tuple, frozenset)):  # NamedTuples (Toleration) too
            pending.extend(item)
        else:  # a number, None, or a record whose fields are its __slots__
            pending.extend(getattr(item, name) for name in getattr(type(item), "__slots__", ()))
        if size > limit:
            return None
    return size
