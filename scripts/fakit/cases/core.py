"""The test-case record shared by every operator, and the helpers that turn one into inputs.

A `Case` is pure data (operator, dtype, layout, shapes, attributes, input options, value
range, seed). Its id is derived from a canonical JSON dump of that data, so it is stable
across runs and machines and changes whenever anything that affects the inputs changes.
Each operator module (fakit/cases/<op>.py) knows how to validate a case against its spec
(`check`), generate its inputs (`make_inputs`) and describe it (`features`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import zlib
from pathlib import Path
from typing import Any, Dict, Mapping, Tuple

import ml_dtypes
import numpy as np

from .. import opnames

# Short, readable id prefixes per operator (the golden function names are long): the aliases of
# the one name table, fakit/opnames.py.
PREFIX = {op.name: op.alias for op in opnames.OPERATORS}
OPERATORS = opnames.NAMES

DTYPES = {
    "fp16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "fp32": np.dtype(np.float32),
    "int8": np.dtype(np.int8),
    "uint8": np.dtype(np.uint8),
    "bool": np.dtype(bool),
    "int32": np.dtype(np.int32),
    "int64": np.dtype(np.int64),
}


class Forbidden(ValueError):
    """A parameter combination the operator's spec does not allow; the message says why."""


class PeerCasesUnavailable(FileNotFoundError):
    """Kept for callers of older versions: the peer suites' data now ships with the package."""


PEER_DIR = Path(__file__).resolve().parents[1] / "suites" / "peer"


def peer_entries(file_name: str) -> list:
    """The case records of suites/peer/<file_name>: the parameters of the official ST cases,
    stored as the project's own data (scripts/tools/import_peer_cases.py names the source)."""
    return json.loads((PEER_DIR / file_name).read_text(encoding="utf-8"))["cases"]


def peer_cap() -> int:
    """FAKIT_MAX_SEQ (set by `fakit run/cases --max-seq N`): peer cases with a longer sequence
    are left out, so a small machine runs the short ones. 0 = no cap."""
    import os

    return int(os.environ.get("FAKIT_MAX_SEQ", "0") or 0)


@dataclasses.dataclass(frozen=True)
class Case:
    """One operator invocation, described by parameters (not by arrays).

    shapes:  the dimension parameters (B, N, Nkv, Sq, Skv, D, seq-length lists, ...)
    attrs:   operator attributes passed through to the golden unchanged
    options: how optional inputs are built (mask kind, pse, paging, quantisation, ...)
    """

    op: str
    dtype: str
    layout: str
    shapes: Mapping[str, Any]
    attrs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    value_range: Tuple[float, float] = (-1.0, 1.0)
    seed: int = 0
    # A name the case has elsewhere (the official ST case id of a peer case): shown first in
    # `features`, not part of the id or the inputs.
    label: str = dataclasses.field(default="", compare=False)

    def __hash__(self) -> int:  # the mapping fields are not hashable; the id is
        return hash(self.id)

    def params(self) -> Dict[str, Any]:
        """The canonical, JSON-serialisable description the id is computed from."""
        return {
            "op": self.op,
            "dtype": self.dtype,
            "layout": self.layout,
            "shapes": _plain(self.shapes),
            "attrs": _plain(self.attrs),
            "options": _plain(self.options),
            "value_range": list(self.value_range),
            "seed": self.seed,
        }

    @property
    def id(self) -> str:
        blob = json.dumps(self.params(), sort_keys=True, separators=(",", ":"))
        return f"{PREFIX[self.op]}-{hashlib.sha1(blob.encode()).hexdigest()[:10]}"

    @property
    def features(self) -> str:
        text = operator_module(self.op).features(self)
        return f"{self.label} {text}" if self.label else text

    def check(self) -> None:
        """Raise Forbidden (with the spec's reason) if the spec does not allow this case."""
        operator_module(self.op).check(self)

    def rng(self) -> np.random.Generator:
        # Seeded by the seed *and* the parameters so that cases sharing a seed still get
        # different data, while the same case always gets the same data.
        blob = json.dumps(self.params(), sort_keys=True).encode()
        return np.random.default_rng([self.seed, zlib.crc32(blob)])

    def inputs(self) -> Dict[str, Any]:
        """Keyword arguments for fakit.golden.<op> (and fakit.run), deterministic."""
        return operator_module(self.op).make_inputs(self, self.rng())

    def output_dtypes(self) -> Dict[str, str]:
        """Output name -> dtype name of the operator's real outputs (for fakit.compare)."""
        return operator_module(self.op).output_dtypes(self)

    def to_json(self) -> Dict[str, Any]:
        return {
            "id": self.id,
            "features": self.features,
            **self.params(),
            **({"label": self.label} if self.label else {}),
        }

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Case":
        return cls(
            op=d["op"],
            dtype=d["dtype"],
            layout=d["layout"],
            shapes=d["shapes"],
            attrs=d.get("attrs", {}),
            options=d.get("options", {}),
            value_range=tuple(d.get("value_range", (-1.0, 1.0))),
            seed=d.get("seed", 0),
            label=d.get("label", ""),
        )


