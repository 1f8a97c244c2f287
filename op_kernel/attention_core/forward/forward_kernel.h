// The forward attention core: one template that every forward operator instantiates with its
// Variant (a set of seam policies, see policies.h). The cube core runs ForwardCube, its two
// vector cores run ForwardVector; they meet only in the per-core workspace slots and the
// cross-core flags of sync.h.
#pragma once
#include "kernel_operator.h"
#include "forward_params.h"
#include "policies.h"
#include "forward_cube.h"
#include "forward_vector.h"

namespace AttentionCore {

// A forward variant names one implemented policy per seam.
template <class SplitTag, class KvTag, class ScoreTag, class MaskTag, class SoftmaxTag> struct ForwardVariant {
    using Split = WorkSplit<SplitTag>;
    using Kv = KvSource<KvTag>;
    using Score = ScoreMod<ScoreTag>;
    using Mask = MaskMod<MaskTag>;
    using Softmax = SoftmaxMod<SoftmaxTag>;
};

// `tiling` is the operator's tiling data: the core's ForwardParams (`params`) and its policies'
// pieces (policies.h); `t` its GM tensors, composed the same way (ForwardTensors<Variant> or a
// struct with the same members). LAZY_PV and KV_NZ: the P.V mode and the K/V staging the host
// chose (ForwardParams::lazyO, ::kvNz), which the kernel entry reads from the tiling key
// (ForwardTilingKey).
template <typename T, class Variant, bool LAZY_PV, bool KV_NZ = false, class Tiling, class GmTensors>
__aicore__ inline void RunForward(const Tiling &tiling, const GmTensors &t)
{
    AscendC::TPipe pipe;
    if ASCEND_IS_AIC {
        ForwardCube<T, Variant, LAZY_PV, KV_NZ> cube;
        cube.Init(tiling, &pipe, t);
        cube.Process();
    }
    if ASCEND_IS_AIV {
        ForwardVector<T, Variant, LAZY_PV, KV_NZ> vec;
        vec.Init(tiling, &pipe, t);
        vec.Process();
    }
}

}  // namespace AttentionCore
