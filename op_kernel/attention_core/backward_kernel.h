// The backward attention core: the AIC runs BackwardCube, its two AIVs BackwardVector; they
// meet in the per-core slots of the workspace, the cross-core flags FLAG_BWD_SDP/GRAD and two
// SyncAll barriers (after the zeroing/row-term pass, before the cast-out pass).
#pragma once
#include "kernel_operator.h"
#include "backward_params.h"
#include "backward_cube.h"
#include "backward_vector.h"

namespace AttentionCore {

struct BackwardTensors {
    GM_ADDR query;
    GM_ADDR key;
    GM_ADDR value;
    GM_ADDR dy;
    GM_ADDR mask;
    GM_ADDR softmaxMax;
    GM_ADDR softmaxSum;
    GM_ADDR attentionIn;
    GM_ADDR seqQ;
    GM_ADDR seqKv;
    GM_ADDR sink;
    GM_ADDR dq;
    GM_ADDR dk;
    GM_ADDR dv;
    GM_ADDR dsink;
    GM_ADDR workspace;  // the user workspace (after GetUserWorkspace)
};

template <typename T>
__aicore__ inline void RunBackward(const BackwardParams *p, const BackwardTensors &t)
{
    AscendC::TPipe pipe;
    if ASCEND_IS_AIC {
        BackwardCube<T> cube;
        cube.Init(p, &pipe, t.query, t.key, t.value, t.dy, t.seqQ, t.seqKv, t.workspace);
        cube.Process();
    }
    if ASCEND_IS_AIV {
        BackwardVector<T> vec;
        vec.Init(p, &pipe, t.dy, t.mask, t.softmaxMax, t.softmaxSum, t.attentionIn, t.seqQ, t.seqKv, t.sink, t.dq, t.dk,
                 t.dv, t.dsink, t.workspace);
        vec.Process();
    }
}

}  // namespace AttentionCore
