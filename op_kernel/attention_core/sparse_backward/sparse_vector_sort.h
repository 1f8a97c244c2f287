// SparseBackwardVector (sparse_backward_vector.h): the selection sort of pass 1 and of the main
// loop (sortSelection), the merge of a pair item's halves (pairTokens) and the search for a
// list's first negative entry. Included by sparse_backward_vector.h after the class.
#pragma once

namespace AttentionCore {

// A sorted half read two entries per scalar access: Next gives its entries in order, then
// -1 from the first negative one or one at or past the token's reach on.
struct SparseMergeReader {
    AscendC::LocalTensor<int64_t> list;
    uint32_t count;
    uint32_t i;
    uint64_t pair;
    __aicore__ inline int32_t Next(int64_t reach)
    {
        if (i >= count) {
            return -1;
        }
        if ((i & 1) == 0) {
            pair = static_cast<uint64_t>(list.GetValue(i / 2));
        }
        const int32_t v = static_cast<int32_t>(static_cast<uint32_t>((i & 1) != 0 ? pair >> 32 : pair));
        if (v < 0 || v >= reach) {
            i = count;
            return -1;
        }
        ++i;
        return v;
    }
};

// Pass 1, sortSelection: the lists needed first (SparseSortedInLoop), into both tables:
// vector core 0 of the lowest core starting in a token sorts that token, vector core 1 its
// core's second token when the core holds it whole. One sort at most per vector core.
template <typename T> __aicore__ inline void SparseBackwardVector<T>::SortFirstSelections()
{
    const uint64_t b = p_->coreTokenStart[core_];
    const uint64_t t = sub_ == 0 ? b : b + 1;
    const bool mine = sub_ == 0 ? b < p_->t1 && (core_ == 0 || p_->coreTokenStart[core_ - 1] != b)
                                : t < p_->coreTokenStart[core_ + 1];
    if (mine) {
        SortSelection(t, true);
    }
    sortedUpTo_ = b + 1;
}

// The main loop's sorts: every token up to `upto` this core sorts in the loop, while no
// walk of this vector core reads the index buffer (before a token opens), then
// FLAG_SPARSE_SORTED to the cube. Opening token t sorts t + 1: its list is stored while
// the cube still works on t, a token before it walks t + 1.
template <typename T> __aicore__ inline void SparseBackwardVector<T>::SortAhead(uint64_t upto)
{
    if (p_->sortSelection == 0) {
        return;
    }
    for (; sortedUpTo_ < upto && sortedUpTo_ + 1 < p_->t1; ++sortedUpTo_) {
        const uint64_t t = sortedUpTo_ + 1;
        if (!SparseSortedInLoop(p_, core_, t)) {
            continue;
        }
        AscendC::PipeBarrier<PIPE_ALL>();  // the gathers and casts left the stagings
        SortSelection(t, false);
        AscendC::PipeBarrier<PIPE_ALL>();  // the list is stored, the stagings free again
        AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FLAG_SPARSE_SORTED);
    }
}

// Token t's selection sorted into this vector core's table (both: into both tables). Its
// entries before the first negative one (at most Entries(), the ones the walk may read)
// are sorted ascending by value: key = 0x7F000000 - index read as a float (a positive normal number, larger for
// smaller indices: Sort orders descending); the entries from the first negative one on
// become -1 with the key -1.0f and sort last. The indices ride along as Sort's uint32
// index and come back in order from Extract; the first -1 ends the walk there as before.
// Any order of the entries selects the same rows, so the result does not depend on it.
// A pair item (pairTokens): each token's half sorted on its own (the first into the index
// buffer's upper half, the second in Sort's tmp), then merged by the scalar unit into one
// list (MergeHalves): the walks read one entry per chunk row, as for a single token.
template <typename T> __aicore__ inline void SparseBackwardVector<T>::SortSelection(uint64_t t, bool both)
{
    const AscendC::LocalTensor<float> sorted = kStageBuf_.Get<float>();
    const AscendC::LocalTensor<uint32_t> out = sorted[p_->sortPad * 2].ReinterpretCast<uint32_t>();
    AscendC::LocalTensor<int32_t> list = out.ReinterpretCast<int32_t>();
    uint32_t count = 0;
    if (p_->pairTokens != 0) {
        const AscendC::LocalTensor<int32_t> first = idxBuf_.Get<int32_t>()[p_->sortPad];
        const uint32_t countA = SortList(t, 0, first.ReinterpretCast<uint32_t>());
        AscendC::PipeBarrier<PIPE_ALL>();
        const uint32_t countB = SortList(t, 1, out);
        list = sorted.ReinterpretCast<int32_t>();  // free once Extract is done
        // Every entry the walk may read is written in this launch: -1 under the merge.
        if (countA + countB != 0) {
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Duplicate(list, static_cast<int32_t>(-1), static_cast<int32_t>(AlignUp(countA + countB, 8)));
        }
        PipeSync<AscendC::HardEvent::V_S>();
        count = MergeHalves(first, countA, out.ReinterpretCast<int32_t>(), countB, list);
        PipeSync<AscendC::HardEvent::S_MTE3>();
    } else {
        count = SortList(t, 0, out);
    }
    if (count == 0) {
        return;  // the walk reads nothing for this token
    }
    PipeSync<AscendC::HardEvent::V_MTE3>();
    // All the entries the walk may read: the sorted valid ones, then -1 (it stops there).
    const uint64_t table = p_->t1 * p_->topK;
    for (uint32_t k = both ? 0 : sub_; k <= (both ? 1 : sub_); ++k) {
        AscendC::DataCopyPad(sorted_[k * table + t * p_->topK], list,
                             AscendC::DataCopyExtParams(1, count * 4, 0, 0, 0));
    }
}

