// BackwardVector (backward_vector.h): one step of the main loop, P and dS from the cube's S and
// dP with the forward's element-wise policies, and the add of the cube's dQ partial.
// Included by backward_vector.h after the class.
#pragma once

namespace AttentionCore {

// P and dS of step s, the core's step i (S/dP slot i % slots), from its row statistics in
// set i % 2 (loaded here for the first step, else by the step before); then the next
// step's statistics go into the other set while this step computes (its V work there
// ended before this step's loads), and so do the K/V prefetch reads.
template <typename T>
__aicore__ inline void BackwardVector<T>::Step(const BackwardStep &s, uint32_t i, const BackwardStep *next)
{
    const uint32_t slot = i % p_->slots, set = i % 2;
    const bool load = i == 0;
    const BackwardUnit &u = s.u;
    const uint32_t n = s.n, q0 = s.q0, rows = s.rows;
    const uint64_t f32Slot = slot * (p_->wsSlotF32 / 4);
    const uint64_t tSlot = BackwardPdsSlot(p_, slot, sizeof(T));
    uint32_t rowOff, mine;
    MyRows(rows, rowOff, mine);
    AscendC::CrossCoreWaitFlag(FLAG_BWD_SDP);
    PipeSync<AscendC::HardEvent::V_MTE2>();
    if (mine != 0) {
        const uint32_t c = p_->tileKv;
        const uint32_t bk = p_->blockKv;
        const int32_t count = static_cast<int32_t>(mine * c);
        // The S work (score, mask, exp) starts once S is in, under dP's copy (EVT_SDP + 1).
        AscendC::DataCopy(s_, wsS_[f32Slot + rowOff * bk], SlotRows(mine, 4, false));
        if (load) {
            LoadStepStats(s, set);
        }
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVT_SDP);
        AscendC::DataCopy(dp_, wsDp_[f32Slot + rowOff * bk], SlotRows(mine, 4, false));
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVT_SDP + 1);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVT_SDP);
        if (next != nullptr) {
            LoadStepStats(*next, set ^ 1u);
        }
        PrefetchKv(i);
        PipeSync<AscendC::HardEvent::MTE3_V>();  // the previous P/dS stores left the UB
        const AscendC::LocalTensor<float> rowMax = StatRows(set, STAT_MAX);
        const AscendC::LocalTensor<float> rowSum = StatRows(set, STAT_SUM);
        const AscendC::LocalTensor<float> rowD = StatRows(set, STAT_D);

        // P = exp(scale.(S + pse) - max) / sum; the mask turns excluded entries (and the
        // padding columns) into -1e30 before exp, so they, and rows without a visible key,
        // are 0.
        WorkUnit wu;
        wu.b = u.b;
        wu.n = n;
        wu.q0 = q0;
        wu.rows = rows;
        wu.qValid = rows;
        wu.kvBegin = u.k0;
        wu.kvEnd = u.k0 + u.cols;
        wu.qBase = u.qStart;
        wu.kvBase = u.kvStart;
        wu.seqQ = u.sq;
        wu.seqKv = u.sk;
        const uint32_t row0 = q0 + rowOff;
        ApplyScore(wu, row0, mine, u, count);
        RowOpTile<RowOp::Sub>(s_, rowMax, mine);
        // The tile's padding columns [cols, tileKv) go in one pass over all rows; the band
        // then sees the whole tile, so only rows the band cuts take a pass of their own
        // (with cols valid it would kill the padding row by row). A mask tensor is read for
        // the valid columns only. The mask's half scratch: the P-out buffer, written only
        // after the mask.
        const bool tensorMask = p_->mask.hasMask != 0 && p_->mask.sparseMode <= SPARSE_ALL_MASK;
        if (!tensorMask && u.cols < c) {
            MaskMod<MaskTensorBand>::KillColumns(s_, u.cols, c, mine, c);
        }
        mask_.Apply(s_, tmp_, maskBuf_.Get<uint8_t>(), pOutBuf_.Get<half>(), wu, row0, mine, u.k0,
                    tensorMask ? u.cols : c, c);
        AscendC::Exp(s_, s_, count);
        AscendC::PipeBarrier<PIPE_V>();
        RowOpTile<RowOp::Div>(s_, rowSum, mine);

        // dS = P o (keep.dP / keepProb - D); dV takes the dropped P (keep.P / keepProb).
        // The scale of dQ = scale.dS.K and dK = scale.dS^T.Q is applied in fp32 by the
        // cast-out pass (scaling dS before its rounding would push small values into fp16
        // subnormals).
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVT_SDP + 1);
        drop_.AfterExp(dp_, maskBuf_.Get<uint8_t>(), wu, row0, mine, u.k0, u.cols, c);
        RowOpTile<RowOp::Sub>(dp_, rowD, mine);
        AscendC::Mul(dp_, dp_, s_, count);
        AscendC::PipeBarrier<PIPE_V>();
        drop_.AfterExp(s_, maskBuf_.Get<uint8_t>(), wu, row0, mine, u.k0, u.cols, c);

        const AscendC::LocalTensor<T> pOut = pOutBuf_.Get<T>();
        const AscendC::LocalTensor<T> dsOut = dsOutBuf_.Get<T>();
        if constexpr (NzHandoff<T>::ENABLED) {  // P and dS in the cube's Nz order (nz_handoff.h)
            const AscendC::LocalTensor<T> nd = tmpBuf_.Get<T>();
            CastFromFloat(nd, s_, count);
            CastFromFloat(nd[count], dp_, count);
            AscendC::PipeBarrier<PIPE_V>();
            NzHandoff<T>::Arrange(pOut, nd, mine, bk, c);  // the slot's blockKv of the tile's tileKv columns
            NzHandoff<T>::Arrange(dsOut, nd[count], mine, bk, c);
            PipeSync<AscendC::HardEvent::V_MTE3>();
            NzHandoff<T>::Store(wsP_[tSlot], pOut, rowOff, mine, bk, p_->blockQ);
            NzHandoff<T>::Store(wsDs_[tSlot], dsOut, rowOff, mine, bk, p_->blockQ);
        } else {
            CastFromFloat(pOut, s_, count);
            CastFromFloat(dsOut, dp_, count);
            PipeSync<AscendC::HardEvent::V_MTE3>();
            AscendC::DataCopy(wsP_[tSlot + rowOff * bk], pOut, SlotRows(mine, sizeof(T), true));
            AscendC::DataCopy(wsDs_[tSlot + rowOff * bk], dsOut, SlotRows(mine, sizeof(T), true));
        }
    } else {
        if (next != nullptr) {
            LoadStepStats(*next, set ^ 1u);
        }
        PrefetchKv(i);
    }
    AscendC::CrossCoreSetFlag<2, PIPE_MTE3>(FlagBwdGrad(slot));
}

