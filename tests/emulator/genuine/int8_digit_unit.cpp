// One decode unit (G = 8 query heads of one KV head, 512 int8 keys, D = 128) through every piece
// of the int8 x int8 core on one MIX core, one key block at a time: the vector cores write the
// query digits (QueryDigits), the cube computes the int32 S digits of each block from the Nz K
// tile, the vector cores (4 rows each) form S, run the online softmax and hand P over as digits,
// the cube computes the P.V digits, the vector cores fold them and normalise. K and V reach the
// cube through the decode K/V ring: its producer (kv_ring.h, copied 16-bit rows) runs on the
// ring view of the int8 plan (Int8DigitRingView: D / 2 16-bit columns over the same bytes), so
// each ring slot holds the block's int8 rows in the cube's int8 Nz order. The cross-core
// hand-offs use the forward core's flags.
#include "kernel_operator.h"
#include "../../../op_kernel/attention_core/forward/forward_kernel.h"
#include "../../../op_kernel/attention_core/variants/decode_policies.h"
#include "../../../op_kernel/attention_core/variants/kv_ring.h"
#include "../../../op_kernel/attention_core/variants/int8_digit_layout.h"
#include "../../../op_kernel/attention_core/variants/int8_query_digits.h"
#include "../../../op_kernel/attention_core/variants/int8_digit_cube.h"

namespace {
constexpr uint32_t G = 8, ROWS = 16, D = 128, C = 128, BLOCKS = 4, R = 4;  // R: rows per vector core
constexpr uint64_t WS_Q = 0, WS_S = 4096, WS_P = WS_S + ROWS * C * 4, WS_O = WS_P + ROWS * C, WS_RING = 65536;
constexpr uint32_t RING_SLOTS = 8;
using RingVariant = AttentionCore::ForwardVariant<AttentionCore::SplitKvCombine, AttentionCore::KvDecodeRing<half>,
                                                  AttentionCore::ScoreDecodePse, AttentionCore::MaskDecode,
                                                  AttentionCore::SoftmaxPlain>;
constexpr float NEG = -1e30f;

__aicore__ inline void Cube(GM_ADDR ws)
{
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::A1> l1Buf;
    AscendC::TBuf<AscendC::TPosition::A2> l0aBuf;
    AscendC::TBuf<AscendC::TPosition::B2> l0bBuf;
    AscendC::TBuf<AscendC::TPosition::CO1> l0cBuf;
    pipe.InitBuffer(l1Buf, ROWS * D + ROWS * C + 2 * C * D);
    pipe.InitBuffer(l0aBuf, ROWS * D + ROWS * C);
    pipe.InitBuffer(l0bBuf, 2 * C * D);
    pipe.InitBuffer(l0cBuf, ROWS * (C + D) * 4);
    AscendC::GlobalTensor<int8_t> kvGm, qGm, pGm;
    AscendC::GlobalTensor<int32_t> sGm, oGm;
    kvGm.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(ws + WS_RING), RING_SLOTS * 2 * C * D);
    qGm.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(ws + WS_Q), ROWS * D);
    pGm.SetGlobalBuffer(reinterpret_cast<__gm__ int8_t *>(ws + WS_P), ROWS * C);
    sGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(ws + WS_S), ROWS * C);
    oGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(ws + WS_O), ROWS * D);
    const AscendC::LocalTensor<int8_t> l1 = l1Buf.Get<int8_t>();
    const AscendC::LocalTensor<int8_t> l1Q = l1, l1P = l1[ROWS * D], l1K = l1[ROWS * (D + C)], l1V = l1K[C * D];
    const AscendC::LocalTensor<int8_t> l0a = l0aBuf.Get<int8_t>();
    const AscendC::LocalTensor<int8_t> l0b = l0bBuf.Get<int8_t>();
    const AscendC::LocalTensor<int32_t> l0c = l0cBuf.Get<int32_t>();
    AscendC::CrossCoreWaitFlag<2, PIPE_MTE2>(AttentionCore::FLAG_Q_SCALED);
    AscendC::DataCopy(l1Q, qGm, AscendC::DataCopyParams(1, ROWS * D / 32, 0, 0));
    AttentionCore::PipeSync<AscendC::HardEvent::MTE2_MTE1>();
    AttentionCore::Int8DigitLoadA(l0a, l1Q, ROWS, D);
    for (uint32_t j = 0; j < BLOCKS; ++j) {
        // S digits of block j: its K/V ring slot pair in one copy, then the slot is free again
        AscendC::CrossCoreWaitFlag<2, PIPE_MTE2>(AttentionCore::FLAG_KV_READY);
        AscendC::DataCopy(l1K, kvGm[(j % RING_SLOTS) * 2 * C * D], AscendC::DataCopyParams(1, 2 * C * D / 32, 0, 0));
        AscendC::CrossCoreSetFlag<2, PIPE_MTE2>(AttentionCore::FLAG_KV_FREE);
        AttentionCore::PipeSync<AscendC::HardEvent::MTE2_MTE1>();
        AttentionCore::Int8DigitLoadKeys(l0b, l1K, C, D);
        AttentionCore::Int8DigitLoadValues(l0b[C * D], l1V, C, D);
        AttentionCore::PipeSync<AscendC::HardEvent::MTE1_M>();
        AttentionCore::Int8DigitMmad(l0c, l0a, l0b, ROWS, C, D);
        AttentionCore::PipeSync<AscendC::HardEvent::M_FIX>();
        AttentionCore::Int8DigitFixpipe(sGm, l0c, ROWS, C);
        AscendC::CrossCoreSetFlag<2, PIPE_FIX>(AttentionCore::FLAG_S_READY);
        // P.V digits once both vector cores stored P
        AscendC::CrossCoreWaitFlag(AttentionCore::FlagPReady(0));
        AscendC::DataCopy(l1P, pGm, AscendC::DataCopyParams(1, ROWS * C / 32, 0, 0));
        AttentionCore::PipeSync<AscendC::HardEvent::MTE2_MTE1>();
        AttentionCore::Int8DigitLoadA(l0a[ROWS * D], l1P, ROWS, C);
        AttentionCore::PipeSync<AscendC::HardEvent::MTE1_M>();
        AttentionCore::Int8DigitMmad(l0c[ROWS * C], l0a[ROWS * D], l0b[C * D], ROWS, D, C);
        AttentionCore::PipeSync<AscendC::HardEvent::M_FIX>();
        AttentionCore::Int8DigitFixpipe(oGm, l0c[ROWS * C], ROWS, D);
        AscendC::CrossCoreSetFlag<2, PIPE_FIX>(AttentionCore::FLAG_O_READY);
        AttentionCore::PipeSync<AscendC::HardEvent::FIX_M>();      // L0C free for the next block
        AttentionCore::PipeSync<AscendC::HardEvent::M_MTE1>();     // L0B free
        AttentionCore::PipeSync<AscendC::HardEvent::MTE1_MTE2>();  // L1 free
    }
}

