// MaskMod seam: which (query row, key) pairs take part. Included by policies.h.
#pragma once
#include "../common/sync.h"

namespace AttentionCore {

template <class Tag> struct MaskMod {
    static_assert(AlwaysFalse<Tag>::value, "MaskMod: this mask mode is not implemented");
};

// PFA (sparse mode 0): an optional 1-byte mask tensor (non-zero = excluded) and, only when
// that mask is given, the left-up band  row - preTokens <= key <= row + nextTokens.
// The band bounds the key range of a unit (blocks outside it are never computed); inside the
// computed blocks the band and the tensor are applied element-wise by the vector core.
template <> struct MaskMod<MaskTensorBand> : MaskModBase {
    using Params = MaskBandParams;
    using Tensors = MaskTensors;
    template <class Tiling, class GmTensors> __aicore__ inline void Init(const Tiling &tiling, const GmTensors &t)
    {
        p_ = &tiling.mask;
        if (p_->hasMask != 0) {
            mask_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t *>(t.mask.mask));
        }
        headsInRow_ = HeadsInRow(tiling, 0);
    }

    // Whether the units come with the heads of a q-block in a row (ForwardParams::foldQBlocks
    // UNITS_HEADS_INNER, also set with UNITS_PAIRED); false for a tiling without the params.
    template <class Tiling>
    __aicore__ inline static auto HeadsInRow(const Tiling &tiling, int) -> decltype(tiling.params.foldQBlocks, bool())
    {
        return (tiling.params.foldQBlocks & UNITS_HEADS_INNER) != 0;
    }
    template <class Tiling> __aicore__ inline static bool HeadsInRow(const Tiling &, long) { return false; }

    // Keys visible to any valid row of the unit; an empty range means "no block to compute".
    __aicore__ inline void KvRange(WorkUnit &u) const
    {
        u.kvBegin = 0;
        u.kvEnd = u.qValid == 0 ? 0 : static_cast<int64_t>(p_->seqKv);
        if (p_->bandActive != 0 && u.qValid != 0) {
            const int64_t lo = static_cast<int64_t>(u.q0) - p_->preTokens;
            const int64_t hi = static_cast<int64_t>(u.q0 + u.qValid - 1) + p_->nextTokens + 1;
            u.kvBegin = lo > u.kvBegin ? lo : u.kvBegin;
            u.kvEnd = hi < u.kvEnd ? hi : u.kvEnd;
        }
        if (u.kvEnd < u.kvBegin) {
            u.kvEnd = u.kvBegin;
        }
    }

    __aicore__ inline bool LoadsRows() const { return p_->hasMask != 0; }

    __aicore__ inline bool HasRowsBefore() const { return p_->bandActive != 0; }

    // MaskModBase::RowsBefore: row r sees no key from k0 on when r + nextTokens < k0.
    __aicore__ inline uint32_t RowsBefore(const WorkUnit &u, uint32_t row0, uint32_t rows, int64_t k0) const
    {
        (void)u;
        if (p_->bandActive == 0) {
            return 0;
        }
        const int64_t n = k0 - p_->nextTokens - static_cast<int64_t>(row0);
        return n <= 0 ? 0 : (n >= static_cast<int64_t>(rows) ? rows : static_cast<uint32_t>(n));
    }

    // MaskModBase::KeysSeen: row r sees keys before r + nextTokens + 1 (ApplyBand kills the rest).
    __aicore__ inline uint32_t KeysSeen(const WorkUnit &u, uint32_t lastRow, int64_t k0, uint32_t cols) const
    {
        (void)u;
        if (p_->bandActive == 0) {
            return cols;
        }
        const int64_t n = static_cast<int64_t>(lastRow) + p_->nextTokens + 1 - k0;
        return n <= 0 ? 0 : (n >= static_cast<int64_t>(cols) ? cols : static_cast<uint32_t>(n));
    }

    // The mask rows of a block (Apply's arguments) into maskBytes ahead of its Apply, so the
    // load overlaps the vector work before it; nothing when the summary marks them all clear.
    // A tile an earlier head found clear (CLEAR_TILES) loads nothing.
    __aicore__ inline void Load(const AscendC::LocalTensor<uint8_t> &maskBytes, const WorkUnit &u, uint32_t row0,
                                uint32_t rows, int64_t k0, uint32_t colsValid, uint32_t cols)
    {
        if (p_->hasMask == 0) {
            return;
        }
        if (p_->strides.n == 0) {
            pending_ = TileAt(u, row0, k0);
            pendingShape_ = (rows << 16) | colsValid;
            pendingSlot_ = TileSlot(u, row0, k0, cols);
            if (clearAt_[pendingSlot_] == pending_ && clearShape_[pendingSlot_] == pendingShape_) {
                known_ = true;
                return;
            }
        }
        LoadTensorMask(mask_, p_->strides, maskBytes, u, row0, rows, k0, colsValid, cols);
        loaded_ = true;
    }