def _plain(x):
    if isinstance(x, Mapping):
        return {str(k): _plain(v) for k, v in sorted(x.items())}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, np.generic):
        return x.item()
    return x


def operator_module(op: str):
    """The case module of operator `op` (any of its names, fakit.opnames)."""
    return importlib.import_module(f"{__package__}.{opnames.resolve(op)}")


# ---------------------------------------------------------------- input generation helpers


def uniform(rng: np.random.Generator, shape, dtype: str, lo: float = -1.0, hi: float = 1.0):
    """Uniform values in [lo, hi), rounded to `dtype` (the array is in that dtype)."""
    return rng.uniform(lo, hi, size=shape).astype(np.float32).astype(DTYPES[dtype])


def mask_as(mask_bool: np.ndarray, mask_dtype: str) -> np.ndarray:
    """A boolean mask (True = excluded) in the requested mask dtype (bool/int8/uint8)."""
    return mask_bool.astype(DTYPES[mask_dtype])


def band_mask(sq: int, skv: int, pre: int, nxt: int, origin: str = "left_up") -> np.ndarray:
    """True where (i, j) lies outside the band [-pre, +nxt] around the diagonal.

    origin "left_up" puts the diagonal through (0, 0); "right_down" through (sq-1, skv-1).
    """
    i = np.arange(sq)[:, None]
    j = np.arange(skv)[None, :]
    if origin == "right_down":
        i = i + (skv - sq)
    return (j - i > nxt) | (i - j > pre)


def compressed_causal_mask(size: int = 2048) -> np.ndarray:
    """The optimised lower-triangular mask the sparse modes 2/3/4/7/8 take (1 above diagonal)."""
    return np.triu(np.ones((size, size), dtype=bool), k=1)


def prefix_compressed_mask() -> np.ndarray:
    """The 3072x2048 mask of sparse mode 6: a 2048 causal block over a [1024, 2048] block
    whose left half is 0 and right half is 1 (sparse_mode doc, mode 6)."""
    bottom = np.zeros((1024, 2048), dtype=bool)
    bottom[:, 1024:] = True
    return np.concatenate([compressed_causal_mask(2048), bottom], axis=0)


def cumulative(lengths) -> list:
    return [int(x) for x in np.cumsum(lengths)]


def call_filtered(fn, **kwargs):
    """Call `fn` with the subset of kwargs its signature accepts (forward goldens whose
    exact keyword set is owned by the golden module)."""
    import inspect

    params = inspect.signature(fn).parameters
    if any(p.kind == p.VAR_KEYWORD for p in params.values()):
        return fn(**kwargs)
    return fn(**{k: v for k, v in kwargs.items() if k in params})
