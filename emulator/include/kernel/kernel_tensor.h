// LocalTensor and GlobalTensor (asc-devkit `include/basic_api/kernel_tensor.h`). In CPU builds GetPhyAddr
// returns a host pointer, as in CANN's CPU twin. Every access is bounds-checked per call.
#pragma once
#include "emu/race.h"
#include "kernel/kernel_common.h"

namespace AscendC {

// Physical buffer of a logical position on arch 2201.
constexpr emu::Buf PhysicalOf(TPosition p)
{
    return (p == TPosition::VECIN || p == TPosition::VECOUT || p == TPosition::VECCALC) ? emu::Buf::UB
           : (p == TPosition::A1 || p == TPosition::B1 || p == TPosition::C1 || p == TPosition::TSCM ||
              p == TPosition::SHM)
               ? emu::Buf::L1
           : p == TPosition::A2        ? emu::Buf::L0A
           : p == TPosition::B2        ? emu::Buf::L0B
           : p == TPosition::CO1       ? emu::Buf::L0C
           : p == TPosition::C2        ? emu::Buf::BT
           : p == TPosition::C2PIPE2GM ? emu::Buf::FB
                                       : emu::Buf::GM;
}
const char *PositionName(TPosition p);

}  // namespace AscendC

namespace emu {
// What LocalTensor::GetPhyAddr returns: the element pointer of CANN's CPU twin (`T *p =
// t.GetPhyAddr()`) and, in integer arithmetic (`t.GetPhyAddr() + bytes`, `bytes + t.GetPhyAddr()`,
// `(uint64_t)t.GetPhyAddr()`), the integer byte address an NPU build returns (the prototype is
// `uint64_t GetPhyAddr() const`), so kernels that build address lists that way (TransDataTo5HD)
// run unchanged.
template <class T> struct PhyAddr {
    T *p;
    operator T *() const { return p; }
    explicit operator uint64_t() const { return reinterpret_cast<uintptr_t>(p); }
    template <class I, class = typename std::enable_if<std::is_integral<I>::value>::type>
    friend uint64_t operator+(I bytes, PhyAddr a)
    {
        return static_cast<uint64_t>(bytes) + reinterpret_cast<uintptr_t>(a.p);
    }
    template <class I, class = typename std::enable_if<std::is_integral<I>::value>::type>
    friend uint64_t operator+(PhyAddr a, I bytes)
    {
        return reinterpret_cast<uintptr_t>(a.p) + static_cast<uint64_t>(bytes);
    }
};
}  // namespace emu

namespace AscendC {

// Bits of one element: 4 for int4b_t, 8 * sizeof(T) otherwise (kernel_utils_constants.h).
template <typename T> struct SizeOfBits {
    static constexpr uint32_t value = sizeof(T) * 8;
};
template <> struct SizeOfBits<int4b_t> {
    static constexpr uint32_t value = 4;
};

// Where a LocalTensor lives (kernel_tensor_base.h, CPU-debug form): bytes, offset in the
// physical buffer, the logical position and the host address.
using TBufHandle = uint8_t *;
struct TBuffAddr {
    uint32_t dataLen;
    uint32_t bufferAddr;
    TBufHandle bufferHandle;
    uint8_t logicPos;
    uint8_t *absAddr;
};

template <typename T> class LocalTensor {
public:
    using PrimType = T;
    LocalTensor() : address_{0, 0, nullptr, static_cast<uint8_t>(TPosition::GM), nullptr} {}
    // A tensor at byte address `addr` of the position's buffer, `tileSize` elements long.
    LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize)
    {
        EmuSet(reinterpret_cast<T *>(reinterpret_cast<uintptr_t>(emu::Ctx().mem[static_cast<int>(PhysicalOf(pos))]) +
                                     addr),
               tileSize, pos);
        emu::NoteLocalUse(PhysicalOf(pos), uint64_t(addr) + Bytes(tileSize));
    }
    LocalTensor operator[](const uint32_t offset) const
    {
        if (offset > GetSize())
            emu::Fail("LocalTensor::operator[]", "offset %u is past the tensor's %u elements", offset, GetSize());
        LocalTensor r(*this);
        r.address_.absAddr += Bytes(offset);
        r.address_.bufferAddr += static_cast<uint32_t>(Bytes(offset));
        r.address_.dataLen -= static_cast<uint32_t>(Bytes(offset));
        return r;
    }
    T GetValue(const uint32_t index) const
    {
        CheckIndex("LocalTensor::GetValue", index);
        emu::Count(emu::Pipe::S, sizeof(T));
        emu::RaceRead("LocalTensor::GetValue", emu::Pipe::S, static_cast<int>(EmuBuf()), Addr() + index, sizeof(T));
        return Addr()[index];
    }
    template <typename S> void SetValue(const uint32_t index, const S value) const
    {
        CheckIndex("LocalTensor::SetValue", index);
        emu::Count(emu::Pipe::S, sizeof(T));
        emu::RaceWrite("LocalTensor::SetValue", emu::Pipe::S, static_cast<int>(EmuBuf()), Addr() + index, sizeof(T));
        Addr()[index] = static_cast<T>(value);
    }
    T &operator()(const uint32_t index) const
    {
        CheckIndex("LocalTensor::operator()", index);
        emu::RaceWrite("LocalTensor::operator()", emu::Pipe::S, static_cast<int>(EmuBuf()), Addr() + index, sizeof(T));
        return Addr()[index];
    }
    template <typename U> LocalTensor<U> ReinterpretCast() const
    {
        LocalTensor<U> r;
        r.address_ = address_;
        return r;
    }
    uint32_t GetSize() const
    {
        return static_cast<uint32_t>(static_cast<uint64_t>(address_.dataLen) * 8 / SizeOfBits<T>::value);
    }
    void SetSize(const uint32_t size) { address_.dataLen = static_cast<uint32_t>(Bytes(size)); }
    uint32_t GetLength() const { return address_.dataLen; }
    TPosition GetPosition() const { return static_cast<TPosition>(address_.logicPos); }
    emu::PhyAddr<T> GetPhyAddr() const { return {Addr()}; }
    emu::PhyAddr<T> GetPhyAddr(const uint32_t offset) const
    {
        return {reinterpret_cast<T *>(address_.absAddr + Bytes(offset))};
    }
    void SetAddrWithOffset(LocalTensor<T> &src, uint32_t offset) { *this = src[offset]; }
    // Takes over the location of another tensor, e.g. `a.SetAddr(b[i].address_)` (any element type).
    void SetAddr(const TBuffAddr &address) { address_ = address; }
    TBufHandle GetBufferHandle() const { return address_.bufferHandle; }