    // s: rows x cols fp32 scores (row pitch cols) of query rows [row0, row0 + rows) and keys
    // [k0, k0 + colsValid); columns >= colsValid are padding. Excluded entries become
    // MASKED_SCORE (or lower). tmp (rows x cols fp32) and maskBytes (rows x cols) are scratch;
    // maskHalf (the P buffer) is left alone.
    __aicore__ inline void Apply(const AscendC::LocalTensor<float> &s, const AscendC::LocalTensor<float> &tmp,
                                 const AscendC::LocalTensor<uint8_t> &maskBytes,
                                 const AscendC::LocalTensor<half> &maskHalf, const WorkUnit &u, uint32_t row0,
                                 uint32_t rows, int64_t k0, uint32_t colsValid, uint32_t cols) const
    {
        (void)maskHalf;
        if (p_->hasMask != 0 && !known_) {
            const bool loaded = loaded_;
            if (!loaded) {
                LoadTensorMask(mask_, p_->strides, maskBytes, u, row0, rows, k0, colsValid, cols);
            }
            const bool shared = loaded && p_->strides.n == 0;
            // where the next head's units of a q-block come to this core (headsInRow_), a tile
            // the band cuts is checked inside the band: the later heads then skip it
            const bool inBand = shared && headsInRow_ && BandCuts(row0, rows, k0, colsValid);
            const LeftUpBand band{static_cast<int64_t>(row0) - k0, p_->preTokens, p_->nextTokens, colsValid};
            const bool any = AddTensorMask(s, tmp, maskBytes, rows, cols, band, inBand);
            if (shared && !any) {  // Load's tile is clear (or clear inside the band) for every head
                clearAt_[pendingSlot_] = pending_;
                clearShape_[pendingSlot_] = pendingShape_;
            }
            loaded_ = false;
        }
        known_ = false;
        ApplyBand(s, row0, rows, k0, colsValid, cols);
    }

    // Whether the band kills some score of the tile (rows [row0, row0 + rows) x keys [k0, k0 +
    // colsValid)): its first row ends before the tile's last key, or its last row starts after
    // the tile's first key.
    __aicore__ inline bool BandCuts(uint32_t row0, uint32_t rows, int64_t k0, uint32_t colsValid) const
    {
        if (p_->bandActive == 0 || rows == 0) {
            return false;
        }
        const int64_t first = static_cast<int64_t>(row0) - k0;
        return first + p_->nextTokens + 1 < static_cast<int64_t>(colsValid) ||
               first + static_cast<int64_t>(rows) - 1 - p_->preTokens > 0;
    }

    // Clear tiles (a mask plane the heads share, strides.n == 0): the mask rows Load read
    // (their plane offset and rows x columns) whose bytes Apply found all zero. The host orders
    // the units so a core takes the heads of a q-block in a row (ForwardParams::foldQBlocks
    // UNITS_HEADS_INNER), or of a folded pair of q-blocks (UNITS_PAIRED): the later heads then
    // load and fold the mask rows of the diagonal tiles only. A direct-mapped table; a slot
    // holds the tile last found clear there.
    static constexpr uint32_t CLEAR_TILES = 256;
    __aicore__ inline uint64_t TileAt(const WorkUnit &u, uint32_t row0, int64_t k0) const
    {
        return u.b * p_->strides.b + row0 * p_->strides.s + static_cast<uint64_t>(k0);
    }
    __aicore__ inline uint32_t TileSlot(const WorkUnit &u, uint32_t row0, int64_t k0, uint32_t cols) const
    {
        // the key block, the sub-block by its first row (a core's sub-blocks differ there), and
        // which half of the rows the q-block starts in: the two q-blocks of a folded pair
        // (UNITS_PAIRED) take the two halves of the table, so up to 32 key blocks of one
        // outlive the other's unit between two heads
        const uint32_t half = 2 * static_cast<uint64_t>(u.q0) >= p_->seqQ ? CLEAR_TILES / 2 : 0;
        return static_cast<uint32_t>(k0 / cols * 4 + (row0 - u.q0) / 8 % 4 + half) % CLEAR_TILES;
    }

    // The band (bandActive) and the padding columns past colsValid of Apply's scores.
    __aicore__ inline void ApplyBand(const AscendC::LocalTensor<float> &s, uint32_t row0, uint32_t rows, int64_t k0,
                                     uint32_t colsValid, uint32_t cols) const
    {
        if (p_->bandActive == 0) {
            if (colsValid < cols) {
                KillColumns(s, colsValid, cols, rows, cols);
            }
            return;
        }
        const int64_t first = static_cast<int64_t>(row0) - k0;
        // No key of the tile before the band's left edge for any row (causal): its right edge
        // alone, a staircase of slope one (KillStaircase).
        if (colsValid == cols && cols % 64 == 0 && cols < 255 &&
            first + static_cast<int64_t>(rows) - 1 - p_->preTokens <= 0) {
            KillStaircase(s, rows, cols, first + p_->nextTokens + 1);
            return;
        }
        const LeftUpBand band{first, p_->preTokens, p_->nextTokens, colsValid};
        KillOutside(s, rows, cols, band);
    }

