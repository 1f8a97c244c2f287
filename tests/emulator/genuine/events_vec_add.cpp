// y = x + 1.5 (fp16) on AIV cores, one TBuf and explicit event ids instead of queues:
// MTE2 -> V -> MTE3 per tile, and the reverse hand-overs before a buffer is reused.
#include "kernel_operator.h"

namespace {
constexpr uint32_t TILE = 256;  // halves per tile
constexpr uint32_t TILES = 4;   // tiles per block
}

extern "C" __global__ __aicore__ void events_vec_add(GM_ADDR x, GM_ADDR y)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, 2 * TILE * sizeof(half));
    const uint64_t base = static_cast<uint64_t>(AscendC::GetBlockIdx()) * TILE * TILES;
    AscendC::GlobalTensor<half> xGm;
    AscendC::GlobalTensor<half> yGm;
    xGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(x) + base, TILE * TILES);
    yGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(y) + base, TILE * TILES);
    AscendC::LocalTensor<half> in = buf.Get<half>();
    AscendC::LocalTensor<half> out = in[TILE];
    for (uint32_t t = 0; t < TILES; ++t) {
        if (t > 0) AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVENT_ID0);  // V has read `in`
        AscendC::DataCopy(in, xGm[t * TILE], TILE);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVENT_ID0);
        if (t > 0) AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID1);  // MTE3 has stored `out`
        AscendC::Adds(out, in, static_cast<half>(1.5f), TILE);
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVENT_ID0);
        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID1);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVENT_ID1);
        AscendC::DataCopy(yGm[t * TILE], out, TILE);
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID1);
    }
    AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVENT_ID0);  // drain the last sets
    AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVENT_ID1);
}