// The forward's element-wise policies, on their own Params embedded in BackwardParams
// (`score`, `mask`, `softmax`) and their own Tensors.
template <typename T> __aicore__ inline void BackwardVector<T>::InitPolicies(const BackwardTensors &t)
{
    struct {
        PseTensors score;
        SparseMaskTensors mask;
        DropoutTensors softmax;
    } ft;
    ft.score.pse = t.pse;
    ft.mask.mask = t.mask;
    ft.mask.prefix = t.prefix;
    ft.softmax.dropMask = t.dropMask;
    ft.softmax.cumSeqQ = t.seqQ;
    ft.softmax.cumSeqKv = t.seqKv;
    mask_.Init(*p_, ft);
    score_.Init(*p_, ft);
    drop_.Init(*p_, ft);
}

// S = scale.S plus the pse of its type (see BackwardParams).
template <typename T>
__aicore__ inline void BackwardVector<T>::ApplyScore(const WorkUnit &wu, uint32_t row0, uint32_t rows,
                                                     const BackwardUnit &u, int32_t count)
{
    if (p_->hasPse != 0 && p_->pseType != 1) {
        AscendC::Muls(s_, s_, p_->scaleValue, count);
        AscendC::PipeBarrier<PIPE_V>();
    }
    if (p_->hasPse != 0 && p_->pseType >= 2) {
        AddAlibi(wu, row0, rows, u);
        return;
    }
    // Type 1 adds the pse before the scale; type 0 (scaled above) adds it with scale 1.
    score_.Apply(s_, tmp_, pOutBuf_.Get<T>(), wu, row0, rows, u.k0, u.cols, p_->tileKv);
}