struct Ub {
    AscendC::TBuf<AscendC::TPosition::VECCALC> s, t, work, hi, h, d, nz, prod, acc, row;
    AscendC::LocalTensor<float> Row(uint32_t i) { return row.Get<float>()[i * 64]; }
};

// Row max of R rows of C floats into dst (8 values; the first R valid).
__aicore__ inline void RowMax(const AscendC::LocalTensor<float> &dst, const AscendC::LocalTensor<float> &s,
                              const AscendC::LocalTensor<float> &work)
{
    AscendC::Max(work, s, s[64], 64, R, AscendC::BinaryRepeatParams(1, 1, 1, 8, C / 8, C / 8));
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::BlockReduceMax(work[R * C], work, R, 64, 1, 1, 8);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::BlockReduceMax(dst, work[R * C], 1, 64, 1, 1, 8);
    AscendC::PipeBarrier<PIPE_V>();
}

__aicore__ inline void Vector(const AttentionCore::DecodeTiling &td, GM_ADDR q, GM_ADDR scale, GM_ADDR k8, GM_ADDR v8,
                              GM_ADDR ws, GM_ADDR out)
{
    const uint32_t sub = AscendC::GetSubBlockIdx();
    {
        AttentionCore::QueryDigits<half> digits;
        digits.Run(td, q, scale, ws + WS_Q, 0, sub, 2);
    }
    AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(AttentionCore::FLAG_Q_SCALED);
    AscendC::TPipe pipe;
    // the ring's producer on the ring view of the plan: every block goes into the ring here
    AttentionCore::DecodeTiling view = td;
    AttentionCore::Int8DigitRingView(view);
    AttentionCore::ForwardTensors<RingVariant> t;
    t.workspace = ws;
    t.key = ws + WS_RING;
    t.value = t.key;
    t.kv.cacheKey = k8;
    t.kv.cacheValue = v8;
    AttentionCore::KvSource<AttentionCore::KvDecodeRing<half>> ring;
    ring.Init(view, t);
    ring.StreamInit(view, &pipe, t);
    Ub b;
    pipe.InitBuffer(b.s, R * C * 4);
    pipe.InitBuffer(b.t, R * C * 4);
    pipe.InitBuffer(b.work, (R * C + 64) * 4);
    pipe.InitBuffer(b.hi, R * C * 4);
    pipe.InitBuffer(b.h, 2 * R * C * 2);
    pipe.InitBuffer(b.d, 2 * R * C);
    pipe.InitBuffer(b.nz, 2 * R * C);
    pipe.InitBuffer(b.prod, 2 * R * C * 4);
    pipe.InitBuffer(b.acc, R * D * 4);
    pipe.InitBuffer(b.row, 16 * 64 * 4);
    AscendC::GlobalTensor<int32_t> sGm, oGm;
    AscendC::GlobalTensor<float> unitGm, outGm;
    AscendC::GlobalTensor<half> pGm;
    sGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(ws + WS_S), ROWS * C);
    oGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(ws + WS_O), ROWS * D);
    pGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(ws + WS_P), ROWS * C / 2);
    unitGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(ws + WS_Q + ROWS * D), G);
    outGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(out), G * D);
    const AscendC::LocalTensor<float> s = b.s.Get<float>();
    const AscendC::LocalTensor<float> acc = b.acc.Get<float>();
    const AscendC::LocalTensor<int32_t> prod = b.prod.Get<int32_t>();
    const AscendC::LocalTensor<float> m = b.Row(0), mNew = b.Row(1), alpha = b.Row(2), u = b.Row(3), qsum = b.Row(4);
    const AscendC::LocalTensor<float> rAll = b.Row(5), l = b.Row(8), bc = b.Row(9), rBlocks = b.Row(10);
    const AttentionCore::Int8DigitScratch w{b.work.Get<float>(), b.Row(6),        b.Row(7),
                                            b.hi.Get<float>(),   b.h.Get<half>(), b.d.Get<int8_t>(),
                                            b.nz.Get<int8_t>()};
    AscendC::Duplicate(m, NEG, 8);
    AscendC::Duplicate(l, 0.0f, 8);
    AscendC::Duplicate(acc, 0.0f, static_cast<int32_t>(R * D));
    for (uint32_t j = 0; j < BLOCKS; ++j) {
        AscendC::CrossCoreWaitFlag(AttentionCore::FLAG_S_READY);
        AttentionCore::PipeSync<AscendC::HardEvent::V_MTE2>();
        if (j == 0) {  // the query units (written before FLAG_Q_SCALED, read after the first S)
            AscendC::DataCopy(rAll, unitGm, G);
        }
        AttentionCore::Int8DigitLoadPair(prod, sGm, sub * R, R, C, ROWS);  // hi rows, then lo rows
        AttentionCore::PipeSync<AscendC::HardEvent::MTE2_V>();
        if (j == 0) {
            AttentionCore::BroadcastRows(rBlocks, rAll, G);
        }
        AttentionCore::Int8DigitScores(s, prod, R * C, rBlocks[sub * R * 8], b.t.Get<float>(), R, C);
        // online softmax: m' = max(m, rowmax), alpha = exp(m - m'), P = exp(S - m')
        RowMax(mNew, s, b.work.Get<float>());
        AscendC::Max(mNew, mNew, m, R);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Sub(alpha, m, mNew, R);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Exp(alpha, alpha, R);
        AscendC::Adds(m, mNew, 0.0f, R);
        AttentionCore::BroadcastRows(bc, mNew, R);
        AttentionCore::RowBroadcast<AttentionCore::RowOp::Sub>(s, bc, R, C, C);
        AscendC::Exp(s, s, static_cast<int32_t>(R * C));
        AscendC::PipeBarrier<PIPE_V>();
        AttentionCore::PipeSync<AscendC::HardEvent::MTE3_V>();  // the previous P store is done
        AttentionCore::Int8DigitBlockP(pGm, sub * R, ROWS, s, u, qsum, w, R, C, C);
        AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(AttentionCore::FlagPReady(0));
        // l = l * alpha + u * sum(q16)
        AscendC::Mul(l, l, alpha, R);
        AscendC::Mul(qsum, qsum, u, R);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Add(l, l, qsum, R);
        // acc = acc * alpha + u (256 O_hi + O_lo)
        AttentionCore::BroadcastRows(bc, alpha, R);
        AttentionCore::RowBroadcast<AttentionCore::RowOp::Mul>(acc, bc, R, D, D);
        AscendC::CrossCoreWaitFlag(AttentionCore::FLAG_O_READY);
        AttentionCore::PipeSync<AscendC::HardEvent::V_MTE2>();
        AttentionCore::Int8DigitLoadPair(prod, oGm, sub * R, R, D, ROWS);
        AttentionCore::PipeSync<AscendC::HardEvent::MTE2_V>();
        AttentionCore::BroadcastRows(bc, u, R);
        AttentionCore::Int8DigitFoldO(acc, prod, R * D, bc, b.t.Get<float>(), b.work.Get<float>(), R, D);
        ring.StreamAhead(j);
    }
    ring.StreamEnd();
    AttentionCore::BroadcastRows(bc, l, R);
    AttentionCore::RowBroadcast<AttentionCore::RowOp::Div>(acc, bc, R, D, D);
    AttentionCore::PipeSync<AscendC::HardEvent::V_MTE3>();
    AscendC::DataCopy(outGm[sub * R * D], acc, R * D);
}
}  // namespace

extern "C" __global__ __aicore__ void int8_digit_unit(GM_ADDR q, GM_ADDR scale, GM_ADDR k8, GM_ADDR v8, GM_ADDR ws,
                                                      GM_ADDR out, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA_WITH_STRUCT(AttentionCore::DecodeTiling, td, tiling);
    if ASCEND_IS_AIC {
        Cube(ws);
    }
    if ASCEND_IS_AIV {
        Vector(td, q, scale, k8, v8, ws, out);
    }
}
