// Data movement (asc-devkit `include/basic_api/kernel_struct_data_copy.h`, `kernel_operator_data_copy_intf.h`): DataCopy in its count, DataCopyParams
// and Nd2NzParams forms, DataCopyPad, Copy, and the atomic-write mode of GM stores.
#pragma once
#include "emu/dtype.h"
#include "kernel/kernel_tpipe.h"

namespace AscendC {

struct DataCopyParams {
    DataCopyParams() {}
    DataCopyParams(const uint16_t count, const uint16_t len, const uint16_t srcStrideIn, const uint16_t dstStrideIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn)
    {
    }
    uint16_t blockCount = 1;
    uint16_t blockLen = 0;
    union {
        uint16_t srcGap = 0;
        uint16_t srcStride;
    };
    union {
        uint16_t dstGap = 0;
        uint16_t dstStride;
    };
};

struct DataCopyExtParams {
    DataCopyExtParams() {}
    DataCopyExtParams(const uint16_t count, const uint32_t len, const uint32_t srcStrideIn, const uint32_t dstStrideIn,
                      const uint32_t rsvIn)
        : blockCount(count), blockLen(len), srcStride(srcStrideIn), dstStride(dstStrideIn), rsv(rsvIn)
    {
    }
    uint16_t blockCount = 1;
    uint32_t blockLen = 0;
    uint32_t srcStride = 0;
    uint32_t dstStride = 0;
    uint32_t rsv = 0;
};

template <typename T> struct DataCopyPadExtParams {
    DataCopyPadExtParams() {}
    DataCopyPadExtParams(const bool isPadIn, const uint8_t leftPadIn, const uint8_t rightPadIn, T padValue)
        : isPad(isPadIn), leftPadding(leftPadIn), rightPadding(rightPadIn), paddingValue(padValue)
    {
    }
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    T paddingValue = 0;
};

struct DataCopyPadParams {
    DataCopyPadParams() {}
    DataCopyPadParams(const bool isPadValue, const uint8_t leftPadValue, const uint8_t rightPadValue,
                      const uint64_t padValue)
        : isPad(isPadValue), leftPadding(leftPadValue), rightPadding(rightPadValue), paddingValue(padValue)
    {
    }
    bool isPad = false;
    uint8_t leftPadding = 0;
    uint8_t rightPadding = 0;
    uint64_t paddingValue = 0;
};

struct Nd2NzParams {
    Nd2NzParams() {}
    Nd2NzParams(const uint16_t ndNumIn, const uint16_t nValueIn, const uint16_t dValueIn,
                const uint16_t srcNdMatrixStrideIn, const uint16_t srcDValueIn, const uint16_t dstNzC0StrideIn,
                const uint16_t dstNzNStrideIn, const uint16_t dstNzMatrixStrideIn)
        : ndNum(ndNumIn),
          nValue(nValueIn),
          dValue(dValueIn),
          srcNdMatrixStride(srcNdMatrixStrideIn),
          srcDValue(srcDValueIn),
          dstNzC0Stride(dstNzC0StrideIn),
          dstNzNStride(dstNzNStrideIn),
          dstNzMatrixStride(dstNzMatrixStrideIn)
    {
    }
    uint16_t ndNum = 1;
    uint16_t nValue = 0;
    uint16_t dValue = 0;
    uint16_t srcNdMatrixStride = 0;
    uint16_t srcDValue = 0;
    uint16_t dstNzC0Stride = 0;
    uint16_t dstNzNStride = 0;
    uint16_t dstNzMatrixStride = 0;
};

struct CopyRepeatParams {
    CopyRepeatParams() {}
    CopyRepeatParams(const uint16_t dstStrideIn, const uint16_t srcStrideIn, uint16_t dstRepeatSizeIn,
                     uint16_t srcRepeatSizeIn)
        : dstStride(dstStrideIn), srcStride(srcStrideIn), dstRepeatSize(dstRepeatSizeIn), srcRepeatSize(srcRepeatSizeIn)
    {
    }
    uint16_t dstStride = 0;
    uint16_t srcStride = 0;
    uint16_t dstRepeatSize = 8;
    uint16_t srcRepeatSize = 8;
};

}  // namespace AscendC

