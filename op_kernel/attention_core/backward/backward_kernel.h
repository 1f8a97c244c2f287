// The backward attention core: the AIC runs BackwardCube, its two AIVs BackwardVector; they
// meet in the per-core slots of the workspace, the cross-core flags FLAG_BWD_SDP/GRAD and two
// SyncAll barriers (after the zeroing/row-term pass, before the cast-out pass).
#pragma once
#include "kernel_operator.h"
#include "backward_params.h"
#include "backward_cube.h"
#include "backward_vector.h"

namespace AttentionCore {

template <typename T> __aicore__ inline void RunBackward(const BackwardParams *p, const BackwardTensors &t)
{
    AscendC::TPipe pipe;
    if ASCEND_IS_AIC {
        BackwardCube<T> cube;
        cube.Init(p, &pipe, t);
        cube.Process();
    }
    if ASCEND_IS_AIV {
        BackwardVector<T> vec;
        vec.Init(p, &pipe, t);
        vec.Process();
    }
}

}  // namespace AttentionCore
