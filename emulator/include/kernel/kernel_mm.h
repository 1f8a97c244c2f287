// Cube path (asc-devkit `include/basic_api/kernel_struct_mm.h`, `kernel_operator_mm_intf.h`, `kernel_operator_fixpipe_intf.h`): LoadData 2D (L1/GM -> L0A/L0B, transpose),
// Mmad on the Zz/Zn/Nz fractal layouts, Fixpipe L0C -> GM (NZ -> ND, fp32 -> fp16/bf16).
#pragma once
#include "kernel/kernel_data_copy.h"

enum class QuantMode_t : uint8_t {
    NoQuant = 0,
    F322F16,
    F322BF16,
    DEQF16,
    VDEQF16,
    QF322B8_PRE,
    VQF322B8_PRE,
    REQ8,
    VREQ8
};

namespace AscendC {

struct LoadData2DParams {
    LoadData2DParams() {}
    LoadData2DParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn, const uint16_t srcStrideIn,
                     const uint8_t sidIn, const uint16_t dstGapIn, const bool ifTransposeIn, const uint8_t addrModeIn)
        : startIndex(startIndexIn),
          dstGap(dstGapIn),
          srcStride(srcStrideIn),
          ifTranspose(ifTransposeIn),
          repeatTimes(repeatTimesIn),
          sid(sidIn),
          addrMode(addrModeIn)
    {
    }
    uint16_t startIndex = 0;
    uint16_t dstGap = 0;
    uint16_t srcStride = 0;
    bool ifTranspose = false;
    uint8_t repeatTimes = 0;
    uint8_t sid = 0;
    uint8_t addrMode = 0;
};

using LoadData2dParams = LoadData2DParams;

// LoadData 3D v2 (kernel_struct_mm.h): image-to-column of an NC1HWC0 feature map in L1, a
// window [mStartPt, +mExtension) x [kStartPt, +kExtension) of the expanded matrix written to
// L0A (Zz) or, transposed, to L0B (Zn). padList is {left, right, top, bottom}.
template <typename T> struct LoadData3DParamsV2 {
    LoadData3DParamsV2() {}
    LoadData3DParamsV2(const uint8_t padListIn[PAD_SIZE], const uint16_t l1HIn, const uint16_t l1WIn,
                       const uint16_t channelSizeIn, const uint16_t kExtensionIn, const uint16_t mExtensionIn,
                       const uint16_t kStartPtIn, const uint16_t mStartPtIn, const uint8_t strideWIn,
                       const uint8_t strideHIn, const uint8_t filterWIn, const uint8_t filterHIn,
                       const uint8_t dilationFilterWIn, const uint8_t dilationFilterHIn, const bool enTransposeIn,
                       const bool enSmallKIn, const T padValueIn)
        : l1H(l1HIn),
          l1W(l1WIn),
          channelSize(channelSizeIn),
          kExtension(kExtensionIn),
          mExtension(mExtensionIn),
          kStartPt(kStartPtIn),
          mStartPt(mStartPtIn),
          strideW(strideWIn),
          strideH(strideHIn),
          filterW(filterWIn),
          filterH(filterHIn),
          dilationFilterW(dilationFilterWIn),
          dilationFilterH(dilationFilterHIn),
          enTranspose(enTransposeIn),
          enSmallK(enSmallKIn),
          padValue(padValueIn)
    {
        for (int i = 0; i < PAD_SIZE; ++i) padList[i] = padListIn[i];
    }
    LoadData3DParamsV2(const uint8_t padListIn[PAD_SIZE], const uint16_t l1HIn, const uint16_t l1WIn,
                       const uint16_t channelSizeIn, const uint16_t kExtensionIn, const uint16_t mExtensionIn,
                       const uint16_t kStartPtIn, const uint16_t mStartPtIn, const uint8_t strideWIn,
                       const uint8_t strideHIn, const uint8_t filterWIn, const uint8_t filterHIn,
                       const uint8_t dilationFilterWIn, const uint8_t dilationFilterHIn, const bool enTransposeIn,
                       const bool enSmallKIn, const T padValueIn, const bool filterSizeWIn, const bool filterSizeHIn,
                       const bool fMatrixCtrlIn)
        : LoadData3DParamsV2(padListIn, l1HIn, l1WIn, channelSizeIn, kExtensionIn, mExtensionIn, kStartPtIn, mStartPtIn,
                             strideWIn, strideHIn, filterWIn, filterHIn, dilationFilterWIn, dilationFilterHIn,
                             enTransposeIn, enSmallKIn, padValueIn)
    {
        filterSizeW = filterSizeWIn;
        filterSizeH = filterSizeHIn;
        fMatrixCtrl = fMatrixCtrlIn;
    }
    uint8_t padList[PAD_SIZE] = {0};
    uint16_t l1H = 0;
    uint16_t l1W = 0;
    uint16_t channelSize = 0;
    uint16_t kExtension = 0;
    uint16_t mExtension = 0;
    uint16_t kStartPt = 0;
    uint16_t mStartPt = 0;
    uint8_t strideW = 1;
    uint8_t strideH = 1;
    uint8_t filterW = 1;
    uint8_t filterH = 1;
    uint8_t dilationFilterW = 1;
    uint8_t dilationFilterH = 1;
    bool enTranspose = false;
    bool enSmallK = false;
    T padValue = 0;
    bool filterSizeW = false;
    bool filterSizeH = false;
    bool fMatrixCtrl = false;
};

