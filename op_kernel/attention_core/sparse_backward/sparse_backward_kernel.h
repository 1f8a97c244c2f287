// The sparse backward core (aclnnSparseFlashAttentionGrad): the AIC runs SparseBackwardCube,
// its two AIVs SparseBackwardVector; they meet in the per-core workspace slots, the
// cross-core flags FLAG_SPARSE_SDP/GRAD/KV/DQ and two SyncAll barriers (after zeroing, before
// the cast-out pass). KvGather is the KV source both sides walk; the vector cores gather.
#pragma once
#include "kernel_operator.h"
#include "sparse_backward_cube.h"
#include "sparse_backward_vector.h"

namespace AttentionCore {

struct SparseBackwardTensors {
    GM_ADDR query;
    GM_ADDR key;
    GM_ADDR value;
    GM_ADDR sparseIndices;
    GM_ADDR dy;
    GM_ADDR out;
    GM_ADDR softmaxMax;
    GM_ADDR softmaxSum;
    GM_ADDR seqQ;
    GM_ADDR seqKv;
    GM_ADDR queryRope;
    GM_ADDR keyRope;
    GM_ADDR dq;
    GM_ADDR dk;
    GM_ADDR dv;
    GM_ADDR dqRope;
    GM_ADDR dkRope;
    GM_ADDR workspace;  // the user workspace (after GetUserWorkspace)
};

template <typename T>
__aicore__ inline void RunSparseBackward(const SparseBackwardParams *p, const SparseBackwardTensors &t)
{
    AscendC::TPipe pipe;
    if ASCEND_IS_AIC {
        SparseBackwardCube<T> cube;
        cube.Init(p, &pipe, t.query, t.sparseIndices, t.dy, t.seqQ, t.seqKv, t.queryRope, t.workspace);
        cube.Process();
    }
    if ASCEND_IS_AIV {
        SparseBackwardVector<T> vec;
        vec.Init(p, &pipe, t.query, t.key, t.value, t.queryRope, t.keyRope, t.sparseIndices, t.dy, t.out, t.softmaxMax,
                 t.softmaxSum, t.seqQ, t.seqKv, t.dq, t.dk, t.dv, t.dqRope, t.dkRope, t.workspace);
        vec.Process();
    }
}

}  // namespace AttentionCore
