// Cube path (asc-devkit `include/basic_api/kernel_struct_mm.h`, `kernel_operator_mm_intf.h`, `kernel_operator_fixpipe_intf.h`): LoadData 2D (L1/GM -> L0A/L0B, transpose),
// Mmad on the Zz/Zn/Nz fractal layouts, Fixpipe L0C -> GM (NZ -> ND, fp32 -> fp16/bf16).
#pragma once
#include "kernel/kernel_data_copy.h"

enum class QuantMode_t : uint8_t { NoQuant = 0, F322F16, F322BF16, DEQF16, VDEQF16, QF322B8_PRE, VQF322B8_PRE, REQ8, VREQ8 };

namespace AscendC {

struct LoadData2DParams {
    LoadData2DParams() {}
    LoadData2DParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn, const uint16_t srcStrideIn, const uint8_t sidIn,
                     const uint16_t dstGapIn, const bool ifTransposeIn, const uint8_t addrModeIn)
        : startIndex(startIndexIn), dstGap(dstGapIn), srcStride(srcStrideIn), ifTranspose(ifTransposeIn),
          repeatTimes(repeatTimesIn), sid(sidIn), addrMode(addrModeIn) {}
    uint16_t startIndex = 0;
    uint16_t dstGap = 0;
    uint16_t srcStride = 0;
    bool ifTranspose = false;
    uint8_t repeatTimes = 0;
    uint8_t sid = 0;
    uint8_t addrMode = 0;
};

// LoadDataWithTranspose (kernel_struct_mm.h): one repeat transposes a square of 512-byte
// fractals (16x16 for 16-bit elements; for 32-bit ones two consecutive 16x8 fractals, the left
// and right halves of a 16x16 square, come out as the two 16x8 halves of its transpose,
// dstFracGap fractals apart).
struct LoadData2dTransposeParams {
    LoadData2dTransposeParams() {}
    LoadData2dTransposeParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn, const uint16_t srcStrideIn,
                              const uint16_t dstGapIn, const uint16_t dstfracGapIn, const uint8_t addrModeIn)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), dstGap(dstGapIn),
          dstFracGap(dstfracGapIn), addrMode(addrModeIn) {}
    LoadData2dTransposeParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn, const uint16_t srcStrideIn,
                              const uint16_t dstGapIn, const uint16_t dstfracGapIn)
        : startIndex(startIndexIn), repeatTimes(repeatTimesIn), srcStride(srcStrideIn), dstGap(dstGapIn),
          dstFracGap(dstfracGapIn) {}
    uint16_t startIndex = 0;
    uint8_t repeatTimes = 0;
    uint16_t srcStride = 0;
    uint16_t dstGap = 0;
    uint16_t dstFracGap = 0;
    uint8_t addrMode = 0;
};

struct MmadParams {
    MmadParams() {}
    MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const bool isBiasIn, const int32_t fmOffsetIn,
               const bool enSsparseIn, const bool enWinogradAIn, const bool enWinogradBIn)
        : m(mIn), n(nIn), k(kIn), isBias(isBiasIn), fmOffset(fmOffsetIn), enSsparse(enSsparseIn), enWinogradA(enWinogradAIn),
          enWinogradB(enWinogradBIn) {}
    MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const uint8_t unitFlagIn, const bool cmatrixSourceIn,
               const bool cmatrixInitValIn)
        : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn), cmatrixInitVal(cmatrixInitValIn) {}
    uint16_t m = 0;
    uint16_t n = 0;
    uint16_t k = 0;
    bool isBias = false;
    int32_t fmOffset = 0;
    bool enSsparse = false;
    bool enWinogradA = false;
    bool enWinogradB = false;
    uint8_t unitFlag = 0;
    bool kDirectionAlign = false;
    bool cmatrixSource = false;
    bool cmatrixInitVal = true;
};

enum class CO2Layout : uint8_t { NZ = 0, ROW_MAJOR, COLUMN_MAJOR };
struct FixpipeConfig {
    CO2Layout format;
};
constexpr FixpipeConfig CFG_NZ = {CO2Layout::NZ};
constexpr FixpipeConfig CFG_ROW_MAJOR = {CO2Layout::ROW_MAJOR};

