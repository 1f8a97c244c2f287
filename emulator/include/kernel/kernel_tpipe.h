// TPipe, TQueBind/TQue and TBuf (asc-devkit `include/basic_api/kernel_tpipe.h`). Buffers are carved from the
// current core's physical memories; queue misuse that would hang or corrupt on the hardware
// (DeQue on an empty queue, EnQue past the depth, no free buffer) is reported.
#pragma once
#include "kernel/kernel_sync.h"

namespace AscendC {

// Type traits of the real kernel_tpipe.h's utilities (kernel_utils_ceil_oom_que.h).
template <bool b> struct BoolInst {
    using Type = BoolInst<b>;
    static constexpr bool value = b;
};
using TrueType = BoolInst<true>;
using FalseType = BoolInst<false>;
template <typename T, typename U> struct IsSameType : public FalseType {};
template <typename T> struct IsSameType<T, T> : public TrueType {};

constexpr int32_t QBUF_MAX_LEN = 64;
constexpr int32_t QUE_MAX_EVENT = 8;

struct TQueConfig {
    bool nd2nz = false;
    bool nz2nd = false;
    bool scmBlockGroup = false;
    uint32_t bufferLen = 0;
    uint32_t bufferNumber = 0;
    uint32_t consumerSize = 0;
    TPosition consumer[8] = {};
    bool enableStaticEvtId = false;
    bool enableLoopQueue = false;
};

// Where a queue's buffers live: the local end of the (src, dst) pair.
constexpr TPosition QueBufferPos(TPosition src, TPosition dst)
{
    return src == TPosition::GM ? dst : (dst == TPosition::GM || dst == TPosition::CO2) ? src : dst;
}
constexpr TPosition QueSrcOf(TPosition p)
{
    return (p == TPosition::VECIN || p == TPosition::A1 || p == TPosition::B1 || p == TPosition::C1) ? TPosition::GM
           : p == TPosition::A2                                                                      ? TPosition::A1
           : p == TPosition::B2                                                                      ? TPosition::B1
           : p == TPosition::C2                                                                      ? TPosition::C1
                                                                                                     : p;
}
constexpr TPosition QueDstOf(TPosition p)
{
    return p == TPosition::VECOUT ? TPosition::GM : p == TPosition::CO1 ? TPosition::CO2 : p;
}

// The pipes a queue hands its buffers between (producer writes, consumer reads), which is the
// ordering its EnQue/DeQue events give (asc-devkit `impl/basic_api/kernel_tquebind_impl.h`, GetQueEvt).
constexpr emu::Pipe QueProducer(TPosition src, TPosition dst)
{
    return src == TPosition::GM                                                   ? emu::Pipe::MTE2
           : (dst == TPosition::GM && PhysicalOf(src) == emu::Buf::UB)            ? emu::Pipe::V
           : (PhysicalOf(src) == emu::Buf::L1 && PhysicalOf(dst) != emu::Buf::L1) ? emu::Pipe::MTE1
           : PhysicalOf(src) == emu::Buf::L0C                                     ? emu::Pipe::M
           : (PhysicalOf(src) == emu::Buf::UB && PhysicalOf(dst) == emu::Buf::UB) ? emu::Pipe::V
                                                                                  : emu::Pipe::S;
}
constexpr emu::Pipe QueConsumer(TPosition src, TPosition dst)
{
    return (src == TPosition::GM && PhysicalOf(dst) == emu::Buf::UB)              ? emu::Pipe::V
           : (src == TPosition::GM && PhysicalOf(dst) == emu::Buf::L1)            ? emu::Pipe::MTE1
           : (dst == TPosition::GM && PhysicalOf(src) == emu::Buf::UB)            ? emu::Pipe::MTE3
           : (PhysicalOf(src) == emu::Buf::L1 && PhysicalOf(dst) != emu::Buf::L1) ? emu::Pipe::M
           : PhysicalOf(src) == emu::Buf::L0C                                     ? emu::Pipe::FIXP
           : (PhysicalOf(src) == emu::Buf::UB && PhysicalOf(dst) == emu::Buf::UB) ? emu::Pipe::V
                                                                                  : emu::Pipe::S;
}

// State shared by every queue / buffer kind; the pipe fills it at InitBuffer.
class TQueBindBase {
public:
    TPosition EmuPos() const { return pos_; }

protected:
    friend class TPipe;
    enum State : uint8_t { FREE, ALLOCATED, ENQUEUED, DEQUEUED };
    void EmuInit(TPosition pos, uint8_t *base, uint32_t num, uint32_t len)
    {
        pos_ = pos;
        base_ = base;
        num_ = num;
        len_ = len;
        for (auto &s : state_) s = FREE;
        head_ = count_ = cursor_ = 0;
        inited_ = true;
    }
    int FindBuffer(const void *p) const
    {
        for (uint32_t i = 0; i < num_; ++i)
            if (base_ + static_cast<uintptr_t>(i) * len_ == p) return static_cast<int>(i);
        return -1;
    }
    TPosition pos_ = TPosition::MAX;
    uint8_t *base_ = nullptr;
    uint32_t num_ = 0, len_ = 0;
    State state_[QBUF_MAX_LEN] = {};
    int ring_[QBUF_MAX_LEN] = {};
    int head_ = 0, count_ = 0, cursor_ = 0;
    bool inited_ = false;
    emu::RaceSnap enqSnap_[QBUF_MAX_LEN];   // producer -> consumer, per buffer (EnQue/DeQue)
    emu::RaceSnap freeSnap_[QBUF_MAX_LEN];  // consumer -> producer, per buffer (FreeTensor/AllocTensor)
};

template <TPosition src, TPosition dst, int32_t depth, auto mask = 0> class TQueBind : public TQueBindBase {
public:
    static constexpr TPosition kPos = QueBufferPos(src, dst);
    static constexpr emu::Pipe kProducer = QueProducer(src, dst);
    static constexpr emu::Pipe kConsumer = QueConsumer(src, dst);
    template <typename T> LocalTensor<T> AllocTensor()
    {
        static_assert(depth != 0, "AllocTensor() needs a queue depth > 0 (use the in-place form for depth 0)");
        Ready("TQue::AllocTensor");
        for (uint32_t k = 0; k < num_; ++k) {
            const int i = static_cast<int>((cursor_ + k) % num_);
            if (state_[i] == FREE) {
                state_[i] = ALLOCATED;
                cursor_ = (i + 1) % static_cast<int>(num_);
                emu::RaceAcquire(kProducer, &freeSnap_[i]);
                LocalTensor<T> t;
                t.EmuSet(reinterpret_cast<T *>(base_ + static_cast<uintptr_t>(i) * len_),
                         static_cast<uint32_t>(len_ * 8ull / SizeOfBits<T>::value), kPos);
                return t;
            }
        }
        emu::Fail("TQue::AllocTensor",
                  "all %u buffers of the %s queue are in use (not freed with FreeTensor): the hardware would hang",
                  num_, PositionName(kPos));
    }
    template <typename T> void AllocTensor(LocalTensor<T> &t) { t = AllocTensor<T>(); }
    template <typename T> bool EnQue(const LocalTensor<T> &t)
    {
        Ready("TQue::EnQue");
        const int i = FindBuffer(t.EmuAddr());
        if (i < 0)
            emu::Fail("TQue::EnQue", "the tensor does not start at a buffer of this %s queue", PositionName(kPos));
        if (state_[i] != ALLOCATED)
            emu::Fail("TQue::EnQue", "buffer %d of the %s queue is not allocated (state %d)", i, PositionName(kPos),
                      state_[i]);
        if (count_ >= depth)
            emu::Fail("TQue::EnQue", "the %s queue already holds depth=%d tensors", PositionName(kPos), depth);
        state_[i] = ENQUEUED;
        ring_[(head_ + count_++) % QBUF_MAX_LEN] = i;
        emu::RaceSignal(kProducer, &enqSnap_[i]);
        return true;
    }
    template <TPosition srcUserPos, TPosition dstUserPos, typename T> bool EnQue(const LocalTensor<T> &t)
    {
        return EnQue(t);
    }
    template <typename T> LocalTensor<T> DeQue()
    {
        Ready("TQue::DeQue");
        if (count_ == 0)
            emu::Fail("TQue::DeQue", "the %s queue is empty (no EnQue before this DeQue): the hardware would hang",
                      PositionName(kPos));
        const int i = ring_[head_];
        head_ = (head_ + 1) % QBUF_MAX_LEN;
        --count_;
        state_[i] = DEQUEUED;
        emu::RaceAcquire(kConsumer, &enqSnap_[i]);
        LocalTensor<T> t;
        t.EmuSet(reinterpret_cast<T *>(base_ + static_cast<uintptr_t>(i) * len_),
                 static_cast<uint32_t>(len_ * 8ull / SizeOfBits<T>::value), kPos);
        return t;
    }
    template <typename T> void DeQue(LocalTensor<T> &t) { t = DeQue<T>(); }
    template <TPosition srcUserPos, TPosition dstUserPos, typename T> LocalTensor<T> DeQue() { return DeQue<T>(); }
    template <typename T> void FreeTensor(LocalTensor<T> &t)
    {
        Ready("TQue::FreeTensor");
        const int i = FindBuffer(t.EmuAddr());
        if (i < 0)
            emu::Fail("TQue::FreeTensor", "the tensor does not start at a buffer of this %s queue", PositionName(kPos));
        if (state_[i] == FREE)
            emu::Fail("TQue::FreeTensor", "buffer %d of the %s queue is already free", i, PositionName(kPos));
        if (state_[i] == ENQUEUED)
            emu::Fail("TQue::FreeTensor", "buffer %d of the %s queue is still enqueued (DeQue it first)", i,
                      PositionName(kPos));
        state_[i] = FREE;
        emu::RaceSignal(kConsumer, &freeSnap_[i]);
    }
    bool VacantInQue() const { return count_ < depth; }
    bool HasTensorInQue() const { return count_ > 0; }
    int32_t GetTensorCountInQue() const { return count_; }
    bool HasIdleBuffer() const
    {
        for (uint32_t i = 0; i < num_; ++i)
            if (state_[i] == FREE) return true;
        return false;
    }
    void FreeAllEvent() {}

private:
    void Ready(const char *api) const
    {
        if (!inited_) emu::Fail(api, "the %s queue was not given buffers with TPipe::InitBuffer", PositionName(kPos));
    }
};

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue : public TQueBind<QueSrcOf(pos), QueDstOf(pos), depth, mask> {
    static_assert(pos != TPosition::VECCALC, "TQue<VECCALC> is not allowed: use TBuf<VECCALC>");
};

template <TPosition pos = TPosition::LCM> class TBuf : public TQueBindBase {
public:
    template <typename T> LocalTensor<T> Get()
    {
        return Get<T>(static_cast<uint32_t>(len_ * 8ull / SizeOfBits<T>::value));
    }
    template <typename T> LocalTensor<T> Get(uint32_t len)
    {
        if (!inited_)
            emu::Fail("TBuf::Get", "the %s buffer was not given memory with TPipe::InitBuffer", PositionName(pos));
        if (static_cast<uint64_t>(len) * SizeOfBits<T>::value > len_ * 8ull)
            emu::Fail("TBuf::Get", "%u elements of %u bits exceed the buffer's %u bytes", len, SizeOfBits<T>::value,
                      len_);
        LocalTensor<T> t;
        t.EmuSet(reinterpret_cast<T *>(base_), len, pos);
        return t;
    }
    template <typename T> LocalTensor<T> GetWithOffset(uint32_t size, uint32_t bufOffset)
    {
        if (!inited_)
            emu::Fail("TBuf::GetWithOffset", "the %s buffer was not given memory with TPipe::InitBuffer",
                      PositionName(pos));
        if (bufOffset % 32 != 0)
            emu::Fail("TBuf::GetWithOffset", "bufOffset %u bytes is not 32-byte aligned", bufOffset);
        if (bufOffset * 8ull + static_cast<uint64_t>(size) * SizeOfBits<T>::value > len_ * 8ull)
            emu::Fail("TBuf::GetWithOffset", "offset %u + %u elements of %u bits exceed the buffer's %u bytes",
                      bufOffset, size, SizeOfBits<T>::value, len_);
        LocalTensor<T> t;
        t.EmuSet(reinterpret_cast<T *>(base_ + bufOffset), size, pos);
        return t;
    }
    template <typename T> void EnQue(const LocalTensor<T> &) {}
    template <typename T> LocalTensor<T> DeQue() { return Get<T>(); }
    template <typename T> void FreeTensor(LocalTensor<T> &) {}
    template <typename T> LocalTensor<T> AllocTensor() { return Get<T>(); }
};

class TPipe {
public:
    TPipe();
    ~TPipe();
    template <class T> bool InitBuffer(T &que, uint8_t num, uint32_t len)
    {
        Carve(que, T::kPos, num, len, "TPipe::InitBuffer(queue)");
        return true;
    }
    template <TPosition pos> bool InitBuffer(TBuf<pos> &buf, uint32_t len)
    {
        Carve(buf, pos, 1, len, "TPipe::InitBuffer(TBuf)");
        return true;
    }
    void Reset();
    // Waits for the M_MTE1 flags the constructor set (AIC), then PIPE_ALL; the buffers stay.
    void Destroy();
    void Init() { Reset(); }
    template <HardEvent evt> TEventID AllocEventID() { return AllocId(evt, true); }
    template <HardEvent evt> void ReleaseEventID(TEventID id) { ReleaseId(evt, id); }
    template <HardEvent evt> TEventID FetchEventID() { return AllocId(evt, false); }
    TEventID FetchEventID(HardEvent evt) { return AllocId(evt, false); }

private:
    void Carve(TQueBindBase &q, TPosition pos, uint32_t num, uint32_t len, const char *api);
    TEventID AllocId(HardEvent evt, bool mark);
    void ReleaseId(HardEvent evt, TEventID id);
    uint64_t used_[static_cast<int>(emu::Buf::COUNT)] = {};
    uint32_t buffers_ = 0;
    uint8_t eventUsed_[static_cast<int>(HardEvent::MAX)] = {};
    bool presetPending_ = false;  // the constructor's M_MTE1 sets not yet waited for
};

}  // namespace AscendC