    // Every score of row r at columns >= a + r := MASKED_SCORE (rows x cols, cols a multiple of
    // 64). KillOutside takes about one Duplicate per row of a diagonal tile; here 8 rows take one
    // repeat for the two 8-column blocks the edge crosses (a repeat's 8 blocks on 8 rows: block
    // stride one row, a lane mask per row; the next repeat 8 rows down and 8 columns right,
    // where the same two masks apply) and one Duplicate per 64-column chunk right of them.
    __aicore__ inline static void KillStaircase(const AscendC::LocalTensor<float> &s, uint32_t rows, uint32_t cols,
                                                int64_t a)
    {
        const int64_t n = rows, c = cols;
        const int64_t full = a > 0 ? 0 : (1 - a < n ? 1 - a : n);            // rows that lose every column
        const int64_t none = c - a < full ? full : (c - a < n ? c - a : n);  // rows from here lose none
        if (full != 0) {
            KillColumns(s, 0, cols, static_cast<uint32_t>(full), cols);
        }
        // whole 8-row groups whose edge blocks lie inside the row: g0 * 8 >= full, a + 8 g + 15 < c
        const int64_t g0 = (full + 7) / 8;
        int64_t g1 = none / 8;
        if (g1 > (c - 16 - a) / 8 + 1) {
            g1 = (c - 16 - a) / 8 + 1;
        }
        while (g1 > g0 && (a + 8 * (g1 - 1)) / 8 * 8 + 16 > c) {
            --g1;
        }
        for (int64_t r = full; r < none; ++r) {  // rows outside those groups, one at a time
            if (g1 > g0 && r == g0 * 8) {
                r = g1 * 8 - 1;
                continue;
            }
            KillColumns(s[static_cast<uint32_t>(r) * cols], static_cast<uint32_t>(a + r), cols, 1, cols);
        }
        if (g1 <= g0) {
            AscendC::PipeBarrier<PIPE_V>();
            return;
        }
        const int64_t m = (a + 8 * g0) % 8;
        uint64_t edge[2] = {0, 0};  // block A (the edge's first 8 columns) and block B (the next 8)
        for (int64_t i = 0; i < 8; ++i) {
            const uint64_t laneA = m + i < 8 ? (0xFFULL << (m + i)) & 0xFFULL : 0;
            const uint64_t laneB = m + i <= 8 ? 0xFFULL : (0xFFULL << (m + i - 8)) & 0xFFULL;
            edge[0] |= laneA << (8 * i);
            edge[1] |= laneB << (8 * i);
        }
        const uint32_t col0 = static_cast<uint32_t>((a + 8 * g0) / 8 * 8);
        const uint32_t at = static_cast<uint32_t>(g0 * 8) * cols + col0;
        for (uint32_t b = 0; b < 2; ++b) {
            uint64_t lanes[2] = {edge[b], 0};
            AscendC::Duplicate(s[at + 8 * b], MASKED_SCORE, lanes, static_cast<uint8_t>(g1 - g0),
                               static_cast<uint16_t>(cols / 8), static_cast<uint8_t>(cols + 1));
        }
        for (int64_t g = g0; g < g1; ++g) {  // right of the two blocks
            const uint32_t from = static_cast<uint32_t>((a + 8 * g) / 8 * 8 + 16);
            if (from < cols) {
                KillColumns(s[static_cast<uint32_t>(g * 8) * cols], from, cols, 8, cols);
            }
        }
        AscendC::PipeBarrier<PIPE_V>();
    }

    // The visible columns [lo, hi) of row r of a tile whose row 0 is `first` columns after its
    // first key: the left-up band, clamped to the tile's valid columns.
    struct LeftUpBand {
        int64_t first, pre, next;
        uint32_t colsValid;
        __aicore__ inline void operator()(uint32_t r, int64_t &lo, int64_t &hi) const
        {
            const int64_t row = first + static_cast<int64_t>(r);
            lo = row - pre < 0 ? 0 : row - pre;
            hi = row + next + 1 > static_cast<int64_t>(colsValid) ? static_cast<int64_t>(colsValid) : row + next + 1;
        }
    };

    // The helpers below are shared with MaskMod<MaskSparseMode> (varlen_policies.h).
    // Every score of row r outside [lo, hi) (band(r, lo, hi); all of the row when hi <= lo) :=
    // MASKED_SCORE. Per 64-column chunk a run of rows that lose all of it takes one Duplicate
    // (a repeat per row) and a row that loses part of it one with a lane mask, so the staircase
    // of a diagonal tile costs about one instruction per row instead of one per row and chunk.
    template <class Band>
    __aicore__ inline static void KillOutside(const AscendC::LocalTensor<float> &s, uint32_t rows, uint32_t cols,
                                              const Band &band)
    {
        FillOutside(s, rows, cols, band, MASKED_SCORE);
    }

    // KillOutside with any fill value and element type (a chunk of 64 columns, one repeat per
    // row with the lanes of the chunk).
    template <typename E, class Band>
    __aicore__ inline static void FillOutside(const AscendC::LocalTensor<E> &s, uint32_t rows, uint32_t cols,
                                              const Band &band, E value)
    {
        for (uint32_t c0 = 0; c0 < cols; c0 += 64) {
            const int64_t w = cols - c0 < 64 ? cols - c0 : 64;
            const uint64_t all = LanesBelow(w);
            uint32_t run = 0;  // the rows just before r that lose the whole chunk
            for (uint32_t r = 0; r <= rows; ++r) {
                uint64_t lanes = 0;
                if (r < rows) {
                    int64_t lo = 0;
                    int64_t hi = 0;
                    band(r, lo, hi);
                    lanes = hi <= lo ? all : all & (LanesBelow(lo - c0) | ~LanesBelow(hi - c0));
                    if (lanes == all) {
                        ++run;
                        continue;
                    }
                }
                if (run != 0) {
                    FillLanes(s[(r - run) * cols + c0], all, run, cols, value);
                    run = 0;
                }
                if (lanes != 0) {
                    FillLanes(s[r * cols + c0], lanes, 1, cols, value);
                }
            }
        }
        AscendC::PipeBarrier<PIPE_V>();
    }