struct FixpipeParamsV220 {
    FixpipeParamsV220() {}
    FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn, const uint32_t dstStrideIn,
                      const bool reluEnIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), reluEn(reluEnIn) {}
    FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn, const uint32_t dstStrideIn,
                      const bool reluEnIn, const QuantMode_t quantPreIn, const int64_t deqScalarIn, const uint16_t ndNumIn,
                      const uint16_t srcNdStrideIn, const uint16_t dstNdStrideIn, const uint8_t unitFlagIn,
                      const bool isChannelSplitIn = false)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), quantPre(quantPreIn),
          deqScalar(static_cast<uint64_t>(deqScalarIn)), ndNum(ndNumIn), srcNdStride(srcNdStrideIn), dstNdStride(dstNdStrideIn),
          reluEn(reluEnIn), unitFlag(unitFlagIn), isChannelSplit(isChannelSplitIn) {}
    uint16_t nSize = 0;
    uint16_t mSize = 0;
    uint16_t srcStride = 0;
    uint32_t dstStride = 0;
    QuantMode_t quantPre = QuantMode_t::NoQuant;
    uint64_t deqScalar;
    uint16_t ndNum = 1;
    uint16_t srcNdStride = 0;
    uint16_t dstNdStride = 0;
    bool reluEn = false;
    uint8_t unitFlag = 0;
    bool isChannelSplit = false;
};
using FixpipeParams = FixpipeParamsV220;

}  // namespace AscendC

namespace emu {
void LoadData2D(const char *api, LocalRef dst, const void *src, int srcBuf, uint64_t srcBytes, int elemBytes,
                const AscendC::LoadData2DParams &p);
void LoadDataTranspose(const char *api, LocalRef dst, const void *src, int srcBuf, uint64_t srcBytes, int elemBytes,
                       const AscendC::LoadData2dTransposeParams &p);
void Mmad(LocalRef c, DType ct, LocalRef a, DType at, LocalRef b, DType bt, const AscendC::MmadParams &p);
void Fixpipe(const char *api, void *dst, int dstBuf, uint64_t dstBytes, DType dt, LocalRef src, DType st, int layout,
             const AscendC::FixpipeParamsV220 &p);
}  // namespace emu

namespace AscendC {

template <typename T>
void LoadData(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LoadData2DParams &p) {
    emu::LoadData2D("LoadData(2D)", emu::Ref(dst), src.GetPhyAddr(), static_cast<int>(src.EmuBuf()), src.EmuBytes(), sizeof(T), p);
}
template <typename T>
void LoadData(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const LoadData2DParams &p) {
    emu::LoadData2D("LoadData(2D, GM)", emu::Ref(dst), src.GetPhyAddr(), static_cast<int>(emu::Buf::GM), 0, sizeof(T), p);
}

template <typename T>
void LoadDataWithTranspose(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LoadData2dTransposeParams &p) {
    emu::LoadDataTranspose("LoadDataWithTranspose", emu::Ref(dst), src.GetPhyAddr(), static_cast<int>(src.EmuBuf()),
                           src.EmuBytes(), sizeof(T), p);
}

template <typename T, typename U, typename S>
void Mmad(const LocalTensor<T> &dst, const LocalTensor<U> &fm, const LocalTensor<S> &filter, const MmadParams &p) {
    emu::Mmad(emu::Ref(dst), emu::DT<T>, emu::Ref(fm), emu::DT<U>, emu::Ref(filter), emu::DT<S>, p);
}

template <typename T, typename U, const FixpipeConfig &config = CFG_ROW_MAJOR>
void Fixpipe(const GlobalTensor<T> &dst, const LocalTensor<U> &src, const FixpipeParamsV220 &p) {
    emu::Fixpipe("Fixpipe(L0C->GM)", dst.GetPhyAddr(0), static_cast<int>(emu::Buf::GM), 0, emu::DT<T>, emu::Ref(src), emu::DT<U>,
                 static_cast<int>(config.format), p);
}
template <typename T, typename U, const FixpipeConfig &config = CFG_ROW_MAJOR>
void Fixpipe(const LocalTensor<T> &dst, const LocalTensor<U> &src, const FixpipeParamsV220 &p) {
    emu::Fixpipe("Fixpipe(L0C->L1)", dst.GetPhyAddr(), static_cast<int>(dst.EmuBuf()), dst.EmuBytes(), emu::DT<T>, emu::Ref(src),
                 emu::DT<U>, static_cast<int>(config.format), p);
}

inline void SetHF32Mode(bool) {}

}  // namespace AscendC