    // Emulator internals (not CANN API).
    void EmuSet(T *addr, uint32_t size, TPosition pos)
    {
        address_.absAddr = reinterpret_cast<uint8_t *>(addr);
        address_.dataLen = static_cast<uint32_t>(Bytes(size));
        address_.logicPos = static_cast<uint8_t>(pos);
        address_.bufferHandle = nullptr;
        const uint8_t *base = emu::Ctx().mem[static_cast<int>(PhysicalOf(pos))];
        address_.bufferAddr = base == nullptr ? 0 : static_cast<uint32_t>(address_.absAddr - base);
    }
    T *EmuAddr() const { return Addr(); }
    emu::Buf EmuBuf() const { return PhysicalOf(GetPosition()); }
    bool EmuPresent() const { return emu::Ctx().mem[static_cast<int>(EmuBuf())] != nullptr; }
    uint64_t EmuBytes() const { return address_.dataLen; }

    TBuffAddr address_;

private:
    static constexpr uint64_t Bytes(uint64_t elems) { return elems * SizeOfBits<T>::value / 8; }
    T *Addr() const { return reinterpret_cast<T *>(address_.absAddr); }
    void CheckIndex(const char *api, uint32_t index) const
    {
        if (index >= GetSize())
            emu::Fail(api, "index %u is outside the tensor's %u elements (%s)", index, GetSize(),
                      PositionName(GetPosition()));
        emu::CheckLocal(api, "tensor", EmuBuf(), Addr() + index, sizeof(T));
    }
};

enum class CacheMode { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL = 1, CACHE_MODE_LAST = 2, CACHE_MODE_PERSISTENT = 4 };
enum class CacheRwMode { READ = 1, WRITE = 2, RW = 3 };

template <typename T> class GlobalTensor {
public:
    using PrimType = T;
    GlobalTensor() = default;
    void SetGlobalBuffer(__gm__ T *buffer, uint64_t bufferSize)
    {
        addr_ = buffer;
        size_ = bufferSize;
    }
    void SetGlobalBuffer(__gm__ T *buffer)
    {
        addr_ = buffer;
        size_ = 0;
    }
    const __gm__ T *GetPhyAddr() const { return addr_; }
    __gm__ T *GetPhyAddr(const uint64_t offset) const { return At("GlobalTensor::GetPhyAddr", offset); }
    T GetValue(const uint64_t offset) const
    {
        emu::CheckGm("GlobalTensor::GetValue", "element", addr_ + offset, sizeof(T));
        emu::RaceGm("GlobalTensor::GetValue", emu::Pipe::S, addr_ + offset, 1, sizeof(T), 0, false);
        emu::CountScalarGm(sizeof(T));
        return addr_[offset];
    }
    void SetValue(const uint64_t offset, T value) const
    {
        emu::CheckGm("GlobalTensor::SetValue", "element", addr_ + offset, sizeof(T));
        emu::RaceGm("GlobalTensor::SetValue", emu::Pipe::S, addr_ + offset, 1, sizeof(T), 0, true);
        emu::CountScalarGm(sizeof(T));
        addr_[offset] = value;
    }
    // As in the real header, a writable reference: the hazard checker takes the call as a scalar
    // read and a change of the element through the reference as a scalar write.
    T &operator()(const uint64_t offset) const
    {
        emu::CheckGm("GlobalTensor::operator()", "element", addr_ + offset, sizeof(T));
        if (emu::g_raceCheck) emu::RaceGmElementRef(addr_ + offset, sizeof(T));
        return addr_[offset];
    }
    uint64_t GetSize() const { return size_; }
    GlobalTensor operator[](const uint64_t offset) const
    {
        GlobalTensor r(*this);
        r.addr_ = At("GlobalTensor::operator[]", offset);
        return r;
    }
    template <CacheRwMode rwMode = CacheRwMode::RW> void SetL2CacheHint(CacheMode) {}

private:
    // Element `offset` of the buffer: int4b_t packs two elements per byte, so an offset moves
    // offset / 2 bytes and an odd one, which names the high half of a byte, is not an address.
    __gm__ T *At(const char *api, uint64_t offset) const
    {
        if (SizeOfBits<T>::value < 8) {
            if (offset % 2 != 0)
                emu::Fail(api, "int4b_t offset %llu is odd (two elements per byte)", (unsigned long long)offset);
            return reinterpret_cast<__gm__ T *>(reinterpret_cast<__gm__ uint8_t *>(addr_) + offset / 2);
        }
        return addr_ + offset;
    }
    __gm__ T *addr_ = nullptr;
    uint64_t size_ = 0;
};

}  // namespace AscendC