    // Lanes [0, n) of a 64-lane chunk (n clamped to [0, 64]).
    __aicore__ inline static uint64_t LanesBelow(int64_t n)
    {
        return n <= 0 ? 0ULL : (n >= 64 ? ~0ULL : (1ULL << n) - 1ULL);
    }

    // The lanes of `rows` rows (pitch cols) from s := value.
    template <typename E>
    __aicore__ inline static void FillLanes(const AscendC::LocalTensor<E> &s, uint64_t lanes, uint32_t rows,
                                            uint32_t cols, E value)
    {
        uint64_t mask[2] = {lanes, 0};
        AscendC::Duplicate(s, value, mask, static_cast<uint8_t>(rows), 1, static_cast<uint8_t>(cols * sizeof(E) / 32));
    }

    // Columns [from, to) of `rows` rows (pitch cols) := MASKED_SCORE, 64 fp32 lanes per repeat
    // with a lane bit mask for the partial first/last chunk (one repeat per row).
    __aicore__ inline static void KillColumns(const AscendC::LocalTensor<float> &s, uint32_t from, uint32_t to,
                                              uint32_t rows, uint32_t cols)
    {
        while (from < to) {
            const uint32_t chunk = from / 64 * 64;
            const uint32_t end = to < chunk + 64 ? to : chunk + 64;
            const uint64_t upper = (end - chunk) == 64 ? ~0ULL : ((1ULL << (end - chunk)) - 1ULL);
            const uint64_t lower = (1ULL << (from - chunk)) - 1ULL;
            uint64_t lanes[2] = {upper & ~lower, 0};
            AscendC::Duplicate(s[chunk], MASKED_SCORE, lanes, static_cast<uint8_t>(rows), 1,
                               static_cast<uint8_t>(cols / 8));
            from = end;
        }
    }

    // Event id (MTE2_V) of a mask load: Apply waits for it (sync.h's table).
    static constexpr int32_t EVT_MASK = VEC_EVT_MASK;