// The same with the window and the filter packed into two words (extConfig: mStartPt << 48 |
// kStartPt << 32 | mExtension << 16 | kExtension; filterConfig: dilationH << 40 | dilationW << 32
// | filterH << 24 | filterW << 16 | strideH << 8 | strideW); the feature map comes from SetFmatrix.
struct LoadData3DParamsV2Pro {
    LoadData3DParamsV2Pro() {}
    LoadData3DParamsV2Pro(const uint16_t channelSizeIn, const bool enTransposeIn, const bool enSmallKIn,
                          const bool filterSizeWIn, const bool filterSizeHIn, const bool fMatrixCtrlIn,
                          const uint64_t extConfigIn, const uint64_t filterConfigIn)
        : channelSize(channelSizeIn),
          enTranspose(enTransposeIn),
          enSmallK(enSmallKIn),
          filterSizeW(filterSizeWIn),
          filterSizeH(filterSizeHIn),
          fMatrixCtrl(fMatrixCtrlIn),
          extConfig(extConfigIn),
          filterConfig(filterConfigIn)
    {
    }
    uint16_t channelSize = 0;
    bool enTranspose = false;
    bool enSmallK = false;
    bool filterSizeW = false;
    bool filterSizeH = false;
    bool fMatrixCtrl = false;
    uint64_t extConfig = 0;
    uint64_t filterConfig = 0X10101010101;
};

// Fill / InitConstValue: repeatTimes x blockNum blocks (32 B in L1, 512 B in L0A/L0B), dstGap
// blocks between repeats.
template <typename T> struct InitConstValueParams {
    InitConstValueParams() {}
    InitConstValueParams(const uint16_t repeatTimesIn, const uint16_t blockNumIn, const uint16_t dstGapIn,
                         const T initValueIn)
        : repeatTimes(repeatTimesIn), blockNum(blockNumIn), dstGap(dstGapIn), initValue(initValueIn)
    {
    }
    InitConstValueParams(const uint16_t repeatTimesIn, const T initValueIn)
        : repeatTimes(repeatTimesIn), initValue(initValueIn)
    {
    }
    uint16_t repeatTimes = 0;
    uint16_t blockNum = 0;
    uint16_t dstGap = 0;
    T initValue = 0;
};

// Whether LoadData 3D sets the feature map / pad value from its parameters (true) or uses the
// ones of SetFmatrix / SetLoadDataPaddingValue (false).
struct IsResetLoad3dConfig {
    bool isSetFMatrix = true;
    bool isSetPadding = true;
};
constexpr IsResetLoad3dConfig IS_RESER_LOAD3D_DEFAULT_CONFIG = {true, true};
enum class FmatrixMode : uint8_t { FMATRIX_LEFT = 0, FMATRIX_RIGHT = 1 };

