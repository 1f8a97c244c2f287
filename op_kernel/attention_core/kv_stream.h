// Hooks of the forward core for K/V sources whose key blocks are produced on the chip while the
// core runs (the int8 decode cache, kv_antiquant.h): the vector cores write each key block's K
// and V in the input dtype into a small per-core ring in the workspace a few blocks ahead of
// the cube, and the cube waits for a block before loading it and frees its ring slot after.
//   cube:   KvBeforeLoad(kv, u, blk, isValue) right before the K (V) rows of a block are loaded
//           into L1; KvAfterLoad(kv, isValue) right after those loads are issued.
//   vector: KvStreamInit(kv, p, pipe, t) once after the stage's own buffers (it may produce the
//           first blocks); KvStreamAhead(kv, block) after the softmax of the core's block-th key
//           block (counted over all its units); KvStreamEnd(kv) after the last unit;
//           KvFinishRows(kv, u, rowOff, rows, acc, sum) on a unit's unnormalised output rows
//           (pitch headDimAlign) and softmax sums before they are normalised or stored as
//           partials (a source whose values need a per-channel affine map applies it here).
// The defaults (every source that reads K/V straight from GM) do nothing. A producing source
// overloads them in its own header (found by argument-dependent lookup).
#pragma once
#include "kernel_operator.h"
#include "policies.h"
#include "sync.h"

namespace AttentionCore {

template <class Kv>
__aicore__ inline void KvBeforeLoad(Kv &, const WorkUnit &, const KvBlock &, bool)
{
}

template <class Kv>
__aicore__ inline void KvAfterLoad(Kv &, bool)
{
}

template <class Kv>
__aicore__ inline void KvStreamInit(Kv &, const ForwardParams *, AscendC::TPipe *, const ForwardTensors &)
{
}

template <class Kv>
__aicore__ inline void KvStreamAhead(Kv &, uint64_t)
{
}

template <class Kv>
__aicore__ inline void KvStreamEnd(Kv &)
{
}

template <class Kv>
__aicore__ inline void KvFinishRows(Kv &, const WorkUnit &, uint32_t, uint32_t, const AscendC::LocalTensor<float> &,
                                    const AscendC::LocalTensor<float> &)
{
}

}  // namespace AttentionCore