namespace emu {
template <class T> LocalRef Ref(const AscendC::LocalTensor<T> &t)
{
    return LocalRef{t.EmuAddr(), t.EmuBytes(), static_cast<int>(t.EmuBuf())};
}
// Strided bursts: `count` bursts of `burstBytes`, pitches in bytes (start to start).
void DmaToLocal(const char *api, LocalRef dst, const void *gm, uint32_t count, uint64_t burstBytes, uint64_t srcPitch,
                uint64_t dstPitch);
void DmaToGm(const char *api, void *gm, LocalRef src, uint32_t count, uint64_t burstBytes, uint64_t srcPitch,
             uint64_t dstPitch, DType t);
void DmaLocalToLocal(const char *api, LocalRef dst, LocalRef src, uint32_t count, uint64_t burstBytes,
                     uint64_t srcPitch, uint64_t dstPitch);
void Nd2Nz(const char *api, LocalRef dst, const void *src, bool srcIsGm, int elemSize, const AscendC::Nd2NzParams &p);
void PadToLocal(const char *api, LocalRef dst, const void *gm, int elemSize, uint32_t count, uint64_t blockLen,
                uint64_t srcGapBytes, uint64_t dstGapBlocks, bool isPad, uint32_t left, uint32_t right,
                uint64_t padBits);
void PadToGm(const char *api, void *gm, LocalRef src, DType t, uint32_t count, uint64_t blockLen, uint64_t srcGapBlocks,
             uint64_t dstGapBytes);
void SetAtomic(int op, DType t);
void BiasLoad(const char *api, LocalRef dst, DType dt, LocalRef src, DType st, uint32_t count, uint32_t blockLen,
              uint32_t srcGap, uint32_t dstGap);
}  // namespace emu

namespace AscendC {

template <typename T> void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const DataCopyParams &p)
{
    emu::DmaToLocal("DataCopy(GM->local)", emu::Ref(dst), src.GetPhyAddr(), p.blockCount, p.blockLen * 32ull,
                    (p.blockLen + p.srcStride) * 32ull, (p.blockLen + p.dstStride) * 32ull);
}
template <typename T> void DataCopy(const GlobalTensor<T> &dst, const LocalTensor<T> &src, const DataCopyParams &p)
{
    emu::DmaToGm("DataCopy(local->GM)", dst.GetPhyAddr(0), emu::Ref(src), p.blockCount, p.blockLen * 32ull,
                 (p.blockLen + p.srcStride) * 32ull, (p.blockLen + p.dstStride) * 32ull, emu::DT<T>);
}
// UB -> UB / L1 in 32-byte blocks; L1 -> Fixpipe buffer in 128-byte blocks (gaps head to head,
// the source's in 32 bytes); L1 -> bias table in 64-byte blocks.
template <typename T> void DataCopy(const LocalTensor<T> &dst, const LocalTensor<T> &src, const DataCopyParams &p)
{
    const emu::Buf d = dst.EmuBuf();
    if (d == emu::Buf::FB)
        emu::DmaLocalToLocal("DataCopy(L1->FB)", emu::Ref(dst), emu::Ref(src), p.blockCount, p.blockLen * 128ull,
                             p.srcStride * 32ull, p.dstStride * 128ull);
    else if (d == emu::Buf::BT)
        emu::DmaLocalToLocal("DataCopy(L1->BT)", emu::Ref(dst), emu::Ref(src), p.blockCount, p.blockLen * 64ull,
                             p.blockLen * 64ull + p.srcStride * 32ull, (p.blockLen + p.dstStride) * 64ull);
    else
        emu::DmaLocalToLocal("DataCopy(local->local)", emu::Ref(dst), emu::Ref(src), p.blockCount, p.blockLen * 32ull,
                             (p.blockLen + p.srcStride) * 32ull, (p.blockLen + p.dstStride) * 32ull);
}
// L1 -> bias table with conversion (half / bfloat16_t -> float): blockLen in 64-byte blocks of
// the source, gaps in 32 bytes (source) and 64 bytes (destination).
template <typename T, typename U>
void DataCopy(const LocalTensor<T> &dst, const LocalTensor<U> &src, const DataCopyParams &p)
{
    emu::BiasLoad("DataCopy(L1->BT)", emu::Ref(dst), emu::DT<T>, emu::Ref(src), emu::DT<U>, p.blockCount, p.blockLen,
                  p.srcStride, p.dstStride);
}
template <typename T> void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const uint32_t count)
{
    const uint64_t bytes = static_cast<uint64_t>(count) * SizeOfBits<T>::value / 8;  // int4b_t: 2 per byte
    if (bytes % 32 != 0)
        emu::Fail("DataCopy(GM->local)",
                  "count %u elements = %llu bytes is not a multiple of 32 bytes (use DataCopyPad)", count,
                  (unsigned long long)bytes);
    emu::DmaToLocal("DataCopy(GM->local)", emu::Ref(dst), src.GetPhyAddr(), 1, bytes, bytes, bytes);
}
template <typename T> void DataCopy(const GlobalTensor<T> &dst, const LocalTensor<T> &src, const uint32_t count)
{
    const uint64_t bytes = static_cast<uint64_t>(count) * SizeOfBits<T>::value / 8;  // int4b_t: 2 per byte
    if (bytes % 32 != 0)
        emu::Fail("DataCopy(local->GM)",
                  "count %u elements = %llu bytes is not a multiple of 32 bytes (use DataCopyPad)", count,
                  (unsigned long long)bytes);
    emu::DmaToGm("DataCopy(local->GM)", dst.GetPhyAddr(0), emu::Ref(src), 1, bytes, bytes, bytes, emu::DT<T>);
}
template <typename T> void DataCopy(const LocalTensor<T> &dst, const LocalTensor<T> &src, const uint32_t count)
{
    const uint64_t bytes = static_cast<uint64_t>(count) * SizeOfBits<T>::value / 8;  // int4b_t: 2 per byte
    if (bytes % 32 != 0)
        emu::Fail("DataCopy(local->local)", "count %u elements = %llu bytes is not a multiple of 32 bytes", count,
                  (unsigned long long)bytes);
    emu::DmaLocalToLocal("DataCopy(local->local)", emu::Ref(dst), emu::Ref(src), 1, bytes, bytes, bytes);
}
template <typename T> void DataCopy(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const Nd2NzParams &p)
{
    emu::Nd2Nz("DataCopy(GM->L1, Nd2NzParams)", emu::Ref(dst), src.GetPhyAddr(), true, sizeof(T), p);
}
template <typename T> void DataCopy(const LocalTensor<T> &dst, const LocalTensor<T> &src, const Nd2NzParams &p)
{
    emu::Nd2Nz("DataCopy(UB->L1, Nd2NzParams)", emu::Ref(dst), src.EmuAddr(), false, sizeof(T), p);
}

