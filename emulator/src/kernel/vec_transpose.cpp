// TransDataTo5HD (the vnchwconv instruction): a 16 x 16 transpose of 16-bit elements between
// two lists of 16 UB addresses, one 32-byte block each, repeated with strides.
#include <cstring>

#include "vec_common.h"

namespace emu {

using namespace vec;

LocalRef UbAddress(const char *api, const char *what, uint64_t address)
{
    CoreCtx &c = Ctx();
    const int ub = static_cast<int>(Buf::UB);
    auto *p = reinterpret_cast<uint8_t *>(static_cast<uintptr_t>(address));
    if (c.mem[ub] == nullptr) return LocalRef{p, 0, ub};
    if (p < c.mem[ub] || p >= c.mem[ub] + c.memSize[ub])
        Fail(api, "%s address 0x%llx is not inside this core's UB", what, (unsigned long long)address);
    return LocalRef{p, static_cast<uint64_t>(c.mem[ub] + c.memSize[ub] - p), ub};
}

void TransDataTo5HD(const char *api, const LocalRef dst[16], const LocalRef src[16], int elemBytes, bool dstHigh,
                    bool srcHigh, uint32_t repeat, uint32_t dstRepStride, uint32_t srcRepStride)
{
    if (repeat == 0 || !Present(dst[0])) return;
    if (elemBytes != 2)
        Fail(api, "%d-byte elements: only the 16-bit form (half, int16_t, uint16_t) is implemented by the emulator",
             elemBytes);
    (void)dstHigh;  // the high/low half selects a 16-byte half for 8-bit elements only
    (void)srcHigh;
    // With one repeat the strides are not used.
    const uint64_t dPitch = repeat > 1 ? dstRepStride * 32ull : 0, sPitch = repeat > 1 ? srcRepStride * 32ull : 0;
    for (int i = 0; i < 16; ++i) {
        CheckOperand(api, "srcList", src[i], (repeat - 1) * sPitch + 32);
        CheckOperand(api, "dstList", dst[i], (repeat - 1) * dPitch + 32);
    }
    TimeVector(VClass::Simple, 2, repeat, api);
    for (uint32_t r = 0; r < repeat; ++r) {
        uint16_t in[16][16];
        for (int i = 0; i < 16; ++i) std::memcpy(in[i], static_cast<uint8_t *>(src[i].p) + r * sPitch, 32);
        for (int j = 0; j < 16; ++j) {
            uint16_t col[16];
            for (int i = 0; i < 16; ++i) col[i] = in[i][j];
            std::memcpy(static_cast<uint8_t *>(dst[j].p) + r * dPitch, col, 32);
        }
    }
    Count(Pipe::V, repeat * 1024ull, repeat);
}

}  // namespace emu