// LoadDataWithTranspose (kernel_struct_mm.h): one repeat transposes a square of 512-byte
// fractals (16x16 for 16-bit elements; for 32-bit ones two consecutive 16x8 fractals, the left
// and right halves of a 16x16 square, come out as the two 16x8 halves of its transpose,
// dstFracGap fractals apart).
struct LoadData2dTransposeParams {
    LoadData2dTransposeParams() {}
    LoadData2dTransposeParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn, const uint16_t srcStrideIn,
                              const uint16_t dstGapIn, const uint16_t dstfracGapIn, const uint8_t addrModeIn)
        : startIndex(startIndexIn),
          repeatTimes(repeatTimesIn),
          srcStride(srcStrideIn),
          dstGap(dstGapIn),
          dstFracGap(dstfracGapIn),
          addrMode(addrModeIn)
    {
    }
    LoadData2dTransposeParams(const uint16_t startIndexIn, const uint8_t repeatTimesIn, const uint16_t srcStrideIn,
                              const uint16_t dstGapIn, const uint16_t dstfracGapIn)
        : startIndex(startIndexIn),
          repeatTimes(repeatTimesIn),
          srcStride(srcStrideIn),
          dstGap(dstGapIn),
          dstFracGap(dstfracGapIn)
    {
    }
    uint16_t startIndex = 0;
    uint8_t repeatTimes = 0;
    uint16_t srcStride = 0;
    uint16_t dstGap = 0;
    uint16_t dstFracGap = 0;
    uint8_t addrMode = 0;
};

struct MmadParams {
    MmadParams() {}
    MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const bool isBiasIn,
               const int32_t fmOffsetIn, const bool enSsparseIn, const bool enWinogradAIn, const bool enWinogradBIn)
        : m(mIn),
          n(nIn),
          k(kIn),
          isBias(isBiasIn),
          fmOffset(fmOffsetIn),
          enSsparse(enSsparseIn),
          enWinogradA(enWinogradAIn),
          enWinogradB(enWinogradBIn)
    {
    }
    MmadParams(const uint16_t mIn, const uint16_t nIn, const uint16_t kIn, const uint8_t unitFlagIn,
               const bool cmatrixSourceIn, const bool cmatrixInitValIn)
        : m(mIn), n(nIn), k(kIn), unitFlag(unitFlagIn), cmatrixSource(cmatrixSourceIn), cmatrixInitVal(cmatrixInitValIn)
    {
    }
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
    FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                      const uint32_t dstStrideIn, const bool reluEnIn)
        : nSize(nSizeIn), mSize(mSizeIn), srcStride(srcStrideIn), dstStride(dstStrideIn), reluEn(reluEnIn)
    {
    }
    FixpipeParamsV220(const uint16_t nSizeIn, const uint16_t mSizeIn, const uint16_t srcStrideIn,
                      const uint32_t dstStrideIn, const bool reluEnIn, const QuantMode_t quantPreIn,
                      const int64_t deqScalarIn, const uint16_t ndNumIn, const uint16_t srcNdStrideIn,
                      const uint16_t dstNdStrideIn, const uint8_t unitFlagIn, const bool isChannelSplitIn = false)
        : nSize(nSizeIn),
          mSize(mSizeIn),
          srcStride(srcStrideIn),
          dstStride(dstStrideIn),
          quantPre(quantPreIn),
          deqScalar(static_cast<uint64_t>(deqScalarIn)),
          ndNum(ndNumIn),
          srcNdStride(srcNdStrideIn),
          dstNdStride(dstNdStrideIn),
          reluEn(reluEnIn),
          unitFlag(unitFlagIn),
          isChannelSplit(isChannelSplitIn)
    {
    }
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
// The LoadData 3D v2 window, in the units of LoadData3DParamsV2 (padValue as bits).
struct Load3dGeom {
    uint16_t l1H, l1W;
    uint8_t pad[4];
    uint32_t channelSize, kExtension, mExtension, kStartPt, mStartPt;
    uint32_t strideW, strideH, filterW, filterH, dilationW, dilationH;
    bool transpose;
    uint64_t padBits;
};
void LoadData3D(const char *api, LocalRef dst, LocalRef src, int elemBytes, const Load3dGeom &g);
void LoadData2D(const char *api, LocalRef dst, const void *src, int srcBuf, uint64_t srcBytes, int elemBytes,
                const AscendC::LoadData2DParams &p);
void LoadDataTranspose(const char *api, LocalRef dst, const void *src, int srcBuf, uint64_t srcBytes, int elemBits,
                       const AscendC::LoadData2dTransposeParams &p);
// `bias` (a float vector in the bias table, or null): C starts from bias[column] instead of 0 or L0C.
// `sparse`: MmadWithSparse, b is the 4:2-densified filter whose indices LoadDataWithSparse loaded.
void Mmad(LocalRef c, DType ct, LocalRef a, DType at, LocalRef b, DType bt, const AscendC::MmadParams &p,
          const LocalRef *bias = nullptr, bool sparse = false);