    // The mask bytes of query rows [row0, row0 + rows) and keys [k0, k0 + colsValid) into
    // maskBytes (row pitch cols) once the vector is done with it; raises MTE2_V EVT_MASK.
    __aicore__ inline static void LoadTensorMask(const AscendC::GlobalTensor<uint8_t> &maskGm,
                                                 const MaskStrides &strides,
                                                 const AscendC::LocalTensor<uint8_t> &maskBytes, const WorkUnit &u,
                                                 uint32_t row0, uint32_t rows, int64_t k0, uint32_t colsValid,
                                                 uint32_t cols)
    {
        const uint64_t offset = u.b * strides.b + u.n * strides.n + row0 * strides.s + static_cast<uint64_t>(k0);
        const uint32_t rowBlocks = (colsValid + 31) / 32;
        AscendC::DataCopyExtParams copy(static_cast<uint16_t>(rows), colsValid,
                                        static_cast<uint32_t>(strides.s - colsValid), cols / 32 - rowBlocks, 0);
        AscendC::DataCopyPadExtParams<uint8_t> pad(false, 0, 0, 0);
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(0);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(0);
        AscendC::DataCopyPad(maskBytes, maskGm[offset], copy, pad);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVT_MASK);
    }

    // s := MASKED_SCORE where the mask byte (loaded by LoadTensorMask) is non-zero (any
    // non-zero excludes): the bytes as half, one compare into a bit per score (kept where the
    // byte is 0), one select. Three vector passes per score (an additive mask takes four: two
    // casts, a multiply, an add). tmp holds both: the keep bits in its first bytes, the half
    // copy in its upper half. A tile without any excluded key (every block of a causal mask
    // left of its diagonal) skips the three passes (AnyExcluded). Returns whether any byte
    // excludes.
    __aicore__ inline static bool AddTensorMask(const AscendC::LocalTensor<float> &s,
                                                const AscendC::LocalTensor<float> &tmp,
                                                const AscendC::LocalTensor<uint8_t> &maskBytes, uint32_t rows,
                                                uint32_t cols)
    {
        return AddTensorMask(s, tmp, maskBytes, rows, cols, LeftUpBand{0, 0, 0, 0}, false);
    }

    // With inBand, a tile the band cuts (`band`: Apply's ApplyBand kills its excluded scores
    // after): whether any byte excludes inside the band. A causal mask's diagonal tile excludes
    // only what the band excludes: it then skips the cast, compare and select, and (a mask
    // plane the heads share) the later heads find it in the clear tiles and skip its load and
    // passes as well (InBandExcluded).
    template <class Band>
    __aicore__ inline static bool AddTensorMask(const AscendC::LocalTensor<float> &s,
                                                const AscendC::LocalTensor<float> &tmp,
                                                const AscendC::LocalTensor<uint8_t> &maskBytes, uint32_t rows,
                                                uint32_t cols, const Band &band, bool inBand)
    {
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVT_MASK);
        if (!AnyExcluded(tmp, maskBytes, rows, cols)) {
            return false;
        }
        if (inBand && !InBandExcluded(tmp, maskBytes, rows, cols, band)) {
            return false;
        }
        // whole 256-byte repeats of half (cols = blockKv is 64 or 128; rowsPerVec is even, so a
        // 64-column block's odd last row rounds up into the buffers)
        const uint32_t count = (rows * cols + 127) / 128 * 128;
        const AscendC::LocalTensor<uint8_t> keep = tmp.template ReinterpretCast<uint8_t>();
        const AscendC::LocalTensor<half> maskHalf = tmp[count / 2].template ReinterpretCast<half>();
        AscendC::Cast(maskHalf, maskBytes, AscendC::RoundMode::CAST_NONE, count);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::CompareScalar(keep, maskHalf, static_cast<half>(0.0f), AscendC::CMPMODE::EQ, count);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Select(s, keep, s, MASKED_SCORE, AscendC::SELMODE::VSEL_TENSOR_SCALAR_MODE, count);
        AscendC::PipeBarrier<PIPE_V>();
        return true;
    }

    // Whether a mask byte excludes a score inside the band (AddTensorMask's inBand), with only
    // integer work (a timing-only run branches alike). The bytes as uint16 outside the band go
    // to 0 in place (a run of rows that lose them all takes one Duplicate, a row at the edge one
    // with a lane mask); a uint16 at the band's edge also holds a byte inside it, which the
    // scalar unit reads first: if any of those excludes, the answer is yes and nothing changes.
    // Else the zeroed bytes are ones the band kills or zeros already, so the compare and select
    // that may follow give the same scores. The rest is or-folded as in AnyExcluded.
    template <class Band>
    __aicore__ inline static bool InBandExcluded(const AscendC::LocalTensor<float> &tmp,
                                                 const AscendC::LocalTensor<uint8_t> &maskBytes, uint32_t rows,
                                                 uint32_t cols, const Band &band)
    {
        for (uint32_t r = 0; r < rows; ++r) {
            int64_t lo = 0;
            int64_t hi = 0;
            band(r, lo, hi);
            if (hi > lo && (((hi & 1) != 0 && maskBytes.GetValue(r * cols + hi - 1) != 0) ||
                            ((lo & 1) != 0 && maskBytes.GetValue(r * cols + lo) != 0))) {
                return true;
            }
        }
        PipeSync<AscendC::HardEvent::S_V>();
        const AscendC::LocalTensor<uint16_t> words = maskBytes.template ReinterpretCast<uint16_t>();
        FillOutside(words, rows, cols / 2, WordBand<Band>{band}, static_cast<uint16_t>(0));
        return AnyNonZero(tmp.template ReinterpretCast<uint16_t>(), words, rows * cols / 2);
    }

    // A band in uint16 lanes of byte pairs: the lanes whose two bytes both lie inside it.
    template <class Band> struct WordBand {
        Band bytes;
        __aicore__ inline void operator()(uint32_t r, int64_t &lo, int64_t &hi) const
        {
            bytes(r, lo, hi);
            if (hi <= lo) {
                lo = 0;
                hi = 0;
                return;
            }
            lo = (lo + 1) / 2;
            hi = hi / 2;
        }
    };

    // Whether any of the rows x cols mask bytes is non-zero (padding columns past the valid
    // keys count too: a false "yes" only costs the three passes). The bytes as uint16 are
    // or-folded in halves (ping-pong between two areas of tmp) down to one 32-byte block, which
    // the scalar unit reads: ~log2(rows * cols / 32) short instructions, about 1/16 of a pass
    // over the fp32 scores, and one wait of the scalar unit for the vector pipe.
    __aicore__ inline static bool AnyExcluded(const AscendC::LocalTensor<float> &tmp,
                                              const AscendC::LocalTensor<uint8_t> &maskBytes, uint32_t rows,
                                              uint32_t cols)
    {
        const uint32_t area = rows * cols / 2;  // uint16 of the tile; cols is 64 or 128
        return AnyNonZero(tmp.template ReinterpretCast<uint16_t>(), maskBytes.template ReinterpretCast<uint16_t>(),
                          area);
    }

    // Whether any of the n uint16 of `from` (a multiple of 16) is non-zero:
    // or-folded in halves into work (ping-pong between offsets 0 and n) down to one 32-byte
    // block the scalar unit reads.
    __aicore__ inline static bool AnyNonZero(const AscendC::LocalTensor<uint16_t> &work,
                                             const AscendC::LocalTensor<uint16_t> &from, uint32_t n)
    {
        constexpr uint32_t BLOCK = 16;  // uint16 per 32-byte block
        AscendC::LocalTensor<uint16_t> cur = from;
        uint32_t blocks = n / BLOCK;
        uint32_t side = 0;
        while (blocks > 1) {
            // the first ceil(blocks/2) blocks | the last ones (they share the middle one if odd)
            const uint32_t keep = (blocks + 1) / 2;
            const AscendC::LocalTensor<uint16_t> dst = work[side * n];
            AscendC::Or(dst, cur, cur[(blocks - keep) * BLOCK], static_cast<int32_t>(keep * BLOCK));
            AscendC::PipeBarrier<PIPE_V>();
            cur = dst;
            side ^= 1u;
            blocks = keep;
        }
        PipeSync<AscendC::HardEvent::V_S>();
        const AscendC::LocalTensor<uint64_t> words = cur.template ReinterpretCast<uint64_t>();
        const uint64_t any = words.GetValue(0) | words.GetValue(1) | words.GetValue(2) | words.GetValue(3);
        PipeSync<AscendC::HardEvent::S_V>();
        return any != 0;
    }

