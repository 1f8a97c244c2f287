// Hook of the vector stage for work splits that cut a row's keys over several units (decode
// split-KV): StorePartialOutput() may take the unit's unnormalised output rows with their
// running max and sum and return true, in which case the stage writes nothing; a later
// combine pass merges the partials. The default (every other split) keeps the output final.
// A split that stores partials overloads it in its own header (found by argument-dependent
// lookup when the stage is instantiated), e.g. split_kv_combine.h.
#pragma once
#include "kernel_operator.h"
#include "policies.h"

namespace AttentionCore {

template <class Split>
__aicore__ inline bool StorePartialOutput(const Split &, const WorkUnit &, uint32_t, uint32_t,
                                          const AscendC::LocalTensor<float> &, const AscendC::LocalTensor<float> &,
                                          const AscendC::LocalTensor<float> &)
{
    return false;
}

}  // namespace AttentionCore