// The two sorted halves of a pair item (a: countA entries, b: countB, ascending, -1 or an
// index at or past the token's reach ending each) merged into `dst` as entries idx * 4 +
// sel (sel bit 0: token 0 of the pair selects row idx, bit 1: token 1; equal indices of the
// two halves give one entry, repeats within a half stay apart) over `dst` filled with -1;
// returns the entries to store: all countA + countB (as far as the walk may read).
template <typename T>
__aicore__ inline uint32_t SparseBackwardVector<T>::MergeHalves(const AscendC::LocalTensor<int32_t> &a, uint32_t countA,
                                                                const AscendC::LocalTensor<int32_t> &b, uint32_t countB,
                                                                const AscendC::LocalTensor<int32_t> &dst)
{
    const int64_t reach = raw_.Reach();
    // The scalar unit moves 8 bytes per access: two entries per read and per write.
    SparseMergeReader ra{a.ReinterpretCast<int64_t>(), countA, 0, 0};
    SparseMergeReader rb{b.ReinterpretCast<int64_t>(), countB, 0, 0};
    const AscendC::LocalTensor<int64_t> out = dst.ReinterpretCast<int64_t>();
    uint32_t m = 0;
    uint64_t low = 0;  // entry m - 1 while m is odd
    int32_t x = ra.Next(reach);
    int32_t y = rb.Next(reach);
    while (x >= 0 || y >= 0) {
        const bool takeA = x >= 0 && (y < 0 || x <= y);
        const bool takeB = y >= 0 && (x < 0 || y <= x);
        const int32_t v = (takeA ? x : y) * 4 + (takeA ? 1 : 0) + (takeB ? 2 : 0);
        if ((m & 1) == 0) {
            low = static_cast<uint32_t>(v);
        } else {
            out.SetValue(m / 2, static_cast<int64_t>(low | (static_cast<uint64_t>(static_cast<uint32_t>(v)) << 32)));
        }
        ++m;
        if (takeA) {
            x = ra.Next(reach);
        }
        if (takeB) {
            y = rb.Next(reach);
        }
    }
    // The entries past m are the -1s `dst` was filled with (an odd count's last entry goes
    // out with the -1 after it in one 8-byte store). All of the room is stored: a walk's part
    // may start past the union (parts are planned on an estimate) and must read -1 there,
    // never what the workspace held before.
    if ((m & 1) != 0) {
        out.SetValue(m / 2, static_cast<int64_t>(low | (0xFFFFFFFFull << 32)));
    }
    return countA + countB;
}

