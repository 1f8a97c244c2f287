"""NumPy model of the int8 x int8 decode path for int8 K/V (digit split), judged by the
precision standard against the float64 golden and the same-dtype benchmark.

The kernel design it models: the key antiquant scale (per tensor or per channel) and the score
scale fold into Q (Q * s_k * scale, fp32); each query row becomes a 16-bit fixed-point row
q16 = rint(row / r), r = max|row| / QMAX, split into two int8 digits q16 = 256 hi + lo. The
cube multiplies both digit rows with the raw int8 K (int8 x int8 -> int32; the G hi rows and G
lo rows are one Mmad of 2G rows) and the vector cores form S = r (256 S_hi + S_lo) in fp32.
The key offset adds (Q * s_k) . o_k to every score of a row and cancels in the softmax. The
softmax is the eager online one per 128-key block (P in [0, 1]); P becomes p16 = rint(P / u)
split the same way, with the unit u = pm / PMAX per row and block (pm: the row's largest P in
the block; `--punit fixed`: pm = 1), P.V of the digits against the raw int8 V is one int32
Mmad per block, and the vector cores accumulate u (256 O_hi + O_lo) in fp32; l sums the
quantised P. `--pmode offset` stores P - pm / 2 instead (twice the resolution; the cube adds
QMAX * colsum(V), one more A row of ones). The value antiquant applies on the output:
O = (acc / l + o_v) * s_v.

`--arith kernel` takes the units as the kernel's vector code forms them (int8_digits.h): max|x|
floored at 1e-30, the reciprocal QMAX / max by one fp32 division, q16 = rint(x * that) clamped to
[-QMAX, QMAX], and the unit max * (1 / QMAX) (the model's default divides x by the unit).

Usage: python scripts/tools/int8_digit_model.py [--suite full|big|both] [--pmode signed|offset]
       [--punit row|fixed] [--arith model|kernel]
"""

import argparse
import sys

import numpy as np

from fakit.cases import core as cases_core
from fakit.compare import compare
from fakit.golden import incre_flash_attention as ifa
from fakit.golden._common import round_to

QMAX = 32639  # 127 * 256 + 127: the largest |q16| whose digits are both int8


def split_digits(x16):
    """int q16 in [-QMAX, QMAX] -> (hi, lo) int8 digits with q16 = 256 hi + lo, lo in [-128, 127]."""
    hi = np.floor((x16 + 128) / 256.0)
    lo = x16 - 256 * hi
    assert hi.min(initial=0) >= -128 and hi.max(initial=0) <= 127
    assert lo.min(initial=0) >= -128 and lo.max(initial=0) <= 127
    return hi.astype(np.int64), lo.astype(np.int64)


KERNEL_ARITH = False  # --arith kernel


def kernel_units(amax):
    """The kernel's per-row unit and reciprocal (int8_digits.h Int8DigitUnits), fp32."""
    amax = np.maximum(amax.astype(np.float32), np.float32(1e-30))
    inv = (np.float32(QMAX) / amax).astype(np.float32)
    return (amax * np.float32(1.0 / QMAX)).astype(np.float32), inv


def kernel_q16(x, inv):
    """q16 = clamp(rint(x * inv)) in fp32 (Int8DigitQuantise)."""
    return np.clip(np.rint((x.astype(np.float32) * inv).astype(np.float32)), -QMAX, QMAX)


def fixed_rows(x):
    """fp32 rows (..., D) -> (hi, lo, r): x ~= r * (256 hi + lo), r per row (fp32)."""
    if KERNEL_ARITH:
        r, inv = kernel_units(np.abs(x).max(axis=-1, keepdims=True))
        hi, lo = split_digits(kernel_q16(x, inv))
        return hi, lo, r
    amax = np.abs(x).max(axis=-1, keepdims=True)
    r = np.where(amax > 0, amax / np.float32(QMAX), np.float32(1)).astype(np.float32)
    q16 = np.rint(x / r)
    q16 = np.clip(q16, -QMAX, QMAX)
    hi, lo = split_digits(q16)
    return hi, lo, r


def int_mm(a, b):
    """int8 x int8 -> int32 matmul (int64 in NumPy; checked against the int32 range)."""
    c = np.matmul(a, b)
    assert np.abs(c).max(initial=0) < 2**31
    return c


