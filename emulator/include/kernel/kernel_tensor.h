// LocalTensor and GlobalTensor (asc-devkit `include/basic_api/kernel_tensor.h`). In CPU builds GetPhyAddr
// returns a host pointer, as in CANN's CPU twin. Every access is bounds-checked per call.
#pragma once
#include "emu/race.h"
#include "kernel/kernel_common.h"

namespace AscendC {

// Physical buffer of a logical position on arch 2201 (§1.2).
constexpr emu::Buf PhysicalOf(TPosition p) {
    return (p == TPosition::VECIN || p == TPosition::VECOUT || p == TPosition::VECCALC) ? emu::Buf::UB
         : (p == TPosition::A1 || p == TPosition::B1 || p == TPosition::C1 || p == TPosition::TSCM ||
            p == TPosition::SHM) ? emu::Buf::L1
         : p == TPosition::A2 ? emu::Buf::L0A
         : p == TPosition::B2 ? emu::Buf::L0B
         : p == TPosition::CO1 ? emu::Buf::L0C
         : p == TPosition::C2 ? emu::Buf::BT
         : p == TPosition::C2PIPE2GM ? emu::Buf::FB
         : emu::Buf::GM;
}
const char *PositionName(TPosition p);

template <typename T>
class LocalTensor {
public:
    using PrimType = T;
    LocalTensor() = default;
    // A tensor at byte address `addr` of the position's buffer, `tileSize` elements long.
    LocalTensor(TPosition pos, uint32_t addr, uint32_t tileSize) : pos_(pos), size_(tileSize) {
        addr_ = reinterpret_cast<T *>(reinterpret_cast<uintptr_t>(emu::Ctx().mem[static_cast<int>(PhysicalOf(pos))]) + addr);
    }
    LocalTensor operator[](const uint32_t offset) const {
        if (offset > size_) emu::Fail("LocalTensor::operator[]", "offset %u is past the tensor's %u elements", offset, size_);
        LocalTensor r(*this);
        r.addr_ = addr_ + offset;
        r.size_ = size_ - offset;
        return r;
    }
    T GetValue(const uint32_t index) const {
        CheckIndex("LocalTensor::GetValue", index);
        emu::Count(emu::Pipe::S, sizeof(T));
        emu::RaceRead("LocalTensor::GetValue", emu::Pipe::S, static_cast<int>(EmuBuf()), addr_ + index, sizeof(T));
        return addr_[index];
    }
    template <typename S>
    void SetValue(const uint32_t index, const S value) const {
        CheckIndex("LocalTensor::SetValue", index);
        emu::Count(emu::Pipe::S, sizeof(T));
        emu::RaceWrite("LocalTensor::SetValue", emu::Pipe::S, static_cast<int>(EmuBuf()), addr_ + index, sizeof(T));
        addr_[index] = static_cast<T>(value);
    }
    T &operator()(const uint32_t index) const {
        CheckIndex("LocalTensor::operator()", index);
        emu::RaceWrite("LocalTensor::operator()", emu::Pipe::S, static_cast<int>(EmuBuf()), addr_ + index, sizeof(T));
        return addr_[index];
    }
    template <typename U>
    LocalTensor<U> ReinterpretCast() const {
        LocalTensor<U> r;
        r.EmuSet(reinterpret_cast<U *>(addr_), static_cast<uint32_t>(static_cast<uint64_t>(size_) * sizeof(T) / sizeof(U)), pos_);
        return r;
    }
    uint32_t GetSize() const { return size_; }
    void SetSize(const uint32_t size) { size_ = size; }
    uint32_t GetLength() const { return size_ * sizeof(T); }
    TPosition GetPosition() const { return pos_; }
    T *GetPhyAddr() const { return addr_; }
    T *GetPhyAddr(const uint32_t offset) const { return addr_ + offset; }
    void SetAddrWithOffset(LocalTensor<T> &src, uint32_t offset) { *this = src[offset]; }

    // Emulator internals (not CANN API).
    void EmuSet(T *addr, uint32_t size, TPosition pos) { addr_ = addr; size_ = size; pos_ = pos; }
    emu::Buf EmuBuf() const { return PhysicalOf(pos_); }
    bool EmuPresent() const { return emu::Ctx().mem[static_cast<int>(EmuBuf())] != nullptr; }
    uint64_t EmuBytes() const { return static_cast<uint64_t>(size_) * sizeof(T); }

private:
    void CheckIndex(const char *api, uint32_t index) const {
        if (index >= size_) emu::Fail(api, "index %u is outside the tensor's %u elements (%s)", index, size_, PositionName(pos_));
        emu::CheckLocal(api, "tensor", EmuBuf(), addr_ + index, sizeof(T));
    }
    T *addr_ = nullptr;
    TPosition pos_ = TPosition::GM;
    uint32_t size_ = 0;
};

enum class CacheMode { CACHE_MODE_DISABLE = 0, CACHE_MODE_NORMAL = 1, CACHE_MODE_LAST = 2, CACHE_MODE_PERSISTENT = 4 };
enum class CacheRwMode { READ = 1, WRITE = 2, RW = 3 };

template <typename T>
class GlobalTensor {
public:
    using PrimType = T;
    GlobalTensor() = default;
    void SetGlobalBuffer(__gm__ T *buffer, uint64_t bufferSize) { addr_ = buffer; size_ = bufferSize; }
    void SetGlobalBuffer(__gm__ T *buffer) { addr_ = buffer; size_ = 0; }
    const __gm__ T *GetPhyAddr() const { return addr_; }
    __gm__ T *GetPhyAddr(const uint64_t offset) const { return addr_ + offset; }
    T GetValue(const uint64_t offset) const {
        emu::CheckGm("GlobalTensor::GetValue", "element", addr_ + offset, sizeof(T));
        emu::CountScalarGm(sizeof(T));
        return addr_[offset];
    }
    void SetValue(const uint64_t offset, T value) const {
        emu::CheckGm("GlobalTensor::SetValue", "element", addr_ + offset, sizeof(T));
        emu::CountScalarGm(sizeof(T));
        addr_[offset] = value;
    }
    T &operator()(const uint64_t offset) const {
        emu::CheckGm("GlobalTensor::operator()", "element", addr_ + offset, sizeof(T));
        return addr_[offset];
    }
    uint64_t GetSize() const { return size_; }
    GlobalTensor operator[](const uint64_t offset) const {
        GlobalTensor r(*this);
        r.addr_ = addr_ + offset;
        return r;
    }
    template <CacheRwMode rwMode = CacheRwMode::RW>
    void SetL2CacheHint(CacheMode) {}

private:
    __gm__ T *addr_ = nullptr;
    uint64_t size_ = 0;
};

}  // namespace AscendC
