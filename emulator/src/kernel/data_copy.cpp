// DMA engines behind DataCopy / DataCopyPad / Nd2Nz (asc-devkit `include/basic_api/kernel_struct_data_copy.h`).
// Bounds and alignment are checked once per call over the whole strided span.
#include <cstring>
#include <mutex>

#include "emu/core.h"
#include "emu/dtype.h"
#include "emu/race.h"
#include "kernel/kernel_data_copy.h"

namespace emu {
namespace {

const char *BufName(int b)
{
    static const char *n[] = {"GM", "UB", "L1", "L0A", "L0B", "L0C", "BT", "FB"};
    return n[b];
}

bool Present(const LocalRef &r) { return Ctx().mem[r.buf] != nullptr; }

// Checks a local operand touched over [0, span) bytes from its start, 32-byte aligned start.
void CheckLocalSpan(const char *api, const char *what, const LocalRef &r, uint64_t span)
{
    CheckLocal(api, what, static_cast<Buf>(r.buf), r.p, span);
    if (span > r.bytes)
        Fail(api, "%s needs %llu bytes but the %s tensor has %llu", what, (unsigned long long)span, BufName(r.buf),
             (unsigned long long)r.bytes);
    if (LocalOffset(static_cast<Buf>(r.buf), r.p) % 32 != 0)
        Fail(api, "%s address %s+%llu is not 32-byte aligned", what, BufName(r.buf),
             (unsigned long long)LocalOffset(static_cast<Buf>(r.buf), r.p));
}

uint64_t Span(uint32_t count, uint64_t burst, uint64_t pitch) { return count == 0 ? 0 : (count - 1) * pitch + burst; }

std::mutex g_atomicMu;  // atomic GM writes from all cores are serialised (any order is legal)

template <class T> void AtomicApply(uint8_t *dst, const uint8_t *src, uint64_t bytes, int op)
{
    const uint64_t n = bytes / sizeof(T);
    for (uint64_t i = 0; i < n; ++i) {
        T a, b;
        std::memcpy(&a, dst + i * sizeof(T), sizeof(T));
        std::memcpy(&b, src + i * sizeof(T), sizeof(T));
        const float fa = static_cast<float>(a), fb = static_cast<float>(b);
        T r = op == 1 ? static_cast<T>(fa + fb) : op == 2 ? (fb > fa ? b : a) : (fb < fa ? b : a);
        std::memcpy(dst + i * sizeof(T), &r, sizeof(T));
    }
}
template <> void AtomicApply<int32_t>(uint8_t *dst, const uint8_t *src, uint64_t bytes, int op)
{
    const uint64_t n = bytes / 4;
    for (uint64_t i = 0; i < n; ++i) {
        int32_t a, b;
        std::memcpy(&a, dst + i * 4, 4);
        std::memcpy(&b, src + i * 4, 4);
        int64_t r = op == 1 ? static_cast<int64_t>(a) + b : op == 2 ? (b > a ? b : a) : (b < a ? b : a);
        r = r > INT32_MAX ? INT32_MAX : r < INT32_MIN ? INT32_MIN : r;
        const int32_t r32 = static_cast<int32_t>(r);
        std::memcpy(dst + i * 4, &r32, 4);
    }
}

}  // namespace

// A GM store honouring the core's atomic mode.
void GmStore(const char *api, uint8_t *dst, const uint8_t *src, uint64_t bytes)
{
    CoreCtx &c = Ctx();
    if (c.atomicOp == 0) {
        std::memcpy(dst, src, bytes);
        return;
    }
    const DType t = static_cast<DType>(c.atomicDtype);
    std::lock_guard<std::mutex> lock(g_atomicMu);
    switch (t) {
        case DType::F32:
            AtomicApply<float>(dst, src, bytes, c.atomicOp);
            break;
        case DType::F16:
            AtomicApply<half>(dst, src, bytes, c.atomicOp);
            break;
        case DType::BF16:
            AtomicApply<bfloat16_t>(dst, src, bytes, c.atomicOp);
            break;
        case DType::I32:
            AtomicApply<int32_t>(dst, src, bytes, c.atomicOp);
            break;
        default:
            Fail(api, "atomic mode with element type %s is not supported", DTypeName(t));
    }
}

void SetAtomic(int op, DType t)
{
    if (op != 0 && t != DType::F32 && t != DType::F16 && t != DType::BF16 && t != DType::I32 && t != DType::I16 &&
        t != DType::I8)
        Fail("SetAtomicAdd", "element type %s is not supported (half, float, bfloat16_t, int8/16/32)", DTypeName(t));
    Ctx().atomicOp = op;
    Ctx().atomicDtype = static_cast<int>(t);
}

void DmaToLocal(const char *api, LocalRef dst, const void *gm, uint32_t count, uint64_t burst, uint64_t srcPitch,
                uint64_t dstPitch)
{
    if (count == 0 || burst == 0 || !Present(dst)) return;  // NOP; a wrong-core call is a NOP on hardware too
    if (count > 4095) Fail(api, "blockCount %u exceeds 4095", count);
    const Buf b = static_cast<Buf>(dst.buf);
    if (b != Buf::UB && b != Buf::L1) Fail(api, "destination must be in UB or L1, not %s", BufName(dst.buf));
    CheckGm(api, "source", gm, Span(count, burst, srcPitch));
    CheckLocalSpan(api, "destination", dst, Span(count, burst, dstPitch));
    RaceWrite(api, Pipe::MTE2, dst.buf, dst.p, Span(count, burst, dstPitch));
    RaceGm(api, Pipe::MTE2, gm, count, burst, srcPitch, false);
    auto *d = static_cast<uint8_t *>(dst.p);
    auto *s = static_cast<const uint8_t *>(gm);
    for (uint32_t i = 0; i < count; ++i) std::memcpy(d + i * dstPitch, s + i * srcPitch, burst);
    TimeGmRead(Pipe::MTE2, gm, count, burst, srcPitch, api);
    Count(Pipe::MTE2, count * burst);
}

void DmaToGm(const char *api, void *gm, LocalRef src, uint32_t count, uint64_t burst, uint64_t srcPitch,
             uint64_t dstPitch, DType)
{
    if (count == 0 || burst == 0 || !Present(src)) return;
    if (count > 4095) Fail(api, "blockCount %u exceeds 4095", count);
    const Buf b = static_cast<Buf>(src.buf);
    if (b != Buf::UB && b != Buf::L1) Fail(api, "source must be in UB or L1, not %s", BufName(src.buf));
    CheckLocalSpan(api, "source", src, Span(count, burst, srcPitch));
    CheckGm(api, "destination", gm, Span(count, burst, dstPitch));
    RaceRead(api, Pipe::MTE3, src.buf, src.p, Span(count, burst, srcPitch));
    RaceGm(api, Pipe::MTE3, gm, count, burst, dstPitch, true);
    auto *d = static_cast<uint8_t *>(gm);
    auto *s = static_cast<const uint8_t *>(src.p);
    for (uint32_t i = 0; i < count; ++i) GmStore(api, d + i * dstPitch, s + i * srcPitch, burst);
    TimeGmWrite(Pipe::MTE3, gm, count, burst, dstPitch, Ctx().atomicOp != 0, api);
    Count(Pipe::MTE3, count * burst);
}

void DmaLocalToLocal(const char *api, LocalRef dst, LocalRef src, uint32_t count, uint64_t burst, uint64_t srcPitch,
                     uint64_t dstPitch)
{
    if (count == 0 || burst == 0 || !Present(dst) || !Present(src)) return;
    const Buf bd = static_cast<Buf>(dst.buf), bs = static_cast<Buf>(src.buf);
    if (!(bs == Buf::UB && (bd == Buf::UB || bd == Buf::L1)) && !(bs == Buf::L1 && (bd == Buf::FB || bd == Buf::BT)))
        Fail(api, "copy %s -> %s is not a DataCopy path on Atlas A2 (UB->UB, UB->L1, L1->FB, L1->BT)", BufName(src.buf),
             BufName(dst.buf));
    CheckLocalSpan(api, "source", src, Span(count, burst, srcPitch));
    CheckLocalSpan(api, "destination", dst, Span(count, burst, dstPitch));
    const Pipe pipe = bd == Buf::UB ? Pipe::V : bd == Buf::L1 ? Pipe::MTE3 : bd == Buf::FB ? Pipe::FIXP : Pipe::MTE1;
    RaceRead(api, pipe, src.buf, src.p, Span(count, burst, srcPitch));
    RaceWrite(api, pipe, dst.buf, dst.p, Span(count, burst, dstPitch));
    auto *d = static_cast<uint8_t *>(dst.p);
    auto *s = static_cast<const uint8_t *>(src.p);
    for (uint32_t i = 0; i < count; ++i) std::memmove(d + i * dstPitch, s + i * srcPitch, burst);
    TimeLocalCopy(pipe, count * burst, api);
    Count(pipe, count * burst);
}

void BiasLoad(const char *api, LocalRef dst, DType dt, LocalRef src, DType st, uint32_t count, uint32_t blockLen,
              uint32_t srcGap, uint32_t dstGap)
{
    if (count == 0 || blockLen == 0 || !Present(dst)) return;
    if (static_cast<Buf>(src.buf) != Buf::L1 || static_cast<Buf>(dst.buf) != Buf::BT)
        Fail(api, "copy %s -> %s with a type conversion is only the L1 -> BT path", BufName(src.buf), BufName(dst.buf));
    if (dt != DType::F32 || (st != DType::F16 && st != DType::BF16))
        Fail(api, "%s -> %s: the converting L1 -> BT copy takes half or bfloat16_t to float", DTypeName(st),
             DTypeName(dt));
    const uint64_t burst = blockLen * 64ull, elems = burst / 2;
    const uint64_t srcPitch = burst + srcGap * 32ull, dstPitch = elems * 4 + dstGap * 64ull;
    CheckLocalSpan(api, "source", src, Span(count, burst, srcPitch));
    CheckLocalSpan(api, "destination", dst, Span(count, elems * 4, dstPitch));
    RaceRead(api, Pipe::MTE1, src.buf, src.p, Span(count, burst, srcPitch));
    RaceWrite(api, Pipe::MTE1, dst.buf, dst.p, Span(count, elems * 4, dstPitch));
    for (uint32_t i = 0; i < count; ++i)
        for (uint64_t e = 0; e < elems; ++e) {
            uint16_t h;
            std::memcpy(&h, static_cast<const uint8_t *>(src.p) + i * srcPitch + e * 2, 2);
            const float f = st == DType::F16 ? HalfBitsToFloat(h) : Bf16BitsToFloat(h);
            std::memcpy(static_cast<uint8_t *>(dst.p) + i * dstPitch + e * 4, &f, 4);
        }
    TimeLocalCopy(Pipe::MTE1, count * burst, api);
    Count(Pipe::MTE1, count * burst);
}

void Nd2Nz(const char *api, LocalRef dst, const void *src, bool srcIsGm, int es, const AscendC::Nd2NzParams &p)
{
    if (p.ndNum == 0 || p.nValue == 0 || p.dValue == 0 || !Present(dst)) return;
    if (static_cast<Buf>(dst.buf) != Buf::L1)
        Fail(api, "destination must be in L1 (A1/B1/C1), not %s", BufName(dst.buf));
    if (p.nValue > 16384) Fail(api, "nValue %u exceeds 16384", p.nValue);
    if (p.ndNum > 4095) Fail(api, "ndNum %u exceeds 4095", p.ndNum);
    const int c0 = 32 / es;
    const uint32_t chunks = (p.dValue + c0 - 1) / c0;
    // A stride is demanded only where it is used: srcDValue / dstNzNStride between rows
    // (nValue > 1), dstNzC0Stride between C0 chunks (dValue > C0). A single row may come from
    // anywhere (CATLASS copies rows 65536 or more elements apart one at a time, srcDValue 0).
    if (p.nValue > 1 && (p.srcDValue == 0 || p.dstNzNStride == 0))
        Fail(api, "srcDValue %u and dstNzNStride %u must be >= 1 when nValue %u > 1", p.srcDValue, p.dstNzNStride,
             p.nValue);
    if (chunks > 1 && p.dstNzC0Stride == 0)
        Fail(api, "dstNzC0Stride 0 must be >= 1 when dValue %u spans %u C0 chunks", p.dValue, chunks);
    const uint64_t srcSpan = ((p.ndNum - 1ull) * p.srcNdMatrixStride + (p.nValue - 1ull) * p.srcDValue + p.dValue) * es;
    if (srcIsGm) CheckGm(api, "source", src, srcSpan);
    const uint64_t dstSpan = (p.ndNum - 1ull) * p.dstNzMatrixStride * es + (chunks - 1ull) * p.dstNzC0Stride * 32 +
                             (p.nValue - 1ull) * p.dstNzNStride * 32 + 32;
    CheckLocalSpan(api, "destination", dst, dstSpan);
    if (!srcIsGm) RaceRead(api, Pipe::MTE3, static_cast<int>(Buf::UB), src, srcSpan);
    RaceWrite(api, srcIsGm ? Pipe::MTE2 : Pipe::MTE3, dst.buf, dst.p, dstSpan);
    if (srcIsGm && g_raceCheck)
        for (uint32_t i = 0; i < p.ndNum; ++i)
            RaceGm(api, Pipe::MTE2,
                   static_cast<const uint8_t *>(src) + static_cast<uint64_t>(i) * p.srcNdMatrixStride * es, p.nValue,
                   static_cast<uint64_t>(p.dValue) * es, static_cast<uint64_t>(p.srcDValue) * es, false);
    auto *d = static_cast<uint8_t *>(dst.p);
    auto *s = static_cast<const uint8_t *>(src);
    for (uint32_t i = 0; i < p.ndNum; ++i)
        for (uint32_t r = 0; r < p.nValue; ++r) {
            const uint8_t *row =
                s + (static_cast<uint64_t>(i) * p.srcNdMatrixStride + static_cast<uint64_t>(r) * p.srcDValue) * es;
            uint8_t *out = d + static_cast<uint64_t>(i) * p.dstNzMatrixStride * es +
                           static_cast<uint64_t>(r) * p.dstNzNStride * 32;
            for (uint32_t c = 0; c < chunks; ++c) {
                const uint32_t valid = std::min<uint32_t>(c0, p.dValue - c * c0);
                uint8_t *o = out + static_cast<uint64_t>(c) * p.dstNzC0Stride * 32;
                std::memcpy(o, row + static_cast<uint64_t>(c) * c0 * es, valid * es);
                if (valid < static_cast<uint32_t>(c0)) std::memset(o + valid * es, 0, (c0 - valid) * es);
            }
        }
    const uint64_t moved = static_cast<uint64_t>(p.ndNum) * p.nValue * p.dValue * es;
    if (srcIsGm)  // one DMA instruction: ndNum x nValue rows of dValue elements
        TimeGmRead2D(Pipe::MTE2, src, p.ndNum, p.nValue, static_cast<uint64_t>(p.srcNdMatrixStride) * es,
                     static_cast<uint64_t>(p.srcDValue) * es, static_cast<uint64_t>(p.dValue) * es, api);
    else
        TimeLocalCopy(Pipe::MTE3, moved, api);
    Count(srcIsGm ? Pipe::MTE2 : Pipe::MTE3, moved);
}

void PadToLocal(const char *api, LocalRef dst, const void *gm, int es, uint32_t count, uint64_t blockLen,
                uint64_t srcGap, uint64_t dstGapBlocks, bool isPad, uint32_t left, uint32_t right, uint64_t padBits)
{
    if (count == 0 || blockLen == 0 || !Present(dst)) return;
    if (static_cast<Buf>(dst.buf) != Buf::UB && static_cast<Buf>(dst.buf) != Buf::L1)
        Fail(api, "destination must be in UB or L1, not %s", BufName(dst.buf));
    if (count > 4095) Fail(api, "blockCount %u exceeds 4095", count);
    if (blockLen % es != 0)
        Fail(api, "blockLen %llu bytes is not a multiple of the element size %d", (unsigned long long)blockLen, es);
    if (blockLen > 2097151) Fail(api, "blockLen %llu exceeds 2097151 bytes", (unsigned long long)blockLen);
    if ((left + right) * static_cast<uint64_t>(es) > 64 || left * es > 32 || right * es > 32)
        Fail(api, "leftPadding %u / rightPadding %u elements exceed 32 bytes each", left, right);
    const uint64_t rowBytes = (left + right) * static_cast<uint64_t>(es) + blockLen;
    const uint64_t rowBlocks = (rowBytes + 31) / 32;
    const uint64_t dstPitch = (rowBlocks + dstGapBlocks) * 32;
    const uint64_t srcPitch = blockLen + srcGap;
    CheckGm(api, "source", gm, Span(count, blockLen, srcPitch));
    CheckLocalSpan(api, "destination", dst, Span(count, rowBlocks * 32, dstPitch));
    RaceWrite(api, Pipe::MTE2, dst.buf, dst.p, Span(count, rowBlocks * 32, dstPitch));
    RaceGm(api, Pipe::MTE2, gm, count, blockLen, srcPitch, false);
    CoreCtx &c = Ctx();
    auto *d = static_cast<uint8_t *>(dst.p);
    auto *s = static_cast<const uint8_t *>(gm);
    for (uint32_t i = 0; i < count; ++i) {
        uint8_t *row = d + i * dstPitch;
        const uint8_t *in = s + i * srcPitch;
        std::memcpy(row + left * es, in, blockLen);
        const uint64_t tail = rowBlocks * 32 - rowBytes;
        uint64_t fill = 0;
        bool doFill = true;
        if (isPad)
            fill = padBits;
        else if (c.padValueSet)
            fill = c.padValue;
        else if (left == 0 && right == 0)
            std::memcpy(&fill, in, es);  // documented: first element of the row
        else
            doFill = false;  // documented as undefined: left as is
        if (!doFill) continue;
        for (uint32_t k = 0; k < left; ++k) std::memcpy(row + k * es, &fill, es);
        uint8_t *after = row + left * es + blockLen;
        for (uint64_t k = 0; k < right + tail / es; ++k) std::memcpy(after + k * es, &fill, es);
    }
    TimeGmRead(Pipe::MTE2, gm, count, blockLen, srcPitch, api);
    Count(Pipe::MTE2, count * blockLen);
}

void PadToGm(const char *api, void *gm, LocalRef src, DType t, uint32_t count, uint64_t blockLen, uint64_t srcGapBlocks,
             uint64_t dstGap)
{
    (void)t;
    if (count == 0 || blockLen == 0 || !Present(src)) return;
    if (count > 4095) Fail(api, "blockCount %u exceeds 4095", count);
    if (blockLen > 2097151) Fail(api, "blockLen %llu exceeds 2097151 bytes", (unsigned long long)blockLen);
    const uint64_t rowBlocks = (blockLen + 31) / 32;
    const uint64_t srcPitch = (rowBlocks + srcGapBlocks) * 32;
    const uint64_t dstPitch = blockLen + dstGap;
    CheckLocalSpan(api, "source", src, Span(count, blockLen, srcPitch));
    CheckGm(api, "destination", gm, Span(count, blockLen, dstPitch));
    RaceRead(api, Pipe::MTE3, src.buf, src.p, Span(count, blockLen, srcPitch));
    RaceGm(api, Pipe::MTE3, gm, count, blockLen, dstPitch, true);
    auto *d = static_cast<uint8_t *>(gm);
    auto *s = static_cast<const uint8_t *>(src.p);
    for (uint32_t i = 0; i < count; ++i) GmStore(api, d + i * dstPitch, s + i * srcPitch, blockLen);
    TimeGmWrite(Pipe::MTE3, gm, count, blockLen, dstPitch, Ctx().atomicOp != 0, api);
    Count(Pipe::MTE3, count * blockLen);
}

const char *DTypeName(DType t)
{
    static const char *n[] = {"half",    "bfloat16_t", "float",   "int8_t",   "uint8_t", "int16_t", "uint16_t",
                              "int32_t", "uint32_t",   "int64_t", "uint64_t", "int4b_t", "unknown"};
    return n[static_cast<int>(t)];
}
int DTypeSize(DType t)
{
    static const int s[] = {2, 2, 4, 1, 1, 2, 2, 4, 4, 8, 8, 1, 0};
    return s[static_cast<int>(t)];
}

}  // namespace emu
