// IBSet / IBWait between vector cores, as CANN's samples use them: a core stages data in GM,
// IBSet's its own slot; the core that needs the data IBWait's that slot, then reads it.
//   ib_sync_ring  AIV only, N blocks, ROUNDS rounds: block b stages x[b] + 1 + r in stage[r][b],
//                 IBSet(b, 0); then IBWait((b + N - 1) % N, 0) and y[r][b] = 2 * stage[r][pred].
//                 Every round reuses eventID 0: a block's second IBSet waits until its successor
//                 has IBWait-ed the first (the slot is back to 0).
//   ib_sync_mix   MIX 1:2, isAIVOnly = false (slots of GetBlockNum() * 2 vector cores): vector core
//                 0 of each AI core stages x[block] in `stage` and IBSet's its slot (eventID 1);
//                 vector core 1 IBWait's it, writes y[block] = stage + 1, then IBSet's its own
//                 slot, which nobody waits for (the host checks which int32 it set). The cube core
//                 calls both too: on Atlas A2 they return at once there.
#include "kernel_operator.h"

namespace {
constexpr uint32_t TILE = 64;  // floats per block and round
constexpr uint32_t ROUNDS = 2;

// x -> UB, dst = src * mul + add, -> GM, with the flags of one UB tile.
__aicore__ inline void Stage(const AscendC::GlobalTensor<float> &dst, const AscendC::GlobalTensor<float> &src,
                             const AscendC::LocalTensor<float> &tile, float add, float mul)
{
    AscendC::DataCopy(tile, src, TILE);
    AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
    AscendC::Muls(tile, tile, mul, TILE);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Adds(tile, tile, add, TILE);
    AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID0);
    AscendC::DataCopy(dst, tile, TILE);
    AscendC::SetFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID0);  // the tile is free again
    AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID0);
}
}  // namespace

extern "C" __global__ __aicore__ void ib_sync_ring(GM_ADDR x, GM_ADDR y, GM_ADDR stage, GM_ADDR sync)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> data;
    AscendC::TBuf<AscendC::TPosition::VECCALC> poll;
    pipe.InitBuffer(data, TILE * sizeof(float));
    pipe.InitBuffer(poll, 8 * sizeof(int32_t));
    const int32_t n = static_cast<int32_t>(AscendC::GetBlockNum());
    const int32_t b = static_cast<int32_t>(AscendC::GetBlockIdx());
    const int32_t pred = (b + n - 1) % n;
    AscendC::GlobalTensor<float> xGm, yGm, stageGm;
    AscendC::GlobalTensor<int32_t> syncGm;
    xGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(x), static_cast<uint64_t>(n) * TILE);
    yGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(y), static_cast<uint64_t>(n) * TILE * ROUNDS);
    stageGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(stage), static_cast<uint64_t>(n) * TILE * ROUNDS);
    syncGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(sync), static_cast<uint64_t>(n) * 8);
    AscendC::LocalTensor<float> tile = data.Get<float>();
    AscendC::LocalTensor<int32_t> ub = poll.Get<int32_t>();
    for (uint32_t r = 0; r < ROUNDS; ++r) {
        const uint64_t row = static_cast<uint64_t>(r) * n;
        Stage(stageGm[(row + b) * TILE], xGm[static_cast<uint64_t>(b) * TILE], tile, 1.0f + r, 1.0f);
        AscendC::IBSet(syncGm, ub, b, 0);
        AscendC::IBWait(syncGm, ub, pred, 0);
        Stage(yGm[(row + b) * TILE], stageGm[(row + pred) * TILE], tile, 0.0f, 2.0f);
    }
}

extern "C" __global__ __aicore__ void ib_sync_mix(GM_ADDR x, GM_ADDR y, GM_ADDR stage, GM_ADDR sync)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    AscendC::GlobalTensor<int32_t> syncGm;
    syncGm.SetGlobalBuffer(reinterpret_cast<__gm__ int32_t *>(sync));
    if ASCEND_IS_AIC {
        AscendC::LocalTensor<int32_t> none;  // the cube core has no UB: the calls must not touch it
        AscendC::IBSet<false>(syncGm, none, 0, 0);
        AscendC::IBWait<false>(syncGm, none, 1, 0);
        return;
    }
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> data;
    AscendC::TBuf<AscendC::TPosition::VECCALC> poll;
    pipe.InitBuffer(data, TILE * sizeof(float));
    pipe.InitBuffer(poll, 8 * sizeof(int32_t));
    const int32_t idx = static_cast<int32_t>(AscendC::GetBlockIdx());  // block * 2 + sub-block
    const uint64_t block = static_cast<uint64_t>(idx / 2);
    AscendC::GlobalTensor<float> xGm, yGm, stageGm;
    xGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(x));
    yGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(y));
    stageGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(stage));
    AscendC::LocalTensor<float> tile = data.Get<float>();
    AscendC::LocalTensor<int32_t> ub = poll.Get<int32_t>();
    if (AscendC::GetSubBlockIdx() == 0) {
        Stage(stageGm[block * TILE], xGm[block * TILE], tile, 0.0f, 1.0f);
        AscendC::IBSet<false>(syncGm, ub, idx, 1);
    } else {
        AscendC::IBWait<false>(syncGm, ub, idx - 1, 1);
        Stage(yGm[block * TILE], stageGm[block * TILE], tile, 1.0f, 1.0f);
        AscendC::IBSet<false>(syncGm, ub, idx, 1);
    }
}
