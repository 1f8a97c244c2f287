// Enums, core identity, kernel-type and tiling macros of the Ascend C kernel API
// (asc-devkit `impl/basic_api/common_types.h`, `impl/basic_api/kernel_event.h`, the Kernel-Tiling API pages). Names and values follow the CANN headers.
#pragma once
#include <cstdint>
#include <cstddef>
#include <cstring>
#include <initializer_list>

#include "emu/core.h"
#include "emu/dtype.h"
#include "kernel/emu_types.h"

namespace AscendC {

enum class TPosition : uint8_t {
    GM,
    A1,
    A2,
    B1,
    B2,
    C1,
    C2,
    CO1,
    CO2,
    VECIN,
    VECOUT,
    VECCALC,
    LCM = VECCALC,
    SPM,
    SHM = SPM,
    TSCM,
    C2PIPE2GM,
    C2PIPE2LOCAL,
    MAX
};
using QuePosition = TPosition;

enum class HardEvent : uint8_t {
    MTE2_MTE1,
    MTE1_MTE2,
    MTE1_M,
    M_MTE1,
    MTE2_V,
    V_MTE2,
    MTE3_V,
    V_MTE3,
    M_V,
    V_M,
    V_V,
    MTE3_MTE1,
    MTE1_MTE3,
    MTE1_V,
    MTE2_M,
    M_MTE2,
    V_MTE1,
    M_FIX,
    FIX_M,
    MTE3_MTE2,
    MTE2_MTE3,
    S_V,
    V_S,
    S_MTE2,
    MTE2_S,
    S_MTE3,
    MTE3_S,
    MTE2_FIX,
    FIX_MTE2,
    FIX_S,
    M_S,
    FIX_MTE3,
    MTE1_FIX,
    FIX_MTE1,
    FIX_FIX,
    MAX
};
using TEventID = int8_t;

enum class RoundMode : uint8_t {
    CAST_NONE = 0,
    CAST_RINT,
    CAST_FLOOR,
    CAST_CEIL,
    CAST_ROUND,
    CAST_TRUNC,
    CAST_ODD,
    UNKNOWN = 0xFF
};
enum class CMPMODE : uint8_t { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : uint8_t { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
enum class ReduceOrder : uint8_t { ORDER_VALUE_INDEX = 0, ORDER_INDEX_VALUE, ORDER_ONLY_VALUE, ORDER_ONLY_INDEX };
enum class MaskMode : uint8_t { NORMAL = 0, COUNTER };

// Core kinds (impl/utils/sys_constants.h).
constexpr int32_t MIX = 0;
constexpr int32_t AIC = 1;
constexpr int32_t AIV = 2;

constexpr uint64_t MASK_PLACEHOLDER = 0;
constexpr uint32_t ONE_BLK_SIZE = 32;
constexpr uint32_t ONE_REPEAT_BYTE_SIZE = 256;
constexpr uint32_t DEFAULT_REPEAT_STRIDE = 8;
constexpr uint32_t DEFAULT_BLK_STRIDE = 1;
constexpr uint32_t BLOCK_CUBE = 16;
constexpr uint32_t CUBE_MAX_SIZE = 256;
constexpr uint64_t RESERVED_WORKSPACE = 16 * 1024 * 1024;
constexpr uint32_t TOTAL_UB_SIZE = 192 * 1024;
constexpr uint32_t TOTAL_VEC_LOCAL_SIZE = 184 * 1024;
constexpr uint32_t TMP_UB_OFFSET = 184 * 1024;
constexpr uint32_t TOTAL_L0A_SIZE = 64 * 1024;
constexpr uint32_t TOTAL_L0B_SIZE = 64 * 1024;
constexpr uint32_t TOTAL_L0C_SIZE = 128 * 1024;
constexpr uint32_t TOTAL_L1_SIZE = 512 * 1024 - 128;
constexpr uint32_t ONE_BLOCK_SIZE = 32;
constexpr uint8_t PAD_SIZE = 4;

// A signed 4-bit integer (kernel_utils_constants.h): one element per byte when held in a scalar;
// tensors of it pack two elements per byte (SizeOfBits<int4b_t> is 4).
struct int4b_t {
    uint8_t storage;
    int4b_t() = default;
    int4b_t(int32_t v) : storage(static_cast<uint8_t>(v) & 0xf) {}
    operator int8_t() const { return static_cast<int8_t>((storage & 0x8) ? (storage | 0xf0) : storage); }
    bool operator==(const int4b_t &o) const { return storage == o.storage; }
    bool operator!=(const int4b_t &o) const { return storage != o.storage; }
};
}  // namespace AscendC
template <> struct emu::DTypeOf<AscendC::int4b_t> {
    static constexpr DType value = DType::I4;
};
namespace AscendC {

// Core identity.
inline int64_t GetBlockNum() { return emu::Ctx().blockDim; }
inline int64_t GetBlockIdx()
{
    const emu::CoreCtx &c = emu::Ctx();
    return c.kind == emu::kAiv ? static_cast<int64_t>(c.block) * c.taskRation + c.sub : c.block;
}
inline int64_t GetSubBlockIdx() { return emu::Ctx().sub; }
inline int64_t GetSubBlockNum() { return emu::Ctx().subBlockNum; }
inline int64_t GetTaskRation() { return emu::Ctx().taskRation; }
inline int64_t GetTaskRatio() { return emu::Ctx().taskRation; }

// Workspace: the user part starts after the system part when the launch says so.
inline __gm__ uint8_t *GetUserWorkspace(GM_ADDR workspace)
{
    return workspace == nullptr ? nullptr : workspace + emu::Ctx().userWorkspaceOffset;
}
__gm__ uint8_t *GetSysWorkSpacePtr();
inline void SetSysWorkspace(GM_ADDR) {}
inline void SetSysWorkspaceForce(GM_ADDR) {}

}  // namespace AscendC

using AscendC::GetBlockIdx;
using AscendC::GetBlockNum;

// Branch hints (kernel_utils_macros.h).
#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

// The device compiler's scalar min/max built-ins, one overload per scalar type (a same-type call
// picks its own; a library's min/max template still wins for mixed operands).
#define EMU_SCALAR_MINMAX(T)                                                                                           \
    constexpr T min(const T a, const T b) { return b < a ? b : a; }                                                    \
    constexpr T max(const T a, const T b) { return a < b ? b : a; }
EMU_SCALAR_MINMAX(int16_t)
EMU_SCALAR_MINMAX(uint16_t)
EMU_SCALAR_MINMAX(int32_t)
EMU_SCALAR_MINMAX(uint32_t)
EMU_SCALAR_MINMAX(int64_t)
EMU_SCALAR_MINMAX(uint64_t)
EMU_SCALAR_MINMAX(float)
#undef EMU_SCALAR_MINMAX

// The current core's pipe, a global function as in kernel_common.h.
namespace AscendC {
class TPipe;
}
inline AscendC::TPipe *GetTPipePtr() { return static_cast<AscendC::TPipe *>(::emu::Ctx().tpipe); }

enum KernelMetaType : uint8_t {
    KERNEL_TYPE_AIV_ONLY = 0,
    KERNEL_TYPE_AIC_ONLY,
    KERNEL_TYPE_MIX_AIV_1_0,
    KERNEL_TYPE_MIX_AIC_1_0,
    KERNEL_TYPE_MIX_AIC_1_1,
    KERNEL_TYPE_MIX_AIC_1_2,
    KERNEL_TYPE_AICORE,
    KERNEL_TYPE_VECTORCORE,
    KERNEL_TYPE_MIX_AICORE,
    KERNEL_TYPE_MIX_VECTOR_CORE,
    KERNEL_TYPE_MAX
};

// Read by CANN's pre-compile pass only; the launcher is told the kernel type by the host.
#define KERNEL_TASK_TYPE_DEFAULT(value)
#define KERNEL_TASK_TYPE(key, value)

// The core kind the code is compiled for. bisheng compiles a kernel once per core kind with
// __DAV_C220_CUBE__ / __DAV_C220_VEC__ (and __DAV_CUBE__ / __DAV_VEC__) defined, so g_coreType is a
// constant there, as in the ASC driver's passes (cmake/asc/asc_cc). A source compiled once for
// every core (our operators, the CPU twin's ICPU_RUN_KF) tests the run-time kind.
#if defined(__DAV_C220_CUBE__) || defined(__DAV_CUBE__)
constexpr int32_t g_coreType = AscendC::AIC;
#elif defined(__DAV_C220_VEC__) || defined(__DAV_VEC__)
constexpr int32_t g_coreType = AscendC::AIV;
#else
#define g_coreType (::emu::Ctx().kind)
#endif
// Used as `if ASCEND_IS_AIV { ... }`: a discarded branch where the kind is a constant, as on the NPU.
#if defined(__DAV_C220_CUBE__) || defined(__DAV_CUBE__) || defined(__DAV_C220_VEC__) || defined(__DAV_VEC__)
#define ASCEND_IS_AIV constexpr(g_coreType == AscendC::AIV)
#define ASCEND_IS_AIC constexpr(g_coreType == AscendC::AIC)
#define ASCEND_IS_NOT_AIV constexpr(g_coreType != AscendC::AIV)
#define ASCEND_IS_NOT_AIC constexpr(g_coreType != AscendC::AIC)
#else
#define ASCEND_IS_AIV (g_coreType == AscendC::AIV)
#define ASCEND_IS_AIC (g_coreType == AscendC::AIC)
#define ASCEND_IS_NOT_AIV (g_coreType != AscendC::AIV)
#define ASCEND_IS_NOT_AIC (g_coreType != AscendC::AIC)
#endif

// Tiling: a byte copy of the struct the host wrote into the tiling buffer.
#define GET_TILING_DATA_WITH_STRUCT(tiling_struct, tiling_data, tiling_arg)                                            \
    tiling_struct tiling_data;                                                                                         \
    ::emu::CopyTiling(&tiling_data, tiling_arg, sizeof(tiling_struct), #tiling_struct)
#define GET_TILING_DATA_PTR_WITH_STRUCT(tiling_struct, dst_ptr, tiling_arg)                                            \
    ::emu::CheckGm("GET_TILING_DATA_PTR_WITH_STRUCT", "tiling", tiling_arg, sizeof(tiling_struct));                    \
    const __gm__ tiling_struct *dst_ptr = reinterpret_cast<const __gm__ tiling_struct *>(tiling_arg)
#define GET_TILING_DATA_MEMBER(tiling_struct, member, var, tiling_arg)                                                 \
    decltype(reinterpret_cast<tiling_struct *>(0)->member) var;                                                        \
    ::emu::CopyTiling(&var, (tiling_arg) + offsetof(tiling_struct, member), sizeof(var), #tiling_struct "." #member)
#define COPY_TILING_WITH_STRUCT(tiling_struct, src_ptr, dst_ptr)                                                       \
    tiling_struct dst_ptr##_copy = *(src_ptr);                                                                         \
    const tiling_struct *dst_ptr = &dst_ptr##_copy
// Records the default tiling type so GET_TILING_DATA can name it (a metadata macro in CANN).
#define REGISTER_TILING_DEFAULT(tiling_struct) using EmuDefaultTilingStruct = tiling_struct
#define GET_TILING_DATA(tiling_data, tiling_arg)                                                                       \
    GET_TILING_DATA_WITH_STRUCT(EmuDefaultTilingStruct, tiling_data, tiling_arg)
#define REGISTER_TILING_FOR_TILINGKEY(cond, tiling_struct)
#define REGISTER_NONE_TILING
// CANN's kernel compiler collects an entry's tiling keys by matching `g_tilingKey == (<integer>`
// in the preprocessed source, so the key must expand to an integer literal (a macro for one is
// fine; a constexpr name or a call fails the CANN build). The second macro sees the argument
// expanded and checks its spelling, so such a key aborts the launch here too.
#define TILING_KEY_IS(key) EMU_TILING_KEY_IS_EXPANDED(key)
#define EMU_TILING_KEY_IS_EXPANDED(key) (::emu::TilingKeyIs(#key, static_cast<uint64_t>(key)))
#define TILING_KEY_LIST(...) (::emu::TilingKeyIn({__VA_ARGS__}))

namespace emu {
inline bool TilingKeyIs(const char *spelling, uint64_t key)
{
    const char *c = spelling;  // `(0)` fails too: the match wants a digit right after `(`
    if (*c == '-') ++c;
    if (*c < '0' || *c > '9')
        Fail("TILING_KEY_IS",
             "the key '%s' does not expand to an integer literal; CANN's kernel compiler finds tiling keys "
             "as `g_tilingKey == (<integer>` in the preprocessed source (use a literal or a #define of one)",
             spelling);
    return Ctx().tilingKey == key;
}
inline bool TilingKeyIn(std::initializer_list<uint64_t> keys)
{
    for (uint64_t k : keys)
        if (k == Ctx().tilingKey) return true;
    return false;
}
inline void CopyTiling(void *dst, const void *tiling, size_t bytes, const char *what)
{
    CheckGm("GET_TILING_DATA", what, tiling, bytes);
    std::memcpy(dst, tiling, bytes);
}
}  // namespace emu
