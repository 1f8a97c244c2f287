// Fault proof kernel: AIV 0 copies x to y through the UB, after `iterations` vector passes;
// `mode` adds a misuse (emu_fault_tiling_data.h) that the emulator must report.
#include "emu_fault_tiling_data.h"
#include "kernel_operator.h"

using namespace AscendC;

extern "C" __global__ __aicore__ void emu_fault(GM_ADDR x, GM_ADDR y, GM_ADDR /* workspace */, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_MIX_AIC_1_2);
    GET_TILING_DATA_WITH_STRUCT(EmuFaultTilingData, t, tiling);
    if ASCEND_IS_AIC {
        if (t.mode == EMU_FAULT_UNSET_FLAG) {
            CrossCoreWaitFlag(0);
        }
        return;
    }
    if (GetSubBlockIdx() != 0) {
        return;
    }
    const uint32_t readLength = t.mode == EMU_FAULT_GM_OVERRUN ? t.length + EMU_FAULT_OVERRUN : t.length;
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, readLength * sizeof(float));
    LocalTensor<float> data = buf.Get<float>();
    GlobalTensor<float> xGm;
    GlobalTensor<float> yGm;
    xGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(x), readLength);
    yGm.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(y), t.length);
    DataCopy(data, xGm, readLength);
    PipeBarrier<PIPE_ALL>();
    for (uint32_t i = 0; i < t.iterations; ++i) {
        Adds(data, data, 0.0f, static_cast<int32_t>(t.length));
        PipeBarrier<PIPE_V>();
    }
    PipeBarrier<PIPE_ALL>();
    DataCopy(yGm, data, t.length);
}
