"""numpy arrays handed to Arrow kernels without ``pa.array``.

``pa.array(numpy_array)`` goes through pyarrow's generic conversion (it imports ``numpy.ma`` and
probes for pandas on the way); an index or a mask made by numpy is wrapped here instead, over the
same memory (:func:`indices`, :func:`mask`). :func:`take` and :func:`filter` are
``pyarrow.compute.take`` / ``filter`` that accept those numpy arrays too. Every other kernel is
called through the public ``pyarrow.compute``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def indices(values) -> pa.Array:
    """An int64 Arrow array over a numpy array's memory."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def mask(values) -> pa.Array:
    """A boolean Arrow array from a numpy bool array."""
    values = np.asarray(values, dtype=bool)
    return pa.Array.from_buffers(pa.bool_(), len(values),
                                 [None, pa.py_buffer(np.packbits(values, bitorder="little"))])


def take(values, positions):
    """``pyarrow.compute.take``; ``positions`` may be a numpy array."""
    if isinstance(positions, np.ndarray):
        positions = indices(positions)
    return pc.take(values, positions)


def filter(values, keep):  # noqa: A001 - the kernel's name
    """``pyarrow.compute.filter``; ``keep`` may be a numpy bool array."""
    if isinstance(keep, np.ndarray):
        keep = mask(keep)
    return pc.filter(values, keep)
