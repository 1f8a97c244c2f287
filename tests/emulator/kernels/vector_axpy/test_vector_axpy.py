"""The double-buffered vector proof kernel (z = alpha * x + y) against NumPy, with its
per-pipe counters checked against hand-computed byte and instruction counts."""

import numpy as np
import pytest

from fakit import AclnnError
from fakit.backends import cpu


def ceil_div(a, b):
    return -(-a // b)


def per_core_length(total, elem_bytes, aiv_cores):
    """The tiling's split (vector_axpy_tiling.cpp): whole 32-byte blocks spread over the cores."""
    align = 32 // elem_bytes
    return ceil_div(ceil_div(total, align), aiv_cores) * align


def tiles_of(total, elem_bytes, aiv_cores, tile):
    """Lengths of every pipeline tile of every core."""
    per_core = per_core_length(total, elem_bytes, aiv_cores)
    lengths = [min(per_core, total - s) for s in range(0, total, per_core)]
    return [min(tile, n - o) for n in lengths for o in range(0, n, tile)]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("total,tile", [(10000, 64), (4099, 0), (48 * 256, 128), (7, 0)])
def test_axpy_matches_numpy(run_proof, dtype, total, tile):
    rng = np.random.default_rng(total)
    x = rng.standard_normal(total).astype(dtype)
    y = rng.standard_normal(total).astype(dtype)
    z = run_proof("vector_axpy", x=x, y=y, alpha=1.5, tileLength=tile)
    assert z.dtype == dtype
    # Muls then Add, each rounded to the element type (as the kernel computes it).
    expected = (dtype(1.5) * x).astype(dtype) + y
    np.testing.assert_array_equal(z, expected.astype(dtype))


def test_axpy_counters_equal_hand_computed_values(run_proof):
    total, tile, eb = 10000, 64, 4
    x = np.ones(total, np.float32)
    run_proof("vector_axpy", x=x, y=x, alpha=2.0, tileLength=tile)
    counters = cpu.last_counters()
    lengths = tiles_of(total, eb, 48, tile)
    assert counters["kernel"] == "vector_axpy"
    assert counters["block_dim"] == ceil_div(total, per_core_length(total, eb, 48))  # 47 cores
    t = counters["total"]
    assert t["MTE2"]["bytes"] == 2 * total * eb  # x and y read once
    assert t["MTE3"]["bytes"] == total * eb  # z written once
    assert t["MTE2"]["ops"] == 2 * len(lengths)  # one copy of x and one of y per tile
    assert t["MTE3"]["ops"] == len(lengths)
    assert t["V"]["bytes"] == 5 * total * eb  # Muls reads+writes, Add reads two and writes
    # Muls and Add: one repeat per 256 bytes of a tile
    assert t["V"]["ops"] == sum(2 * ceil_div(n * eb, 256) for n in lengths)
    assert t["M"]["macs"] == 0


def test_axpy_rejects_mixed_dtypes(run_proof):
    with pytest.raises(AclnnError) as err:
        run_proof("vector_axpy", x=np.ones(8, np.float32), y=np.ones(8, np.float16), alpha=1.0)
    assert err.value.status == 161002
    assert "x (ACL_FLOAT) and y (ACL_FLOAT16) must have the same dtype" in err.value.log


def test_axpy_rejects_dtypes_the_opdef_does_not_list(run_proof):
    with pytest.raises(AclnnError) as err:
        run_proof("vector_axpy", x=np.ones(8, np.int32), y=np.ones(8, np.int32), alpha=1.0)
    assert err.value.status == 161002
    assert "input x has dtype DT_INT32; supported: {DT_FLOAT, DT_FLOAT16}" in err.value.log


def test_axpy_tile_larger_than_ub_fails_tiling(run_proof):
    with pytest.raises(AclnnError) as err:
        run_proof(
            "vector_axpy", x=np.ones(1 << 16, np.float32), y=np.ones(1 << 16, np.float32), alpha=1.0, tileLength=1 << 16
        )
    assert err.value.status == 561002
    assert "exceeds the" in err.value.log