protected:
    const MaskBandParams *p_ = nullptr;
    AscendC::GlobalTensor<uint8_t> mask_;
    mutable bool loaded_ = false;  // Load issued the next Apply's mask rows (Apply consumes them)
    mutable bool known_ = false;   // Load found the next Apply's rows in the clear tiles
    bool headsInRow_ = false;      // HeadsInRow: a core meets a tile again with the next head
    uint64_t pending_ = 0;         // the clear-tile key of the rows Load issued
    uint32_t pendingShape_ = 0, pendingSlot_ = 0;
    mutable uint64_t clearAt_[CLEAR_TILES] = {};
    mutable uint32_t clearShape_[CLEAR_TILES] = {};  // rows << 16 | columns; 0: empty
};

// PFA with a mask plane every (batch, head) shares (MaskBandParams::maskSummary, the tiling
// key's mode): MaskTensorBand plus the mask summary. Before the main loop the vector cores mark
// per 16 query rows x 128 keys whether any mask byte excludes; a block whose marks are all clear
// skips its mask load and passes and only gets the band.
template <> struct MaskMod<MaskTensorBandSummary> : MaskMod<MaskTensorBand> {
    using Params = MaskBandParams;
    using Tensors = MaskTensors;
    template <class Tiling, class GmTensors> __aicore__ inline void Init(const Tiling &tiling, const GmTensors &t)
    {
        MaskMod<MaskTensorBand>::Init(tiling, t);
        summary_.SetGlobalBuffer(reinterpret_cast<__gm__ uint8_t *>(t.workspace + p_->wsMaskSummary));
        summaryWords_.SetGlobalBuffer(reinterpret_cast<__gm__ uint64_t *>(t.workspace + p_->wsMaskSummary));
    }
    __aicore__ inline static constexpr bool HasPrepass() { return true; }

    __aicore__ inline void Load(const AscendC::LocalTensor<uint8_t> &maskBytes, const WorkUnit &u, uint32_t row0,
                                uint32_t rows, int64_t k0, uint32_t colsValid, uint32_t cols)
    {
        if (Clean(row0, rows, k0, colsValid)) {
            clean_ = true;
            return;
        }
        MaskMod<MaskTensorBand>::Load(maskBytes, u, row0, rows, k0, colsValid, cols);
    }

    __aicore__ inline void Apply(const AscendC::LocalTensor<float> &s, const AscendC::LocalTensor<float> &tmp,
                                 const AscendC::LocalTensor<uint8_t> &maskBytes,
                                 const AscendC::LocalTensor<half> &maskHalf, const WorkUnit &u, uint32_t row0,
                                 uint32_t rows, int64_t k0, uint32_t colsValid, uint32_t cols) const
    {
        const bool clean = clean_ || (!loaded_ && Clean(row0, rows, k0, colsValid));
        clean_ = false;
        if (clean) {
            ApplyBand(s, row0, rows, k0, colsValid, cols);
            return;
        }
        MaskMod<MaskTensorBand>::Apply(s, tmp, maskBytes, maskHalf, u, row0, rows, k0, colsValid, cols);
    }

    // The mask summary (MaskBandParams::maskSummary), built by every vector core of the launch
    // before the main loop (a SyncAll follows). Of each 16-row group only the key columns its
    // band reaches are read (the others' marks stay clear: the band kills those scores whatever
    // the mask holds), so a causal plane costs half a pass; each worker takes two shares of the
    // groups, one from either end, which evens out the band's triangle. `scratch` is any free
    // UB area of `bytes` bytes (the stage's buffers before the loop).
    __aicore__ inline void Prepare(const AscendC::LocalTensor<uint8_t> &scratch, uint32_t bytes, uint32_t worker,
                                   uint32_t workers)
    {
        if (worker >= workers) {
            return;  // workers past the plan: none
        }
        const uint32_t groups = (p_->seqQ + SUMMARY_ROWS - 1) / SUMMARY_ROWS;
        const uint32_t shares = 2 * workers;
        for (uint32_t part = 0; part < 2; ++part) {
            const uint32_t k = part == 0 ? worker : shares - 1 - worker;
            Summarise(scratch, bytes, groups * k / shares, groups * (k + 1) / shares);
        }
        PipeSync<AscendC::HardEvent::MTE3_V>();
    }

    // The marks of row groups [ga, gb). Per group and pass of `chunk` columns: the 16 mask rows
    // in, or-folded as uint16 into one row, each 128-byte column folded into its first 32-byte
    // block (two strided Ors), read by the scalar unit; the marks collect in UB (cleared per
    // batch) and go out in one copy per 32 groups. Only bitwise ops, so a timing-only run marks
    // the same blocks as a computed one.
    __aicore__ inline void Summarise(const AscendC::LocalTensor<uint8_t> &scratch, uint32_t bytes, uint32_t ga,
                                     uint32_t gb)
    {
        const uint32_t cols = p_->summaryCols;
        const uint32_t chunk = MaskSummaryChunk(bytes, cols);  // >= 1: the host checked
        const AscendC::LocalTensor<uint8_t> out = scratch;     // [column][SUMMARY_BATCH] marks
        const AscendC::LocalTensor<uint8_t> rowsArea = scratch[cols * SUMMARY_BATCH];
        const AscendC::LocalTensor<uint16_t> words = rowsArea.template ReinterpretCast<uint16_t>();
        const AscendC::LocalTensor<uint64_t> folded = rowsArea.template ReinterpretCast<uint64_t>();
        constexpr uint32_t COL_BLOCKS = SUMMARY_KEYS / 32;  // 32-byte blocks per column
        const AscendC::BinaryRepeatParams perCol(1, 1, 1, COL_BLOCKS, COL_BLOCKS, COL_BLOCKS);
        for (uint32_t gs = ga; gs < gb; gs += SUMMARY_BATCH) {
            const uint32_t batch = gb - gs < SUMMARY_BATCH ? gb - gs : SUMMARY_BATCH;
            PipeSync<AscendC::HardEvent::MTE3_V>();  // the last batch's marks left the UB
            AscendC::Duplicate(out.template ReinterpretCast<uint16_t>(), static_cast<uint16_t>(0),
                               static_cast<int32_t>(cols * SUMMARY_BATCH / 2));
            PipeSync<AscendC::HardEvent::V_S>();
            for (uint32_t g = gs; g < gs + batch; ++g) {
                const uint32_t row0 = g * SUMMARY_ROWS;
                const uint32_t rows = p_->seqQ - row0 < SUMMARY_ROWS ? p_->seqQ - row0 : SUMMARY_ROWS;
                uint32_t cLo = 0;
                uint32_t cHi = cols;
                BandColumns(row0, rows, cLo, cHi);
                for (uint32_t c0 = cLo; c0 < cHi; c0 += chunk) {
                    const uint32_t n = cHi - c0 < chunk ? cHi - c0 : chunk;
                    const uint32_t pitch = n * SUMMARY_KEYS;  // UB bytes per mask row
                    const uint64_t k0 = static_cast<uint64_t>(c0) * SUMMARY_KEYS;
                    const uint32_t keys = p_->seqKv - k0 < pitch ? static_cast<uint32_t>(p_->seqKv - k0) : pitch;
                    PipeSync<AscendC::HardEvent::S_MTE2>();  // the scalar reads of the last pass are done
                    if (rows < SUMMARY_ROWS || AlignUp(keys, 32) < pitch) {  // zero what the copy leaves
                        PipeSync<AscendC::HardEvent::S_V>();
                        AscendC::Duplicate(words, static_cast<uint16_t>(0),
                                           static_cast<int32_t>(SUMMARY_ROWS * pitch / 2));
                        PipeSync<AscendC::HardEvent::V_MTE2>();
                    }
                    AscendC::DataCopyExtParams copy(static_cast<uint16_t>(rows), keys,
                                                    static_cast<uint32_t>(p_->strides.s - keys),
                                                    (pitch - AlignUp(keys, 32)) / 32, 0);
                    AscendC::DataCopyPad(rowsArea, mask_[row0 * p_->strides.s + k0], copy,
                                         AscendC::DataCopyPadExtParams<uint8_t>(false, 0, 0, 0));
                    PipeSync<AscendC::HardEvent::MTE2_V>();
                    ZeroOutsideBand(rowsArea, row0, rows, k0, keys, pitch);
                    for (uint32_t span = SUMMARY_ROWS / 2; span >= 1; span /= 2) {  // 16 rows -> 1
                        AscendC::Or(words, words, words[span * pitch / 2], static_cast<int32_t>(span * pitch / 2));
                        AscendC::PipeBarrier<PIPE_V>();
                    }
                    for (uint32_t b = COL_BLOCKS / 2; b >= 1; b /= 2) {  // per column: 4 blocks -> 1
                        AscendC::Or(words, words, words[b * 16], static_cast<uint64_t>(b * 16), static_cast<uint8_t>(n),
                                    perCol);
                        AscendC::PipeBarrier<PIPE_V>();
                    }
                    PipeSync<AscendC::HardEvent::V_S>();
                    for (uint32_t j = 0; j < n; ++j) {
                        const uint32_t w = j * SUMMARY_KEYS / 8;
                        const uint64_t any = folded.GetValue(w) | folded.GetValue(w + 1) | folded.GetValue(w + 2) |
                                             folded.GetValue(w + 3);
                        out.SetValue((c0 + j) * SUMMARY_BATCH + (g - gs), any != 0 ? 1 : 0);
                    }
                }
            }
            PipeSync<AscendC::HardEvent::S_MTE3>();
            AscendC::DataCopyPad(summary_[gs], out,
                                 AscendC::DataCopyExtParams(static_cast<uint16_t>(cols), batch,
                                                            (SUMMARY_BATCH - AlignUp(batch, 32)) / 32,
                                                            p_->summaryPitch - batch, 0));
        }
    }

    // Before the fold: the bytes of a pass's rows (row0.., keys k0.., row pitch `pitch`) that lie
    // outside the band := 0, so a mark says whether a byte excludes a score the band keeps (every
    // block gets the band anyway, clear or not). A causal mask's diagonal tiles exclude only what
    // the band does: they are then clear, and the main loop loads no mask rows at all. The bytes
    // as uint16 in 64-lane chunks: a run of whole chunks (across rows) in one Duplicate, a partial
    // one with a lane mask; a lane at the band's edge also holds a byte inside it, so the scalar
    // unit zeroes its outside byte first. Integer work only (a timing-only run marks alike).
    __aicore__ inline void ZeroOutsideBand(const AscendC::LocalTensor<uint8_t> &area, uint32_t row0, uint32_t rows,
                                           uint64_t k0, uint32_t keys, uint32_t pitch) const
    {
        if (p_->bandActive == 0) {
            return;
        }
        const LeftUpBand band{static_cast<int64_t>(row0) - static_cast<int64_t>(k0), p_->preTokens, p_->nextTokens,
                              keys};
        PipeSync<AscendC::HardEvent::MTE2_S>();
        for (uint32_t r = 0; r < rows; ++r) {
            int64_t lo = 0;
            int64_t hi = 0;
            band(r, lo, hi);
            if (hi > lo && (lo & 1) != 0) {
                area.SetValue(r * pitch + static_cast<uint32_t>(lo) - 1, 0);
            }
            if (hi > lo && (hi & 1) != 0 && hi < static_cast<int64_t>(pitch)) {
                area.SetValue(r * pitch + static_cast<uint32_t>(hi), 0);
            }
        }
        PipeSync<AscendC::HardEvent::S_V>();
        const AscendC::LocalTensor<uint16_t> words = area.template ReinterpretCast<uint16_t>();
        const uint32_t lanes = pitch / 2;  // a multiple of 64
        const uint64_t all = ~0ULL;
        uint32_t runAt = 0;
        uint32_t runLen = 0;  // whole chunks to zero from runAt (lanes)
        for (uint32_t r = 0; r < rows; ++r) {
            int64_t lo = 0;
            int64_t hi = 0;
            band(r, lo, hi);
            const int64_t a = hi > lo ? lo / 2 : 0;  // the uint16 lanes [a, b) hold a byte inside
            const int64_t b = hi > lo ? (hi + 1) / 2 : 0;
            for (uint32_t c0 = 0; c0 < lanes; c0 += 64) {
                const uint64_t out = all & (LanesBelow(a - c0) | ~LanesBelow(b - c0));
                const uint32_t at = r * lanes + c0;
                if (out == all && runLen != 0 && runAt + runLen == at) {
                    runLen += 64;
                    continue;
                }
                if (runLen != 0) {
                    AscendC::Duplicate(words[runAt], static_cast<uint16_t>(0), static_cast<int32_t>(runLen));
                    runLen = 0;
                }
                if (out == all) {
                    runAt = at;
                    runLen = 64;
                } else if (out != 0) {
                    FillLanes(words[at], out, 1, 64, static_cast<uint16_t>(0));
                }
            }
        }
        if (runLen != 0) {
            AscendC::Duplicate(words[runAt], static_cast<uint16_t>(0), static_cast<int32_t>(runLen));
        }
        AscendC::PipeBarrier<PIPE_V>();
    }

    // The summary columns [cLo, cHi) whose keys some row of [row0, row0 + rows) sees in the band
    // (all of them without a band); cLo == cHi when none.
    __aicore__ inline void BandColumns(uint32_t row0, uint32_t rows, uint32_t &cLo, uint32_t &cHi) const
    {
        if (p_->bandActive == 0) {
            return;
        }
        const int64_t lo = static_cast<int64_t>(row0) - p_->preTokens;
        const int64_t hi = static_cast<int64_t>(row0 + rows - 1) + p_->nextTokens + 1;  // past the last key
        const int64_t kv = static_cast<int64_t>(p_->seqKv);
        const int64_t a = lo < 0 ? 0 : (lo > kv ? kv : lo);
        const int64_t b = hi < a ? a : (hi > kv ? kv : hi);
        cLo = static_cast<uint32_t>(a / SUMMARY_KEYS);
        cHi = b == a ? cLo : static_cast<uint32_t>((b + SUMMARY_KEYS - 1) / SUMMARY_KEYS);
    }

    // Whether the summary marks rows [row0, row0 + rows) x keys [k0, k0 + cols) all clear: one
    // or two scalar GM reads of 8 marks per 128-key column.
    __aicore__ inline bool Clean(uint32_t row0, uint32_t rows, int64_t k0, uint32_t cols) const
    {
        if (rows == 0 || cols == 0) {
            return true;  // nothing to mask
        }
        const uint32_t g0 = row0 / SUMMARY_ROWS;
        const uint32_t g1 = (row0 + rows - 1) / SUMMARY_ROWS;
        const uint32_t c0 = static_cast<uint32_t>(k0 / SUMMARY_KEYS);
        const uint32_t c1 = static_cast<uint32_t>((k0 + cols - 1) / SUMMARY_KEYS);
        for (uint32_t c = c0; c <= c1; ++c) {
            for (uint32_t w = g0 / 8; w <= g1 / 8; ++w) {
                const uint32_t lo = g0 > w * 8 ? g0 - w * 8 : 0;
                const uint32_t hi = g1 < w * 8 + 7 ? g1 - w * 8 : 7;
                const uint64_t bytes =
                    hi == 7 ? ~0ULL << (8 * lo) : ((1ULL << (8 * (hi + 1))) - 1) & (~0ULL << (8 * lo));
                if ((summaryWords_.GetValue(c * (p_->summaryPitch / 8) + w) & bytes) != 0) {
                    return false;
                }
            }
        }
        return true;
    }

private:
    AscendC::GlobalTensor<uint8_t> summary_;
    AscendC::GlobalTensor<uint64_t> summaryWords_;
    mutable bool clean_ = false;  // Load found the next Apply's rows clear in the summary
};

}  // namespace AttentionCore
