"""Validation of the timeline model itself: small kernels whose modelled time follows
by hand from the cost table and the model's rules (emulator/src/timing/timeline.cpp):
  * an API call costs `issue` scalar cycles; the instruction starts when its pipe is free, the
    issue is done and its dependencies are met;
  * Mmad = mmad_head + ceil(m/16) ceil(n/16) ceil(k/16) cycles (fp16);
  * a GM->UB DataCopy = dma_head + bytes/hbm_read_bytes on first touch, bytes/l2_read_bytes after;
  * a vector instruction = vec_head + repeats x cycles per repeat (Exp fp32: 64 lanes / 32 per cycle);
  * a cross-core set carries (its pipe done + cross_flag) to the waiting core.
The expected cycles are computed here from the cost table the binary reports, so the tests keep
holding when calibration changes an assumed constant, and fail when the model's rules change.
"""

import json
import math

import pytest


def cycles(out):
    p = out["profile"]
    return p["critical_path_us"] * p["clock_mhz"]


def core_busy_cycles(out, sub, pipe):
    p = out["profile"]
    return [c["busy_us"][pipe] * p["clock_mhz"] for c in p["cores"] if c["sub"] == sub]


def mmad(c, m, n, k):
    return c["mmad_head"] + math.ceil(m / 16) * math.ceil(n / 16) * math.ceil(k / (c["macs_fp16"] / 256))


def exp_fp32(c, elems):
    return c["vec_head"] + math.ceil(elems / 64) * (64 / c["vec_transcendental"])


@pytest.mark.parametrize("n,size", [(1, 128), (10, 128), (7, 64)])
def test_back_to_back_mmad_loop_is_issue_plus_n_mmads(run_timing, n, size):
    out = run_timing("mmad_loop", n, size)
    c = out["costs"]
    assert cycles(out) == pytest.approx(c["issue"] + n * mmad(c, size, size, size), rel=1e-9)
    assert core_busy_cycles(out, "aic", "M") == [pytest.approx(n * mmad(c, size, size, size), rel=1e-9)]
    [aic] = out["profile"]["cores"]
    assert aic["ratio"]["M"] == pytest.approx(n * mmad(c, size, size, size) / cycles(out), rel=1e-9)
    assert out["profile"]["bound_pipe"] == "aic.M"
    assert out["profile"]["task_duration_us"] == pytest.approx(
        c["launch_us"] + cycles(out) / out["profile"]["clock_mhz"]
    )


def test_streaming_copy_first_touch_from_hbm_then_l2(run_timing):
    n, size = 16, 16384
    out = run_timing("stream_copy", n, size)
    c, p = out["costs"], out["profile"]
    first = c["dma_head"] + size / c["hbm_read_bytes"]
    again = c["dma_head"] + size / c["l2_read_bytes"]
    assert cycles(out) == pytest.approx(c["issue"] + n * first + n * again, rel=1e-9)
    assert p["hbm_bytes"] == n * size
    assert p["l2_read_bytes"] == 2 * n * size
    assert p["bound_pipe"] == "aiv.MTE2"