def digits_to_f32(hi, lo):
    """The vector cores' combination: Cast(int32 -> fp32) of each part, 256 * hi + lo in fp32."""
    return hi.astype(np.float32) * np.float32(256) + lo.astype(np.float32)


def attention_digits(s_hi, s_lo, r, v_raw, bias, excluded, pmode, prow, block=128):
    """s_hi/s_lo (Nkv, G, L) int, r (Nkv, G, 1), v_raw (Nkv, L, D) int8 -> (Nkv, G, D) fp32 (no V antiquant)."""
    s = digits_to_f32(s_hi, s_lo) * r
    if bias is not None:
        s = s + bias.astype(np.float32)
    if excluded is not None:
        s[..., excluded] = -np.inf
    lead = s.shape[:-1]
    m = np.full(lead + (1,), -np.inf, np.float32)
    l = np.zeros(lead + (1,), np.float32)
    acc = np.zeros(lead + (v_raw.shape[-1],), np.float32)
    vi = v_raw.astype(np.int64)
    pmax = QMAX if pmode == "signed" else 2 * QMAX
    for j in range(0, s.shape[-1], block):
        sb = s[..., j : j + block]
        m_new = np.maximum(m, sb.max(axis=-1, keepdims=True))
        base = np.where(np.isfinite(m_new), m_new, np.float32(0))
        alpha = np.exp(m - base)
        p = np.exp(sb - base).astype(np.float32)
        # P's fixed-point unit: 1 / pmax, or per row of the block pm / pmax (pm = the row's largest P
        # in the block; the vector cores scale each row of the block's P.V by it)
        pm = p.max(axis=-1, keepdims=True) if prow else np.ones(lead + (1,), np.float32)
        if KERNEL_ARITH and pmode == "signed":
            unit, inv = kernel_units(pm)
            p16 = kernel_q16(p, inv)
        else:
            pm = np.where(pm > 0, pm, np.float32(1)).astype(np.float32)
            unit = pm / np.float32(pmax)
            p16 = np.rint(p / unit)  # fp32 -> int (CAST_RINT)
        l = l * alpha + p16.sum(axis=-1, keepdims=True, dtype=np.float32) * unit
        vb = vi[..., j : j + block, :]
        if pmode == "signed":
            hi, lo = split_digits(p16)
            pv = digits_to_f32(int_mm(hi, vb), int_mm(lo, vb))
        else:  # offset digits: p16 - QMAX in [-QMAX, QMAX]; + QMAX * colsum(V) (a row of ones in the Mmad)
            hi, lo = split_digits(p16 - QMAX)
            colsum = vb.sum(axis=-2, keepdims=True)
            pv = digits_to_f32(int_mm(hi, vb), int_mm(lo, vb)) + np.float32(QMAX) * colsum.astype(np.float32)
        acc = acc * alpha + pv * unit
        m = m_new
    return np.where(l > 0, acc / np.where(l > 0, l, 1), np.float32(0))


def run_digits(query, key, value, pmode="signed", prow=False, **kw):
    """The digit-split kernel model of aclnnIncreFlashAttentionV4 with int8 K/V."""
    scale = kw.pop("scale_value", 1.0)
    pb = ifa._Problem(query, key, value, **{k: kw.get(k) for k in ifa._Problem.__init__.__code__.co_varnames[4:21]})
    assert pb.kv_int8 and pb.anti is not None
    s_anti, o_anti = pb.anti
    out = np.zeros((pb.B, pb.N, pb.D), np.float64)
    row_valid = np.zeros((pb.B, pb.N), bool)
    for b in range(pb.B):
        if pb.empty[b]:
            continue
        k_raw, v_raw, excluded, pse = pb.batch(b)
        if k_raw.shape[1] == 0:
            continue
        row_valid[b] = excluded is None or not excluded.all()
        q = pb.q[b].reshape(pb.n_kv, pb.G, pb.D).astype(np.float32)
        qs = q * s_anti[0].astype(np.float32) * np.float32(scale)  # (Nkv|1, 1, D) broadcast
        hi, lo, r = fixed_rows(qs)
        kt = k_raw.astype(np.int64).transpose(0, 2, 1)
        s_hi, s_lo = int_mm(hi, kt), int_mm(lo, kt)
        bias = None if pse is None else pse.reshape(pb.n_kv, pb.G, -1)
        o = attention_digits(s_hi, s_lo, r, v_raw, bias, excluded, pmode, prow)
        o = (o + o_anti[1].astype(np.float32)) * s_anti[1].astype(np.float32)
        out[b] = o.reshape(pb.N, pb.D)
    if pb.quant is not None:
        out = ifa._quantize(out, pb.quant, via_fp16=True)
        out[~row_valid] = 0.0
    else:
        out = round_to(out, pb.dtype)
    return pb.finish(out)


