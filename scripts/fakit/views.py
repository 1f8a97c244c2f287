"""Tensor arguments with an explicit memory layout, for the aclnn backends.

By default the cpu backend places every array contiguously. A `Strided` value (or a view name
in `fakit.run(..., views={"query": "padded"})`) places it instead as a strided view into a larger
storage, the way a framework's slice or transpose hands a tensor to an aclnn API:

    Strided(array, strides=(...), offset=5, storage=None, fill=nan)

`strides` and `offset` are in elements. `storage` is the element count declared as the tensor's
storage shape (default: exactly what the view spans); the device allocation always covers the
view, so a smaller declared storage tests the API's own check. Storage elements outside the view
are filled with `fill` (NaN for floats: a kernel that reads them shows it); for outputs the
backend checks after the run that they are unchanged.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional, Tuple, Union

import numpy as np


@dataclasses.dataclass
class Strided:
    array: np.ndarray
    strides: Tuple[int, ...]
    offset: int = 0
    storage: Optional[int] = None
    fill: float = float("nan")

    def span(self) -> int:
        """Elements from the storage start to one past the view's last element."""
        if self.array.size == 0:
            return self.offset
        return self.offset + sum((n - 1) * s for n, s in zip(self.array.shape, self.strides)) + 1

    def storage_array(self) -> np.ndarray:
        """The storage with the view's values in place and `fill` elsewhere."""
        n = max(self.span(), 1)
        store = np.empty(n, self.array.dtype)
        store[...] = self.fill if self.array.dtype.kind in "fc" or self.array.dtype.name == "bfloat16" else 0x5A
        if self.array.size:
            self.view_of(store)[...] = self.array
        return store

    def view_of(self, store: np.ndarray) -> np.ndarray:
        item = store.itemsize
        return np.lib.stride_tricks.as_strided(
            store[self.offset :], self.array.shape, [s * item for s in self.strides], writeable=True
        )


def padded(array: np.ndarray, pad: int = 3, offset: int = 5) -> Strided:
    """Rows of the last axis padded by `pad` elements (as a slice of a wider tensor), at `offset`."""
    array = np.asarray(array)
    dims = list(array.shape)
    if not dims:
        return Strided(array, (), offset)
    pitch = dims[:-1] + [dims[-1] + pad]
    strides = [1] * len(dims)
    for i in range(len(dims) - 2, -1, -1):
        strides[i] = strides[i + 1] * pitch[i + 1]
    return Strided(array, tuple(strides), offset)


def transposed(array: np.ndarray, offset: int = 0) -> Strided:
    """The last two axes stored swapped (as a transpose of a contiguous tensor hands it over)."""
    array = np.asarray(array)
    if array.ndim < 2:
        return padded(array, offset=offset)
    perm = list(range(array.ndim - 2)) + [array.ndim - 1, array.ndim - 2]
    stored_shape = [array.shape[p] for p in perm]
    stored = [1] * array.ndim
    for i in range(array.ndim - 2, -1, -1):
        stored[i] = stored[i + 1] * stored_shape[i + 1]
    strides = [0] * array.ndim
    for i, p in enumerate(perm):
        strides[p] = stored[i]
    return Strided(array, tuple(strides), offset)


def spaced(array: np.ndarray, step: int = 2, offset: int = 1) -> Strided:
    """Every element `step` apart (as a strided slice x[::2] hands it over): non-contiguous
    whenever the tensor has more than one element."""
    array = np.asarray(array)
    strides = [step] * array.ndim
    for i in range(array.ndim - 2, -1, -1):
        strides[i] = strides[i + 1] * array.shape[i + 1]
    return Strided(array, tuple(strides), offset)


VIEWS = {"padded": padded, "transposed": transposed, "spaced": spaced}
ViewSpec = Union[str, Callable[[np.ndarray], Strided]]


def make(array: np.ndarray, spec: ViewSpec) -> Strided:
    if isinstance(spec, str):
        try:
            spec = VIEWS[spec]
        except KeyError:
            raise ValueError(f"unknown view {spec!r}; known: {', '.join(VIEWS)}") from None
    return spec(np.asarray(array))


@dataclasses.dataclass
class Described:
    """A tensor argument described freely — any view shape, strides, offset and storage shape —
    over `alloc_bytes` of device memory (filled with zeros). For probing an API's checks with
    shapes no array could hold (dims of 2^62) or storage that lies about its size."""

    shape: Tuple[int, ...]
    dtype: np.dtype
    strides: Optional[Tuple[int, ...]] = None  # default: contiguous packing of `shape`
    offset: int = 0
    storage: Optional[Tuple[int, ...]] = None  # default: `shape`
    alloc_bytes: int = 4096
