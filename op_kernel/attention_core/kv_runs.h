// Hook of the cube stage for K/V sources whose key rows are not all evenly spaced: a paged
// cache (decode) is contiguous only within a page. KvRowsInRun(kv, b, token) says how many rows
// from `token` on are evenly spaced (KvRowPitch apart); the stage loads a key block as such
// runs. The default (dense layouts) is one run for any block. A source with pages overloads
// it in its own header (found by argument-dependent lookup), e.g. decode_policies.h.
#pragma once
#include "kernel_operator.h"

namespace AttentionCore {

template <class Kv>
__aicore__ inline uint32_t KvRowsInRun(const Kv &, uint32_t, uint64_t)
{
    return 0xFFFFFFFFu;
}

}  // namespace AttentionCore
