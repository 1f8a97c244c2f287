"""fakit.compare: the project's precision standard (docs/precision.md has the rule and its
sources). One entry point:

    compare(op, actual, golden, benchmark=None, dtype=None) -> Report

`actual` is the kernel's result, `golden` the high-precision golden, `benchmark` the
same-dtype device-like benchmark (fakit.golden.benchmark); each is an ndarray or a dict
name -> ndarray | None. `dtype` is the output dtype ("fp16", "bf16", "fp32", "int8"), one
for all outputs or a dict per output; by default it is read from the actual arrays.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

import numpy as np

# Ecosystem threshold T per dtype (opbase experimental standard): MERE < T, MARE < 10 T.
THRESHOLD = {"fp16": 2.0**-10, "bf16": 2.0**-7, "fp32": 2.0**-13}
# Small-value domain (|golden| below the first number) judged by absolute error against the
# second number (opbase commercial standard / cann-bench).
SMALL_VALUE = {"fp16": (2.0**-11, 2.0**-16), "bf16": (2.0**-8, 2.0**-16), "fp32": (2.0**-14, 2.0**-30)}
# Commercial-standard level L1: kernel metric / benchmark metric limits.
RATIO_LIMITS = {"mare": 5.0, "mere": 1.5, "rmse": 1.5}
SMALL_COUNT_RATIO = 2.0
# Reseeded runs of small_value_recheck: the standard asks for >= 200 (1000 recommended); the
# tests use fewer where a run is slow and say so.
SMALL_RECHECK_RUNS = 200
REL_EPS = 1e-7  # denominator guard of MARE/MERE: |a - g| / (|g| + 1e-7) (opbase)
INT8_TOLERANCE = 1  # quantised float -> int8 outputs: |a - g| <= 1 (commercial standard)
# torch_npu assertRtolEqual "double thousandth" precision p and its denominator guard; reported
# for comparison with CANN's own tests, not part of the verdict (bf16's 4e-3 is unverified).
DUAL_P = {"fp16": (1e-3, 6e-8), "bf16": (4e-3, 6e-8), "fp32": (1e-4, 1e-9)}

_DTYPE_NAMES = {
    "float16": "fp16",
    "bfloat16": "bf16",
    "float32": "fp32",
    "float64": "fp32",
    "int8": "int8",
    "uint8": "uint8",
    "int32": "int32",
    "int64": "int64",
    "bool": "bool",
}
_INTEGER = ("int8", "uint8", "int32", "int64", "bool")
_SINGLE_OUTPUT = "attention_out"


@dataclasses.dataclass
class Metrics:
    mare: float = 0.0  # max relative error over the normal-value domain
    mere: float = 0.0  # mean relative error over the normal-value domain
    rmse: float = 0.0  # root mean square absolute error over the normal-value domain
    max_abs: float = 0.0
    small_errors: int = 0  # small-value-domain elements whose abs error exceeds the bound
    small_max_abs: float = 0.0  # largest abs error in the small-value domain
    elements: int = 0
    dual_ok: Optional[bool] = None  # torch_npu double-thousandth rule (report only)

    def as_dict(self):
        return dataclasses.asdict(self)


@dataclasses.dataclass
class OutputReport:
    name: str
    dtype: str
    passed: bool
    metrics: Optional[Metrics] = None
    bench: Optional[Metrics] = None
    ratios: Dict[str, float] = dataclasses.field(default_factory=dict)
    nonfinite_mismatches: int = 0
    small_count_failed: bool = False  # failed the small-value count rule (maybe among others)
    reasons: List[str] = dataclasses.field(default_factory=list)
    notes: List[str] = dataclasses.field(default_factory=list)

    def line(self) -> str:
        head = f"{self.name}[{self.dtype}]"
        if self.metrics is None:
            return f"{head}: {'; '.join(self.reasons or self.notes) or 'absent'}"
        m = self.metrics
        if self.dtype in _INTEGER:
            return f"{head}: max_abs {m.max_abs:.3g}" + (f" ({'; '.join(self.reasons)})" if self.reasons else "")
        parts = []
        for key in ("mare", "mere", "rmse"):
            r = self.ratios.get(key)
            parts.append(f"{key.upper()} {getattr(m, key):.3g}" + ("" if r is None else f" (x{r:.2f})"))
        text = f"{head}: " + " ".join(parts)
        return text + (f" -- {'; '.join(self.reasons)}" if self.reasons else "")

    def as_dict(self):
        return dataclasses.asdict(self)


@dataclasses.dataclass
class Report:
    op: str
    outputs: List[OutputReport]

    @property
    def passed(self) -> bool:
        return all(o.passed for o in self.outputs)

    @property
    def verdict(self) -> str:
        return "PASS" if self.passed else "FAIL"

    @property
    def failed_only_on_small_counts(self) -> bool:
        """True when every failing output failed the small-value count rule and nothing else:
        the case the commercial standard rechecks (small_value_recheck)."""
        bad = [o for o in self.outputs if not o.passed]
        return bool(bad) and all(o.small_count_failed and len(o.reasons) == 1 for o in bad)

    def small_counts(self) -> Dict[str, Any]:
        """name -> (kernel, benchmark) small-value error counts of the outputs that have both."""
        return {
            o.name: (o.metrics.small_errors, o.bench.small_errors)
            for o in self.outputs
            if o.metrics is not None and o.bench is not None
        }

    def summary(self) -> str:
        shown = [o for o in self.outputs if o.metrics is not None or o.reasons]  # skip absent ones
        return f"{self.verdict} {self.op}: " + " | ".join(o.line() for o in shown)

    def worst(self, key: str) -> Optional[float]:
        """Largest value of metric `key` (or ratio 'ratio_<metric>') over the outputs."""
        vals = []
        for o in self.outputs:
            if key.startswith("ratio_"):
                v = o.ratios.get(key[6:])
            else:
                v = None if o.metrics is None else getattr(o.metrics, key)
            if v is not None:
                vals.append(v)
        return max(vals) if vals else None

    def as_dict(self):
        return {
            "op": self.op,
            "passed": self.passed,
            "summary": self.summary(),
            "outputs": [o.as_dict() for o in self.outputs],
        }


# ------------------------------------------------------------------------------ metrics


def metrics(actual: np.ndarray, golden: np.ndarray, dtype: str) -> Metrics:
    """Error metrics of `actual` against `golden` over the positions where both are finite.
    The commercial standard splits those positions by the golden's magnitude: MARE, MERE and
    RMSE (the ratio metrics) cover the normal-value domain, |g| >= the small-value threshold;
    the small-value domain is judged by its error count alone. An output whose golden lies
    wholly in the small-value domain (e.g. analytically zero gradients) thus has no ratio
    metrics to fail on rounding residue."""
    a = np.asarray(actual).astype(np.float64).reshape(-1)
    g = np.asarray(golden).astype(np.float64).reshape(-1)
    ok = np.isfinite(a) & np.isfinite(g)
    a, g = a[ok], g[ok]
    if a.size == 0:
        return Metrics()
    err = np.abs(a - g)
    small_thr, small_bound = SMALL_VALUE.get(dtype, (0.0, 0.0))
    normal = np.abs(g) >= small_thr
    rel = err[normal] / (np.abs(g[normal]) + REL_EPS)
    dual_ok = None
    if dtype in DUAL_P:
        p, tiny = DUAL_P[dtype]
        limit = a.size * p
        dual_ok = not (
            np.count_nonzero(err > p) > limit
            and np.count_nonzero(err / (np.maximum(np.abs(a), np.abs(g)) + tiny) > p) > limit
        )
    return Metrics(
        mare=float(rel.max()) if rel.size else 0.0,
        mere=float(rel.mean()) if rel.size else 0.0,
        rmse=float(np.sqrt(np.mean(err[normal] ** 2))) if rel.size else 0.0,
        max_abs=float(err.max()),
        small_errors=int(np.count_nonzero(err[~normal] > small_bound)),
        small_max_abs=float(err[~normal].max()) if (~normal).any() else 0.0,
        elements=int(a.size),
        dual_ok=dual_ok,
    )


def nonfinite_mismatches(actual: np.ndarray, golden: np.ndarray) -> int:
    """Positions where nan-ness or (signed) inf-ness differ."""
    a = np.asarray(actual).astype(np.float64)
    g = np.asarray(golden).astype(np.float64)
    bad = (np.isnan(a) != np.isnan(g)) | (np.isposinf(a) != np.isposinf(g)) | (np.isneginf(a) != np.isneginf(g))
    return int(np.count_nonzero(bad))


# ------------------------------------------------------------------------------ verdicts


def _ratio_floor(key: str, dtype: str, golden: np.ndarray) -> float:
    """Smallest benchmark metric the ratio is taken against: limit x floor equals the
    ecosystem bound (MERE T, MARE 10 T, RMSE T x RMS(golden over the normal-value domain)),
    so the ratio rule is never stricter than the ecosystem rule when the benchmark happens to
    be (nearly) exact, e.g. for fp32 softmax statistics that share the golden's arithmetic
    (docs/precision.md)."""
    t = THRESHOLD[dtype]
    if key == "mere":
        return t / RATIO_LIMITS["mere"]
    if key == "mare":
        return 10 * t / RATIO_LIMITS["mare"]
    g = np.asarray(golden).astype(np.float64)
    g = g[np.isfinite(g) & (np.abs(g) >= SMALL_VALUE[dtype][0])]
    rms = float(np.sqrt(np.mean(g * g))) if g.size else 0.0
    return t * max(rms, np.finfo(np.float32).tiny) / RATIO_LIMITS["rmse"]


def _judge_float(rep: OutputReport, golden: np.ndarray, bench: Optional[np.ndarray]) -> None:
    m, dt = rep.metrics, rep.dtype
    t = THRESHOLD[dt]
    bm = None
    if bench is not None:
        bm = rep.bench = metrics(bench, golden, dt)
        for key, limit in RATIO_LIMITS.items():
            r = getattr(m, key) / max(getattr(bm, key), _ratio_floor(key, dt, golden))
            rep.ratios[key] = r
            if r > limit:
                rep.reasons.append(
                    f"{key.upper()} {getattr(m, key):.3g} is {r:.2f}x the benchmark's "
                    f"{getattr(bm, key):.3g} (limit {limit}x)"
                )
        if m.small_errors > SMALL_COUNT_RATIO * max(bm.small_errors, 1):
            rep.small_count_failed = True
            rep.reasons.append(
                f"{m.small_errors} small-value errors vs the benchmark's {bm.small_errors} (limit {SMALL_COUNT_RATIO}x)"
            )
    else:
        small_thr = SMALL_VALUE[dt][0]
        if m.small_max_abs > small_thr:
            rep.reasons.append(f"small-value elements err by more than {small_thr:.3g} (no benchmark given)")
    for key, bound in (("mere", t), ("mare", 10 * t)):
        if getattr(m, key) < bound:
            continue
        if bm is not None and getattr(bm, key) >= bound:
            rep.notes.append(
                f"ecosystem bound {key.upper()} < {bound:.3g} waived: the same-dtype "
                f"benchmark itself reaches {getattr(bm, key):.3g}"
            )
            continue
        rep.reasons.append(f"{key.upper()} {getattr(m, key):.3g} exceeds the ecosystem bound {bound:.3g}")


def compare_output(name: str, actual, golden, bench=None, dtype: Optional[str] = None) -> OutputReport:
    if dtype is None:
        dtype = _dtype_name(actual if actual is not None else golden)
    rep = OutputReport(name, dtype, passed=False)
    if golden is None or actual is None:
        if golden is None and actual is None:
            rep.passed = True
            rep.notes.append("absent in both")
        else:
            rep.reasons.append(f"{'actual' if golden is not None else 'golden'} has no {name}")
        return rep
    a, g = np.asarray(actual), np.asarray(golden)
    if a.shape != g.shape:
        rep.reasons.append(f"shape {a.shape} differs from the golden's {g.shape}")
        return rep
    if g.size == 0:
        rep.passed = True
        rep.metrics = Metrics()
        rep.notes.append("empty output")
        return rep
    rep.metrics = metrics(a, g, dtype)
    rep.nonfinite_mismatches = nonfinite_mismatches(a, g)
    if rep.nonfinite_mismatches:
        rep.reasons.append(f"{rep.nonfinite_mismatches} positions differ in nan/inf")
    if dtype in _INTEGER:
        tol = INT8_TOLERANCE if dtype == "int8" else 0
        if rep.metrics.max_abs > tol:
            rep.reasons.append(f"max abs error {rep.metrics.max_abs:g} exceeds {tol} for {dtype}")
    else:
        if dtype not in THRESHOLD:
            raise ValueError(f"{name}: unsupported output dtype {dtype!r}")
        b = None
        if bench is not None:
            b = np.asarray(bench)
            if b.shape != g.shape:
                raise ValueError(f"{name}: benchmark shape {b.shape} differs from the golden's {g.shape}")
        _judge_float(rep, g, b)
    rep.passed = not rep.reasons
    return rep


def compare(op: str, actual, golden, benchmark=None, dtype=None) -> Report:
    """Compare every output of `actual` with `golden` (and `benchmark`) by the standard."""
    actual, golden = _as_dict(actual), _as_dict(golden)
    benchmark = None if benchmark is None else _as_dict(benchmark)
    names = list(golden) + [n for n in actual if n not in golden]
    outputs = []
    for name in names:
        dt = dtype.get(name) if isinstance(dtype, Mapping) else dtype
        outputs.append(
            compare_output(
                name, actual.get(name), golden.get(name), None if benchmark is None else benchmark.get(name), dt
            )
        )
    return Report(op, outputs)


def small_value_recheck(
    sample: Callable[[int], Report], runs: int = SMALL_RECHECK_RUNS, resamples: int = 1000, seed: int = 0
):
    """The commercial standard's recheck of a case that failed only on the small-value count
    rule (a rule on a handful of elements is noisy: docs/precision.md). `sample(i)` runs the
    i-th reseeded variant of the case and returns its Report; every output's ratio kernel /
    max(benchmark, 1) of small-value error counts is collected, and the case fails if the
    lower bound of the 95 % bootstrap confidence interval of the median ratio exceeds 1, or if
    a reseeded run fails any rule besides the small-value count (the recheck settles that rule
    only). Returns (passed, {output: (median, lower bound)}, [(run, summary) of such runs])."""
    ratios: Dict[str, List[float]] = {}
    others: List[Tuple[int, str]] = []
    for i in range(runs):
        rep = sample(i)
        if not rep.passed and not rep.failed_only_on_small_counts:
            others.append((i, rep.summary()))
        for name, (k, b) in rep.small_counts().items():
            ratios.setdefault(name, []).append(k / max(b, 1))
    rng = np.random.default_rng(seed)
    result = {}
    for name, r in ratios.items():
        r = np.asarray(r)
        boot = np.median(rng.choice(r, size=(resamples, r.size)), axis=1)
        result[name] = (float(np.median(r)), float(np.percentile(boot, 2.5)))
    return all(lo <= 1.0 for _, lo in result.values()) and not others, result, others


def _as_dict(x) -> Dict[str, Any]:
    if isinstance(x, Mapping):
        return dict(x)
    return {_SINGLE_OUTPUT: x}


def _dtype_name(x) -> str:
    name = np.asarray(x).dtype.name
    return _DTYPE_NAMES.get(name, "fp32")