@pytest.mark.parametrize("window", [None, 0, 256])
def test_many_cores_streaming_share_the_devices_hbm_bandwidth(run_timing, tmp_path, window):
    """48 vector cores stream their own 256 KiB from HBM (each at its own DMA rate: 1.7 x the
    device's HBM bandwidth together), then again from L2. With `bandwidth_window` 0 (the
    default) every core runs as if alone and only the launch-wide floor holds the launch; with
    the ledger on, the HBM pass takes at least the device's bytes over its bandwidth, and not
    much more."""
    n, size, blocks = 16, 16384, 48
    env = {}
    if window is not None:
        costs = tmp_path / "costs.txt"
        costs.write_text(f"bandwidth_window {window}\n")
        env["ASCEND_EMU_COSTS"] = str(costs)
    out = run_timing("stream_copy", n, size, env=env, block_dim=blocks)
    c, p = out["costs"], out["profile"]
    first = c["dma_head"] + size / c["hbm_read_bytes"]
    again = c["dma_head"] + size / c["l2_read_bytes"]
    alone = c["issue"] + n * first + n * again
    assert p["hbm_bytes"] == blocks * n * size
    hbm_per_cycle = 1.6e12 / (p["clock_mhz"] * 1e6)  # the 910B2 row of the SoC table
    assert blocks * c["hbm_read_bytes"] > 1.5 * hbm_per_cycle
    if not window:
        assert c["bandwidth_window"] == 0
        assert cycles(out) == pytest.approx(alone, rel=1e-9)
        assert p["hbm_wait_us"] == 0 and p["bound_pipe"] == "aiv.MTE2"
        return
    floor = p["hbm_bytes"] / hbm_per_cycle
    assert floor > n * first  # the device, not one core's DMA, bounds the HBM pass
    assert floor <= cycles(out) <= floor + n * again + n * c["dma_head"] + 2 * c["bandwidth_window"]
    assert p["hbm_wait_us"] > 0 and p["bound_pipe"] == "HBM"


