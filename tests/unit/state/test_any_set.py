"""any_set: the scan's `mask.any()` through argmax, on every shape of bool mask."""

from __future__ import annotations

import numpy as np
import pytest

from limitguard.state.scan import any_set


@pytest.mark.parametrize(
    "mask",
    [
        np.zeros(0, bool),
        np.zeros(1, bool),
        np.ones(1, bool),
        np.zeros(5000, bool),
        np.eye(1, 5000, 4999, dtype=bool)[0],  # only the last row
        np.eye(1, 5000, 0, dtype=bool)[0],  # only the first row
        np.ones(5000, bool)[::2],  # a strided view
        np.zeros(5000, bool)[:0],  # an empty slice of a table
    ],
)
def test_any_set_answers_what_ndarray_any_answers(mask: np.ndarray) -> None:
    assert any_set(mask) is bool(mask.any())