template <typename T>
__aicore__ inline void BackwardVector<T>::InitAlibi(const BackwardTensors &t, AscendC::TPipe *pipe, uint32_t bytes)
{
    slopes_.SetGlobalBuffer(reinterpret_cast<__gm__ float *>(t.pse));
    qStart_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(t.qStartIdx));
    kvStart_.SetGlobalBuffer(reinterpret_cast<__gm__ int64_t *>(t.kvStartIdx));
    pipe->InitBuffer(idxBuf_, bytes);
    const AscendC::LocalTensor<float> idx = idxBuf_.Get<float>();
    for (uint32_t i = 0; i < p_->tileKv; ++i) {
        idx.SetValue(i, static_cast<float>(i));
    }
    PipeSync<AscendC::HardEvent::S_V>();
}

template <typename T>
__aicore__ inline int64_t BackwardVector<T>::StartIndex(const AscendC::GlobalTensor<int64_t> &gm, uint32_t count,
                                                        uint32_t b) const
{
    return count == 0 ? 0 : gm.GetValue(count == 1 ? 0 : b);
}

// S[r][:] -= slope * |c - r - (Skv - Sq) - qStart + kvStart| (sqrt for type 3), per row on
// the key-index vector [0, tileKv).
template <typename T>
__aicore__ inline void BackwardVector<T>::AddAlibi(const WorkUnit &wu, uint32_t row0, uint32_t rows,
                                                   const BackwardUnit &u)
{
    const uint32_t c = p_->tileKv;
    const float slope = slopes_.GetValue(wu.b * p_->slopeStrideB + wu.n);
    const int64_t shift = u.k0 - (u.sk - u.sq) - StartIndex(qStart_, p_->qStartCount, wu.b) +
                          StartIndex(kvStart_, p_->kvStartCount, wu.b);
    const AscendC::LocalTensor<float> idx = idxBuf_.Get<float>();
    for (uint32_t r = 0; r < rows; ++r) {
        const AscendC::LocalTensor<float> line = tmp_[r * c];
        AscendC::Adds(line, idx, static_cast<float>(shift - static_cast<int64_t>(row0 + r)), c);
    }
    const int32_t count = static_cast<int32_t>(rows * c);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Abs(tmp_, tmp_, count);
    AscendC::PipeBarrier<PIPE_V>();
    if (p_->pseType == 3) {
        AscendC::Sqrt(tmp_, tmp_, count);
        AscendC::PipeBarrier<PIPE_V>();
    }
    AscendC::Muls(tmp_, tmp_, -slope, count);
    AscendC::PipeBarrier<PIPE_V>();
    AscendC::Add(s_, s_, tmp_, count);
    AscendC::PipeBarrier<PIPE_V>();
}

// `rows` 8-float stat rows of head n from token t: [T, N, 8] or [N, T, 8].
template <typename T>
__aicore__ inline void BackwardVector<T>::LoadStats(const AscendC::LocalTensor<float> &dst,
                                                    const AscendC::GlobalTensor<float> &src, uint64_t t, uint32_t n,
                                                    uint32_t rows, bool tnd)
{
    const uint64_t offset = tnd ? (t * p_->numHeads + n) * 8 : (n * p_->tq + t) * 8;
    const uint32_t gap = tnd ? (p_->numHeads - 1) * 32 : 0;
    AscendC::DataCopyPad(dst, src[offset], AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), 32, gap, 0, 0),
                         AscendC::DataCopyPadExtParams<float>(false, 0, 0, 0));
}

// Statistics set `set` (0/1), row kind `kind`: rowsPerVec rows of 8 replicated floats.
template <typename T>
__aicore__ inline AscendC::LocalTensor<float> BackwardVector<T>::StatRows(uint32_t set, uint32_t kind)
{
    return statBuf_.Get<float>()[(set * 3 + kind) * p_->rowsPerVec * 8];
}

// softmax max, sum and D of this core's rows of step s into statistics set `set`.
template <typename T> __aicore__ inline void BackwardVector<T>::LoadStepStats(const BackwardStep &s, uint32_t set)
{
    uint32_t rowOff, mine;
    MyRows(s.rows, rowOff, mine);
    if (mine == 0) {
        return;
    }
    const uint64_t t = s.u.qStart + s.q0 + rowOff;
    LoadStats(StatRows(set, STAT_MAX), max_, t, s.n, mine, (p_->statsTnd & 1u) != 0);
    LoadStats(StatRows(set, STAT_SUM), sum_, t, s.n, mine, (p_->statsTnd & 2u) != 0);
    LoadStats(StatRows(set, STAT_D), drow_, t, s.n, mine, true);
}