def moved_bytes(addr, length, line=512, smallest=128):
    """The documented transfer rule: cut at 512 B boundaries, each piece moved as the smallest
    aligned 128/256/512 B transfer that covers it."""
    out, s, end = 0, addr, addr + length
    while s < end:
        e = min(end, (s // line + 1) * line)
        size = smallest
        while size < line and s // size != (e - 1) // size:
            size *= 2
        out, s = out + size, e
    return out


@pytest.mark.parametrize("size", [64, 320, 768])
def test_unaligned_copies_move_whole_transfers(run_timing, size):
    n = 16
    out = run_timing("stream_copy", n, size)
    c = out["costs"]
    assert c["dma_min_transfer"] == 128
    seen, expected = set(), c["issue"]
    for _ in range(2):
        for i in range(n):
            a = i * size
            lines = range(a // 512, (a + size - 1) // 512 + 1)
            miss = sum(min(a + size, (ln + 1) * 512) - max(a, ln * 512) for ln in lines if ln not in seen)
            seen.update(lines)
            scale = moved_bytes(a, size) / size
            expected += c["dma_head"] + scale * (miss / c["hbm_read_bytes"] + (size - miss) / c["l2_read_bytes"])
    assert cycles(out) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("mib,second_pass_hits", [(128, True), (256, False)])
def test_l2_capacity_decides_whether_a_second_pass_hits(run_timing, mib, second_pass_hits):
    size = 65536
    n = mib * 1024 * 1024 // size  # the 910B2 L2 holds 192 MiB
    out = run_timing("stream_copy", n, size)
    c, p = out["costs"], out["profile"]
    first = c["dma_head"] + size / c["hbm_read_bytes"]
    again = c["dma_head"] + size / (c["l2_read_bytes"] if second_pass_hits else c["hbm_read_bytes"])
    assert cycles(out) == pytest.approx(c["issue"] + n * first + n * again, rel=1e-9)
    assert p["hbm_bytes"] == (1 if second_pass_hits else 2) * n * size


def test_vector_exp_loop(run_timing):
    n, elems = 12, 4096
    out = run_timing("exp_loop", n, elems)
    c = out["costs"]
    assert cycles(out) == pytest.approx(c["issue"] + n * exp_fp32(c, elems), rel=1e-9)
    assert out["profile"]["aiv_vec_ratio"] == pytest.approx(n * exp_fp32(c, elems) / cycles(out), rel=1e-9)


@pytest.mark.parametrize("byte", [0, 255, 511, 512])
@pytest.mark.parametrize("timing_only", ["0", "1"])
def test_bitwise_fold_drives_the_branch_also_in_timing_only_mode(run_timing, byte, timing_only):
    # Kernels branch on or-folded mask bytes (mask_band.h AnyExcluded): timing-only runs keep the
    # bitwise ops' data work, so the branch (10 Exp over 4096 fp32 when a byte is set) goes the
    # same way as in a computed run.
    out = run_timing("or_branch", byte, 10, env={"ASCEND_EMU_TIMING_ONLY": timing_only})
    exp_cycles = 10 * exp_fp32(out["costs"], 4096)
    v_cycles = out["profile"]["aiv_vec_ratio"] * cycles(out)
    if byte < 512:
        assert v_cycles > exp_cycles
    else:
        assert v_cycles < exp_cycles / 10


@pytest.mark.parametrize("check", ["0", "1"])
def test_single_vs_double_buffered_copy_compute(run_timing, check):
    n, elems = 10, 4096
    env = {"ASCEND_EMU_RACECHECK": check}
    single = run_timing("copy_compute", n, elems, buffers=1, env=env)
    double = run_timing("copy_compute", n, elems, buffers=2, env=env)
    c = single["costs"]
    d = c["dma_head"] + elems * 4 / c["hbm_read_bytes"]
    v = exp_fp32(c, elems)
    # the scalar unit issues 6 calls per tile (Alloc, DataCopy, EnQue, DeQue, Exp, Free) and runs ahead
    assert 6 * c["issue"] <= v <= d
    # one buffer: the copy of tile i+1 waits for FreeTensor of tile i (after its Exp)
    assert cycles(single) == pytest.approx(2 * c["issue"] + n * (d + v), rel=1e-9)
    # two buffers: copies run back to back, the last Exp trails
    assert cycles(double) == pytest.approx(2 * c["issue"] + n * d + v, rel=1e-9)
    assert cycles(double) < cycles(single)


@pytest.mark.parametrize("check", ["0", "1"])
def test_cube_to_vector_hand_off_over_cross_core_flags(run_timing, check):
    n, size = 8, 128
    out = run_timing("cube_to_vector", n, size, env={"ASCEND_EMU_RACECHECK": check})
    c, p = out["costs"], out["profile"]
    m = mmad(c, size, size, size)
    v = exp_fp32(c, 4096)
    assert v <= m and 2 * c["issue"] <= m
    # set k carries issue + (k+1) Mmads + cross_flag; each AIV issues its Exp after the wait
    assert cycles(out) == pytest.approx(c["issue"] + n * m + c["cross_flag"] + c["issue"] + v, rel=1e-9)
    aic = [x for x in p["cores"] if x["sub"] == "aic"][0]
    assert aic["end_us"] * p["clock_mhz"] == pytest.approx(c["issue"] + n * m, rel=1e-9)
    for x in p["cores"]:
        if x["sub"] != "aic":
            assert x["end_us"] == pytest.approx(p["critical_path_us"])


def test_sync_all_releases_everyone_at_the_last_arrival(run_timing):
    n, elems = 6, 2048
    out = run_timing("sync_all", n, elems, block_dim=2)
    c, p = out["costs"], out["profile"]
    e = exp_fp32(c, elems)
    assert e >= c["issue"]
    release = c["issue"] + n * e + c["sync_all"]  # block 0's last Exp ends; block 1 arrived long before
    for core in p["cores"]:
        assert core["end_us"] * p["clock_mhz"] == pytest.approx(release + c["issue"] + e, rel=1e-9)


def _spans(trace_path, clock_mhz):
    """(core, name) -> [(start, end)] in cycles, from the Chrome trace of a launch."""
    spans = {}
    for e in json.loads(trace_path.read_text())["traceEvents"]:
        if e["ph"] == "X":
            spans.setdefault((e["pid"], e["name"]), []).append((e["ts"] * clock_mhz, (e["ts"] + e["dur"]) * clock_mhz))
    return spans


@pytest.mark.parametrize("check", ["0", "1"])
def test_ibwait_releases_after_the_ibset_write_and_a_poll_read(run_timing, tmp_path, check):
    """Block 0 runs n Exp, then IBSet's its slot; block 1 IBWait's it at once, then runs one Exp.
    The IBWait's successful poll reads the slot when the IBSet's write is done (a GM read: at
    least dma_head); block 1 then clears the slot (its own write) and only then runs its Exp. The
    waiter's end follows the setter's work Exp for Exp."""
    elems = 2048
    ends = {}
    for n in (4, 6):
        trace = tmp_path / f"trace{n}.json"
        out = run_timing("ib_sync", n, elems, 0, env={"ASCEND_EMU_RACECHECK": check, "ASCEND_EMU_TRACE": str(trace)})
        c, p = out["costs"], out["profile"]
        e = exp_fp32(c, elems)
        spans = _spans(trace, p["clock_mhz"])
        [(_, set_write_end)] = spans[(0, "IBSet write")]
        [(poll_start, poll_end)] = spans[(1, "IBWait poll")]
        [(_, clear_end)] = spans[(1, "IBWait write")]
        [(exp_start, _)] = spans[(1, "Exp")]
        assert poll_start == pytest.approx(set_write_end, abs=0.5)  # the trace keeps 0.1 ns
        # the flow arrow of the slot: from block 0's write to block 1's IBWait
        [(arrow, _)] = spans[(1, "IBWait")]
        assert arrow == pytest.approx(set_write_end, abs=0.5) and spans[(0, "IBSet")][0][0] == arrow
        assert poll_end - poll_start >= c["dma_head"]
        assert exp_start >= clear_end >= poll_end
        ends[n] = {x["core"]: x["end_us"] * p["clock_mhz"] for x in p["cores"]}
        assert ends[n][1] >= ends[n][0] + c["dma_head"] + e
    assert ends[6][1] - ends[4][1] == pytest.approx(2 * e, rel=1e-9)
    assert ends[6][0] - ends[4][0] == pytest.approx(2 * e, rel=1e-9)


def test_ibwait_of_a_slot_set_long_before_does_not_wait(run_timing):
    """Block 1 works long before its IBWait: the slot was set long before, so the wait costs only
    its own poll and write, the same whatever block 0 did before its IBSet."""
    elems = 2048
    out = {n: run_timing("ib_sync", n, elems, 20)["profile"] for n in (0, 2)}
    c = run_timing("ib_sync", 0, elems, 22)
    e = exp_fp32(c["costs"], elems)
    end = {n: {x["core"]: x["end_us"] * p["clock_mhz"] for x in p["cores"]} for n, p in out.items()}
    assert end[0][1] == pytest.approx(end[2][1], rel=1e-9)
    later = {x["core"]: x["end_us"] * c["profile"]["clock_mhz"] for x in c["profile"]["cores"]}
    assert later[1] - end[0][1] == pytest.approx(2 * e, rel=1e-9)


def test_blocks_beyond_the_cores_start_when_a_core_frees(run_timing):
    n, elems = 3, 4096
    one = cycles(run_timing("exp_loop", n, elems))
    out = run_timing("exp_loop", n, elems, block_dim=49)  # 48 AIVs on the 910B2 table
    p = out["profile"]
    assert cycles(out) == pytest.approx(2 * one, rel=1e-9)
    last = [x for x in p["cores"] if x["core"] == 48][0]
    assert last["start_us"] * p["clock_mhz"] == pytest.approx(one, rel=1e-9)


def test_model_off_reports_no_time(run_timing):
    out = run_timing("exp_loop", 2, 1024, env={"ASCEND_EMU_TIMING": "0"})
    assert out["profile"]["model"] == "off"
    assert "task_duration_us" not in out["profile"]


def test_calibrated_cost_file_changes_only_what_it_names(run_timing, tmp_path):
    costs = tmp_path / "costs.txt"
    costs.write_text("issue\t3\nvec_head 5\n")  # any whitespace separates key and value
    out = run_timing("exp_loop", 4, 2048, env={"ASCEND_EMU_COSTS": str(costs)})
    c = out["costs"]
    assert c["issue"] == 3 and c["vec_head"] == 5
    assert cycles(out) == pytest.approx(3 + 4 * (5 + 32 * 2), rel=1e-9)
