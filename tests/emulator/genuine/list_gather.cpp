// y[i * 16 .. i * 16 + 15] = the first 16 halves of tensor i of a tensor list (a DYNAMIC
// input), on one AIV core. ListTensorDesc is declared by kernel_operator_list_tensor_intf.h,
// not by kernel_operator.h, and its accessors are non-const.
#include "kernel_operator.h"
#include "kernel_operator_list_tensor_intf.h"

extern "C" __global__ __aicore__ void list_gather(GM_ADDR list, GM_ADDR y)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    constexpr uint32_t ROW = 16;
    AscendC::TPipe pipe;
    AscendC::TBuf<AscendC::TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, ROW * sizeof(half));
    AscendC::LocalTensor<half> row = buf.Get<half>();
    AscendC::ListTensorDesc tensors(reinterpret_cast<__gm__ void *>(list));
    const uint32_t count = tensors.GetSize();
    AscendC::GlobalTensor<half> yGm;
    yGm.SetGlobalBuffer(reinterpret_cast<__gm__ half *>(y), count * ROW);
    for (uint32_t i = 0; i < count; ++i) {
        AscendC::GlobalTensor<half> src;
        src.SetGlobalBuffer(tensors.GetDataPtr<half>(i), ROW);
        if (i > 0) AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID3);  // `row` was stored
        AscendC::DataCopy(row, src, ROW);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID3);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_MTE3>(EVENT_ID3);
        AscendC::DataCopy(yGm[i * ROW], row, ROW);
        AscendC::SetFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID3);
    }
    if (count > 0) AscendC::WaitFlag<AscendC::HardEvent::MTE3_MTE2>(EVENT_ID3);  // drain the last set
}