// LoadData 2D of the densified filter (L1 -> L0B, 512-byte fractals) and, beside each fractal,
// its 128 bytes of 2-bit indices from `idx` (one index byte per 4 filter bytes).
void LoadDataSparse(const char *api, LocalRef dst, LocalRef src, LocalRef idx, const AscendC::LoadData2DParams &p);
void Fill(const char *api, LocalRef dst, int elemBytes, uint64_t valueBits, uint32_t repeat, uint32_t blockNum,
          uint32_t dstGap);
void Fixpipe(const char *api, void *dst, int dstBuf, uint64_t dstBytes, DType dt, LocalRef src, DType st, int layout,
             const AscendC::FixpipeParamsV220 &p);
void SetFmatrix(uint16_t l1H, uint16_t l1W, const uint8_t padList[4], int mode);
void SetFixQuant(const char *api, LocalRef params);
}  // namespace emu

namespace AscendC {

template <typename T> void LoadData(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LoadData2DParams &p)
{
    emu::LoadData2D("LoadData(2D)", emu::Ref(dst), src.EmuAddr(), static_cast<int>(src.EmuBuf()), src.EmuBytes(),
                    sizeof(T), p);
}
template <typename T> void LoadData(const LocalTensor<T> &dst, const GlobalTensor<T> &src, const LoadData2DParams &p)
{
    emu::LoadData2D("LoadData(2D, GM)", emu::Ref(dst), src.GetPhyAddr(), static_cast<int>(emu::Buf::GM), 0, sizeof(T),
                    p);
}

template <typename T>
void LoadDataWithTranspose(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LoadData2dTransposeParams &p)
{
    emu::LoadDataTranspose("LoadDataWithTranspose", emu::Ref(dst), src.EmuAddr(), static_cast<int>(src.EmuBuf()),
                           src.EmuBytes(), SizeOfBits<T>::value, p);
}

// LoadData 3D v2: the feature map and pad value from the parameters or, per defaultConfig, from
// SetFmatrix / SetLoadDataPaddingValue.
template <typename T, const IsResetLoad3dConfig &defaultConfig = IS_RESER_LOAD3D_DEFAULT_CONFIG, typename U = T,
          typename std::enable_if<std::is_same<T, U>::value, bool>::type = true>
void LoadData(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LoadData3DParamsV2<U> &p)
{
    emu::CoreCtx &c = emu::Ctx();
    const int f = p.fMatrixCtrl ? 1 : 0;
    if (defaultConfig.isSetFMatrix) emu::SetFmatrix(p.l1H, p.l1W, p.padList, f);
    if (defaultConfig.isSetPadding) {
        c.load3dPad = 0;
        std::memcpy(&c.load3dPad, &p.padValue, sizeof(T));
    }
    emu::Load3dGeom g{c.fmapH[f],
                      c.fmapW[f],
                      {c.fmapPad[f][0], c.fmapPad[f][1], c.fmapPad[f][2], c.fmapPad[f][3]},
                      p.channelSize,
                      p.kExtension,
                      p.mExtension,
                      p.kStartPt,
                      p.mStartPt,
                      p.strideW,
                      p.strideH,
                      p.filterW + (p.filterSizeW ? 256u : 0u),
                      p.filterH + (p.filterSizeH ? 256u : 0u),
                      p.dilationFilterW,
                      p.dilationFilterH,
                      p.enTranspose,
                      c.load3dPad};
    emu::LoadData3D("LoadData(3D v2)", emu::Ref(dst), emu::Ref(src), sizeof(T), g);
}
template <typename T>
void LoadData(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LoadData3DParamsV2Pro &p)
{
    emu::CoreCtx &c = emu::Ctx();
    const int f = p.fMatrixCtrl ? 1 : 0;
    const uint64_t e = p.extConfig, fc = p.filterConfig;
    emu::Load3dGeom g{c.fmapH[f],
                      c.fmapW[f],
                      {c.fmapPad[f][0], c.fmapPad[f][1], c.fmapPad[f][2], c.fmapPad[f][3]},
                      p.channelSize,
                      static_cast<uint16_t>(e),
                      static_cast<uint16_t>(e >> 16),
                      static_cast<uint16_t>(e >> 32),
                      static_cast<uint16_t>(e >> 48),
                      static_cast<uint8_t>(fc),
                      static_cast<uint8_t>(fc >> 8),
                      static_cast<uint8_t>(fc >> 16) + (p.filterSizeW ? 256u : 0u),
                      static_cast<uint8_t>(fc >> 24) + (p.filterSizeH ? 256u : 0u),
                      static_cast<uint8_t>(fc >> 32),
                      static_cast<uint8_t>(fc >> 40),
                      p.enTranspose,
                      c.load3dPad};
    emu::LoadData3D("LoadData(3D v2 Pro)", emu::Ref(dst), emu::Ref(src), sizeof(T), g);
}
inline void SetFmatrix(uint16_t l1H, uint16_t l1W, const uint8_t padList[4], const FmatrixMode &fmatrixMode)
{
    emu::SetFmatrix(l1H, l1W, padList, static_cast<int>(fmatrixMode));
}
// The left feature map register, as SetFmatrix(..., FMATRIX_LEFT) (kernel_operator_mm_impl.h).
inline void Load3DSetFMatrixCal(uint16_t l1H, uint16_t l1W, const uint8_t padList[4])
{
    emu::SetFmatrix(l1H, l1W, padList, 0);
}
inline void Load3DSetFMatrixBCal(uint16_t l1H, uint16_t l1W, const uint8_t padList[4])
{
    emu::SetFmatrix(l1H, l1W, padList, 1);
}
template <typename T> void SetLoadDataPaddingValue(const T padValue)
{
    emu::Ctx().load3dPad = 0;
    std::memcpy(&emu::Ctx().load3dPad, &padValue, sizeof(T));
}
// The L1 wrap-around boundary of LoadData 3D: 0 (the default) is the only value modelled.
inline void SetLoadDataBoundary(uint32_t boundaryValue)
{
    if (boundaryValue != 0)
        emu::Fail("SetLoadDataBoundary", "boundary %u: only 0 (no wrap-around) is implemented by the emulator",
                  boundaryValue);
}

// The 4:2 structured-sparse matmul of int8: LoadDataWithSparse moves the densified filter (two
// of every four K elements kept) from B1 to B2 with its 2-bit indices; MmadWithSparse picks, per
// kept element, the fm column its index names (first: 0-2 of the group, second: 1-3).
template <typename T = int8_t, typename U = uint8_t,
          typename std::enable_if<std::is_same<T, int8_t>::value, bool>::type = true,
          typename std::enable_if<std::is_same<U, uint8_t>::value, bool>::type = true>
void LoadDataWithSparse(const LocalTensor<T> &dst, const LocalTensor<T> &src, const LocalTensor<U> &idx,
                        const LoadData2dParams &loadDataParam)
{
    emu::LoadDataSparse("LoadDataWithSparse", emu::Ref(dst), emu::Ref(src), emu::Ref(idx), loadDataParam);
}
template <typename T = int32_t, typename U = int8_t,
          typename std::enable_if<std::is_same<T, int32_t>::value, bool>::type = true,
          typename std::enable_if<std::is_same<U, int8_t>::value, bool>::type = true>
void MmadWithSparse(const LocalTensor<T> &dst, const LocalTensor<U> &fm, const LocalTensor<U> &filter,
                    const MmadParams &mmadParams)
{
    emu::Mmad(emu::Ref(dst), emu::DT<T>, emu::Ref(fm), emu::DT<U>, emu::Ref(filter), emu::DT<U>, mmadParams, nullptr,
              true);
}

template <typename T, typename U, typename S>
void Mmad(const LocalTensor<T> &dst, const LocalTensor<U> &fm, const LocalTensor<S> &filter, const MmadParams &p)
{
    emu::Mmad(emu::Ref(dst), emu::DT<T>, emu::Ref(fm), emu::DT<U>, emu::Ref(filter), emu::DT<S>, p);
}

// C = bias (broadcast over the rows) + A * B with the bias in the bias table (C2); a bias tensor
// in L0C is the accumulator itself.
template <typename T, typename U, typename S, typename V>
void Mmad(const LocalTensor<T> &dst, const LocalTensor<U> &fm, const LocalTensor<S> &filter, const LocalTensor<V> &bias,
          const MmadParams &p)
{
    if (bias.EmuBuf() == emu::Buf::L0C) {
        if (bias.EmuAddr() != static_cast<void *>(dst.EmuAddr()))
            emu::Fail("Mmad", "a bias tensor in L0C must be the destination itself (accumulate)");
        MmadParams acc = p;
        acc.cmatrixInitVal = false;
        return emu::Mmad(emu::Ref(dst), emu::DT<T>, emu::Ref(fm), emu::DT<U>, emu::Ref(filter), emu::DT<S>, acc);
    }
    if (bias.EmuBuf() != emu::Buf::BT || emu::DT<V> != emu::DType::F32)
        emu::Fail("Mmad", "the bias must be a float tensor in the bias table (C2) or the L0C accumulator");
    const emu::LocalRef b = emu::Ref(bias);
    emu::Mmad(emu::Ref(dst), emu::DT<T>, emu::Ref(fm), emu::DT<U>, emu::Ref(filter), emu::DT<S>, p, &b);
}

template <typename T, typename U = T, typename std::enable_if<std::is_same<T, U>::value, bool>::type = true>
void Fill(const LocalTensor<T> &dst, const InitConstValueParams<U> &p)
{
    uint64_t bits = 0;
    std::memcpy(&bits, &p.initValue, sizeof(T));
    emu::Fill("Fill", emu::Ref(dst), sizeof(T), bits, p.repeatTimes, p.blockNum, p.dstGap);
}
template <typename T, typename U = T, typename std::enable_if<std::is_same<T, U>::value, bool>::type = true>
void InitConstValue(const LocalTensor<T> &dst, const InitConstValueParams<U> &p)
{
    uint64_t bits = 0;
    std::memcpy(&bits, &p.initValue, sizeof(T));
    emu::Fill("InitConstValue", emu::Ref(dst), sizeof(T), bits, p.repeatTimes, p.blockNum, p.dstGap);
}

template <typename T, typename U, const FixpipeConfig &config = CFG_ROW_MAJOR>
void Fixpipe(const GlobalTensor<T> &dst, const LocalTensor<U> &src, const FixpipeParamsV220 &p)
{
    emu::Fixpipe("Fixpipe(L0C->GM)", dst.GetPhyAddr(0), static_cast<int>(emu::Buf::GM), 0, emu::DT<T>, emu::Ref(src),
                 emu::DT<U>, static_cast<int>(config.format), p);
}
template <typename T, typename U, const FixpipeConfig &config = CFG_ROW_MAJOR>
void Fixpipe(const LocalTensor<T> &dst, const LocalTensor<U> &src, const FixpipeParamsV220 &p)
{
    emu::Fixpipe("Fixpipe(L0C->L1)", dst.EmuAddr(), static_cast<int>(dst.EmuBuf()), dst.EmuBytes(), emu::DT<T>,
                 emu::Ref(src), emu::DT<U>, static_cast<int>(config.format), p);
}

inline void SetHF32Mode(bool) {}
// The order in which Mmad produces (and a unitFlag Fixpipe consumes) L0C fractals: a
// performance matter only, results do not depend on it.
inline void SetMMLayoutTransform(bool mmLayoutMode) { (void)mmLayoutMode; }
inline void SetMMRowMajor() {}
inline void SetMMColumnMajor() {}

// Per-channel quantisation (and ReLU) parameters of the Fixpipe, from the Fixpipe buffer
// (kernel_operator_fixpipe_intf.h). `isUnitFlag` is a scheduling hint only.
template <typename T, bool setRelu = false>
void SetFixPipeConfig(const LocalTensor<T> &reluPre, const LocalTensor<T> &quantPre, bool isUnitFlag = false)
{
    (void)isUnitFlag;
    if (setRelu)
        emu::Fail("SetFixPipeConfig", "per-channel ReLU parameters (setRelu) are not implemented by the emulator");
    (void)reluPre;
    emu::SetFixQuant("SetFixPipeConfig", emu::Ref(quantPre));
}
template <typename T, bool setRelu = false>
void SetFixPipeConfig(const LocalTensor<T> &preData, bool isUnitFlag = false)
{
    (void)isUnitFlag;
    if (setRelu)
        emu::Fail("SetFixPipeConfig", "per-channel ReLU parameters (setRelu) are not implemented by the emulator");
    emu::SetFixQuant("SetFixPipeConfig", emu::Ref(preData));
}

}  // namespace AscendC