// x[r][:] op= stat[r] (8 replicated floats per row) over the tileKv columns.
template <typename T>
template <RowOp op>
__aicore__ inline void BackwardVector<T>::RowOpTile(const AscendC::LocalTensor<float> &x,
                                                    const AscendC::LocalTensor<float> &stat, uint32_t rows)
{
    RowBroadcast<op>(x, stat, rows, p_->tileKv, p_->tileKv);
}

// One copy of `rows` slot rows (blockKv apart in GM) <-> UB rows of tileKv columns, for
// elements of `bytes` bytes (blockKv a multiple of 16, so a row is whole 32-byte blocks in
// both dtypes; the UB side skips the tileKv - blockKv padding columns).
template <typename T>
__aicore__ inline AscendC::DataCopyParams BackwardVector<T>::SlotRows(uint32_t rows, uint32_t bytes, bool out) const
{
    const uint16_t len = static_cast<uint16_t>(p_->blockKv * bytes / 32);
    const uint16_t gap = static_cast<uint16_t>((p_->tileKv - p_->blockKv) * bytes / 32);
    return AscendC::DataCopyParams(static_cast<uint16_t>(rows), len, out ? gap : 0, out ? 0 : gap);
}

// dQ rows of this core's half of step s += the cube's dQ partial in dQ slot `slot`
// (rows x dqPitch fp32), in passes of as many rows as the scratch tmp_ holds (or, for a
// head dim wider than tmp_, row by row through s_).
template <typename T> __aicore__ inline void BackwardVector<T>::AddQueryGrad(const BackwardStep &s, uint32_t slot)
{
    AscendC::CrossCoreWaitFlag(FLAG_BWD_DQ);
    const uint32_t first = (s.rows + 1) / 2;
    const uint32_t rowOff = sub_ == 0 ? 0 : first;
    const uint32_t mine = sub_ == 0 ? first : s.rows - first;
    if (mine == 0) {
        return;
    }
    const uint32_t d = p_->headDim;
    const uint32_t pitch = p_->dqPitch;
    const uint32_t cells = p_->rowsPerVec * p_->tileKv;
    const bool wide = pitch > cells;
    const AscendC::LocalTensor<float> buf = wide ? s_ : tmp_;
    const uint32_t pass = wide ? 1 : cells / pitch;
    const uint64_t part = slot * (p_->wsDqSlot / 4) + static_cast<uint64_t>(rowOff) * pitch;
    const uint64_t acc = ((s.u.qStart + s.q0 + rowOff) * p_->numHeads + s.n) * d;
    const uint64_t accPitch = static_cast<uint64_t>(p_->numHeads) * d;
    PipeSync<AscendC::HardEvent::V_MTE2>();     // the step's vector work on the buffer is done
    PipeSync<AscendC::HardEvent::MTE3_MTE2>();  // and the last add out of it
    for (uint32_t r0 = 0; r0 < mine; r0 += pass) {
        const uint32_t rows = mine - r0 < pass ? mine - r0 : pass;
        if (r0 != 0) {
            PipeSync<AscendC::HardEvent::MTE3_MTE2>();  // the previous pass left the buffer
        }
        AscendC::DataCopy(buf, wsDq_[part + static_cast<uint64_t>(r0) * pitch], rows * pitch);
        PipeSync<AscendC::HardEvent::MTE2_MTE3>();
        AscendC::SetAtomicAdd<float>();
        AscendC::DataCopyPad(acc_[0][acc + r0 * accPitch], buf,
                             AscendC::DataCopyExtParams(static_cast<uint16_t>(rows), d * 4, 0,
                                                        static_cast<uint32_t>((accPitch - d) * 4), 0));
        AscendC::SetAtomicNone();
    }
    if (wide) {
        PipeSync<AscendC::HardEvent::MTE3_MTE2>();  // the next step loads S into s_
    }
}

}  // namespace AttentionCore