def big_cases():
    """Decode shapes of the sweep's int8 rows, scaled down in batch (the same per-row statistics)."""
    mk = cases_core.operator_module("incre_flash_attention_v4").make
    out = []
    for dtype in ("fp16", "bf16"):
        for mode, off in (("channel", True), ("tensor", False), ("channel", False)):
            out.append(
                mk(dtype, "BNSD", B=2, N=32, Nkv=4, S=4096, D=128, kv_int8=True, antiquant=mode, antiquant_offset=off)
            )
        out.append(mk(dtype, "BSH", B=2, N=32, Nkv=32, S=2048, D=128, kv_int8=True, antiquant="channel"))
        out.append(mk(dtype, "BNSD", B=1, N=8, Nkv=1, S=32768, D=128, kv_int8=True, antiquant="channel"))
        # wide query values (the fixed-point row is set by the row's largest element)
        out.append(
            mk(
                dtype,
                "BNSD",
                B=2,
                N=32,
                Nkv=4,
                S=4096,
                D=128,
                kv_int8=True,
                antiquant="channel",
                value_range=(-8.0, 8.0),
            )
        )
        # masks, pse, actual lengths and left padding on top; a larger score scale; other seeds
        kw = dict(kv_int8=True, antiquant="channel")
        out.append(
            mk(
                dtype,
                "BSH",
                B=3,
                N=16,
                Nkv=2,
                S=1000,
                D=128,
                actual=[1000, 1, 517],
                mask="random",
                mask_shape="BS",
                pse="BN1S",
                **kw,
            )
        )
        out.append(mk(dtype, "BNSD", B=2, N=8, Nkv=1, S=2048, D=64, actual=[2048, 700], pad=64, **kw))
        out.append(mk(dtype, "BNSD", B=2, N=32, Nkv=4, S=4096, D=128, scale=1.0, **kw))
        for seed in (1, 2):
            out.append(mk(dtype, "BNSD", B=2, N=32, Nkv=4, S=4096, D=128, value_range=(-8.0, 8.0), seed=seed, **kw))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--suite", default="full", choices=("full", "big", "both"))
    ap.add_argument("--pmode", default="signed", choices=("signed", "offset"))
    ap.add_argument("--punit", default="row", choices=("row", "fixed"), help="P's unit per row and block, or 1")
    ap.add_argument("--arith", default="model", choices=("model", "kernel"), help="units as the kernel forms them")
    a = ap.parse_args()
    global KERNEL_ARITH
    KERNEL_ARITH = a.arith == "kernel"
    mod = cases_core.operator_module("incre_flash_attention_v4")
    cs = []
    if a.suite in ("full", "both"):
        for c in mod.full():
            try:
                c.check()
            except Exception:
                continue
            if c.options["kv_int8"]:
                cs.append(c)
    if a.suite in ("big", "both"):
        cs += big_cases()
    fails = 0
    for c in cs:
        kw = c.inputs()
        gold = ifa.incre_flash_attention_v4(**kw)
        bench = ifa.incre_flash_attention_v4_benchmark(**kw)
        act = run_digits(pmode=a.pmode, prow=a.punit == "row", **kw)
        dt = c.output_dtypes()
        rep = compare(
            "incre_flash_attention_v4",
            {"attention_out": act},
            {"attention_out": gold},
            {"attention_out": bench},
            dtype=dt,
        )
        fails += not rep.passed
        print(f"{'PASS' if rep.passed else 'FAIL'} {c.features}  {rep.outputs[0].line()}")
    print(f"{len(cs) - fails}/{len(cs)} pass")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