// One list sorted: the token's row, or half h of pair item t (pairTokens); Extract's
// indices into `dst`; returns the entries (0: none).
template <typename T>
__aicore__ inline uint32_t SparseBackwardVector<T>::SortList(uint64_t t, uint32_t h,
                                                             const AscendC::LocalTensor<uint32_t> &dst)
{
    constexpr int32_t keyBias = 0x7F000000;
    constexpr int32_t keyLast = static_cast<int32_t>(0xBF800000u);  // -1.0f
    const AscendC::LocalTensor<int32_t> idx = idxBuf_.Get<int32_t>();
    const AscendC::LocalTensor<int32_t> key = vStageBuf_.Get<int32_t>();
    const AscendC::LocalTensor<float> keyF = key.ReinterpretCast<float>();
    AscendC::LocalTensor<float> sorted = kStageBuf_.Get<float>();
    AscendC::LocalTensor<float> tmp = sorted[p_->sortPad * 2];
    PipeSync<AscendC::HardEvent::V_MTE2>();  // the previous token's keys were read
    if (p_->pairTokens != 0) {
        raw_.SetTokenHalf(t, h);  // its first Entries() indices -> idx
    } else {
        raw_.SetToken(t);
    }
    const uint32_t count = raw_.Entries();
    if (count == 0) {
        return 0;  // the walk reads nothing for this token
    }
    const uint32_t valid = ValidEntries(idx, count, sorted.ReinterpretCast<int32_t>());
    PipeSync<AscendC::HardEvent::S_V>();  // (INT64) the narrowed row
    const uint32_t reps = (count + 31) / 32;
    const int32_t span = static_cast<int32_t>(reps * 32);
    PipeSync<AscendC::HardEvent::MTE2_V>();
    // Indices past any KV length are skipped by the walk whatever their value: clamping
    // them keeps every key of a non-negative index a positive normal float.
    AscendC::Mins(idx, idx, SORT_INDEX_CAP, span);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Muls(key, idx, static_cast<int32_t>(-1), span);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Adds(key, key, keyBias, span);
    PipeSync<AscendC::HardEvent::V_S>();
    const uint32_t aligned = AlignUp(valid, 8);  // Duplicate starts on a 32-byte block
    for (uint32_t e = valid; e < aligned && e < static_cast<uint32_t>(span); ++e) {
        key.SetValue(e, keyLast);
        idx.SetValue(e, -1);
    }
    PipeSync<AscendC::HardEvent::S_V>();
    if (aligned < static_cast<uint32_t>(span)) {
        AscendC::Duplicate(key[aligned], keyLast, span - static_cast<int32_t>(aligned));
        AscendC::Duplicate(idx[aligned], static_cast<int32_t>(-1), span - static_cast<int32_t>(aligned));
    }
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Sort<float, true>(sorted, keyF, idx.ReinterpretCast<uint32_t>(), tmp, static_cast<int32_t>(reps));
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Extract(keyF, dst, sorted, static_cast<int32_t>(reps));
    return count;
}

// Entries before the first negative one among the first `count` of the row in `idx`.
// INT32: found by the vector unit in integer arithmetic (`scratch`: 2 x sortPad int32):
// v[i] = i where idx[i] < 0, i + 2^24 elsewhere, folded by Min down to 8 values that the
// scalar unit reads (not each entry; positions past `count` only give values >= count).
// An INT64 row is narrowed to INT32 in place on the way (entry e's 4 bytes land at 4e,
// below every entry not yet read), indices above SORT_INDEX_CAP as SORT_INDEX_CAP: past any
// KV length like the originals, so the walk skips them alike.
template <typename T>
__aicore__ inline uint32_t SparseBackwardVector<T>::ValidEntries(const AscendC::LocalTensor<int32_t> &idx,
                                                                 uint32_t count,
                                                                 const AscendC::LocalTensor<int32_t> &scratch)
{
    uint32_t valid = 0;
    if (p_->index64 == 0) {
        constexpr int32_t far = 1 << 24;  // above any position (topK <= 255 x 32)
        const uint32_t span = AlignUp(count, 8);
        const AscendC::LocalTensor<int32_t> ramp = scratch;
        const AscendC::LocalTensor<int32_t> v = scratch[p_->sortPad];
        PipeSync<AscendC::HardEvent::V_S>();  // the previous token's sort left `scratch`
        for (int32_t i = 0; i < 8; ++i) {
            ramp.SetValue(i, i);
        }
        PipeSync<AscendC::HardEvent::S_V>();
        PipeSync<AscendC::HardEvent::MTE2_V>();   // the index row landed
        for (uint32_t w = 8; w < span; w *= 2) {  // ramp[w + i] = ramp[i] + w
            AscendC::Adds(ramp[w], ramp, static_cast<int32_t>(w), static_cast<int32_t>(span - w < w ? span - w : w));
            AscendC::PipeBarrier<PIPE_V>();
        }
        const int32_t n = static_cast<int32_t>(span);
        AscendC::Mins(v, idx, 0, n);  // -1 for a negative entry, 0 otherwise
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Maxs(v, v, -1, n);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Muls(v, v, far, n);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Adds(v, v, far, n);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Add(v, v, ramp, n);
        AscendC::PipeBarrier<PIPE_V>();
        uint32_t len = span;
        while (len > 8) {
            const uint32_t half = AlignUp(len / 2, 8);
            AscendC::Min(v, v, v[half], static_cast<int32_t>(len - half));
            AscendC::PipeBarrier<PIPE_V>();
            len = half;
        }
        PipeSync<AscendC::HardEvent::V_S>();
        valid = count;
        for (uint32_t i = 0; i < len; ++i) {
            const int32_t x = v.GetValue(i);
            valid = static_cast<uint32_t>(x) < valid ? static_cast<uint32_t>(x) : valid;
        }
        return valid;
    }
    const AscendC::LocalTensor<int64_t> wide = idx.ReinterpretCast<int64_t>();
    for (; valid < count; ++valid) {
        const int64_t v = wide.GetValue(valid);
        if (v < 0) {
            break;
        }
        idx.SetValue(valid, v > SORT_INDEX_CAP ? SORT_INDEX_CAP : static_cast<int32_t>(v));
    }
    return valid;
}

}  // namespace AttentionCore