template <typename T>
void DataCopyPad(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const DataCopyExtParams &p,
                 const DataCopyPadExtParams<T> &pad)
{
    uint64_t bits = 0;
    std::memcpy(&bits, &pad.paddingValue, sizeof(T));
    emu::PadToLocal("DataCopyPad(GM->local)", emu::Ref(dst), src.GetPhyAddr(), sizeof(T), p.blockCount, p.blockLen,
                    p.srcStride, p.dstStride, pad.isPad, pad.leftPadding, pad.rightPadding, bits);
}
template <typename T>
void DataCopyPad(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const DataCopyParams &p,
                 const DataCopyPadParams &pad)
{
    emu::PadToLocal("DataCopyPad(GM->local)", emu::Ref(dst), src.GetPhyAddr(), sizeof(T), p.blockCount, p.blockLen,
                    p.srcStride, p.dstStride, pad.isPad, pad.leftPadding, pad.rightPadding, pad.paddingValue);
}
template <typename T>
void DataCopyPad(const GlobalTensor<T> &dst, const LocalTensor<T> &src, const DataCopyExtParams &p)
{
    emu::PadToGm("DataCopyPad(local->GM)", dst.GetPhyAddr(0), emu::Ref(src), emu::DT<T>, p.blockCount, p.blockLen,
                 p.srcStride, p.dstStride);
}
template <typename T> void DataCopyPad(const GlobalTensor<T> &dst, const LocalTensor<T> &src, const DataCopyParams &p)
{
    emu::PadToGm("DataCopyPad(local->GM)", dst.GetPhyAddr(0), emu::Ref(src), emu::DT<T>, p.blockCount, p.blockLen,
                 p.srcStride, p.dstStride);
}
template <typename T, TPosition pos = TPosition::MAX> void SetPadValue(T paddingValue)
{
    uint64_t bits = 0;
    std::memcpy(&bits, &paddingValue, sizeof(T));
    emu::Ctx().padValue = bits;
    emu::Ctx().padValueSet = true;
}

template <typename T> void SetAtomicAdd() { emu::SetAtomic(1, emu::DT<T>); }
template <typename T> void SetAtomicMax() { emu::SetAtomic(2, emu::DT<T>); }
template <typename T> void SetAtomicMin() { emu::SetAtomic(3, emu::DT<T>); }
template <typename T> void SetAtomicType() { emu::Ctx().atomicDtype = static_cast<int>(emu::DT<T>); }
inline void SetAtomicNone() { emu::SetAtomic(0, emu::DType::UNKNOWN); }
inline void DisableDmaAtomic() { emu::SetAtomic(0, emu::DType::UNKNOWN); }

}  // namespace AscendC
