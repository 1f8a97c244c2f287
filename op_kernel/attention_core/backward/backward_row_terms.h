// BackwardVector (backward_vector.h): the pass before the main loop, D = rowsum(dO o O) per
// (token, head), and the dsink partials and sum that read it. Included by backward_vector.h
// after the class.
#pragma once

namespace AttentionCore {

// D[t, n] = sum_d dO[t, n, d] * O[t, n, d] for this core's share of the (t, n) rows, in
// chunks of rows whose dO and O come in with one copy each (the pass reads HBM and a
// copy's start, ~200 cycles, cost more than its 8 KiB of 32-row chunks). Two staging sets
// (the P-out and dS-out buffers; the halves of S) take chunks in turn, each guarded by its
// own events, so the next chunk's loads and the last one's D rows run under this one's
// vector work, which goes through the fp32 scratch in sub-chunks (cast, product, row sum).
template <typename T> __aicore__ inline void BackwardVector<T>::ComputeRowTerms()
{
    constexpr int32_t EVT = BWD_EVT_CAST;  // + set (sync.h's table; the cast-out's ids)
    const uint32_t d = p_->headDim;
    const uint32_t dp = p_->headDimAlign;
    const uint32_t cells = p_->rowsPerVec * p_->tileKv;
    // rows per chunk: what a staging set holds (half of S holds rowCells x 2 bytes), at
    // most 255 (a repeat count) and what the mask buffer holds of two sets' D rows
    uint32_t chunk = rowCells_ * (sizeof(T) < 2 ? sizeof(T) : 2) / sizeof(T) / dp;
    chunk = chunk > 255 ? 255 : chunk;
    chunk = chunk > cells / 64 ? cells / 64 : chunk;
    const uint32_t sub = rowCells_ / 2 / dp;  // rows per sub-chunk: two fp32 rows in the scratch
    uint64_t lo, hi;
    Share(p_->tq * p_->numHeads, lo, hi);
    const uint32_t half = rowCells_ * 2 / sizeof(T);  // T elements in half of S
    const AscendC::LocalTensor<T> sT = sBuf_.Get<T>();
    const AscendC::LocalTensor<T> dyT[2] = {pOutBuf_.Get<T>(), sT};
    const AscendC::LocalTensor<T> oT[2] = {dsOutBuf_.Get<T>(), sT[half]};
    const AscendC::LocalTensor<float> prod = tmp_, other = tmp_[rowCells_ / 2];
    const AscendC::LocalTensor<float> rowD = statBuf_.Get<float>();  // one float per row
    // a Brcb writes whole groups of 8 rows: set 1 starts past set 0's last group
    const AscendC::LocalTensor<float> rows8All = maskBuf_.Get<float>();
    const AscendC::LocalTensor<float> rows8[2] = {rows8All, rows8All[AlignUp(chunk, 8) * 8]};
    // The accumulators' zeros come from dP; their writes (MTE3, to L2) go out between the
    // D rows' stores, a share after each chunk, under the dO and O reads (MTE2, from HBM).
    const uint32_t zerosLen = rowCells_ / 8 * 8;
    AscendC::Duplicate(dp_, 0.0f, static_cast<int32_t>(zerosLen));
    PipeSync<AscendC::HardEvent::V_MTE3>();
    const uint64_t chunks = (hi - lo + chunk - 1) / chunk;
    const AscendC::DataCopyPadExtParams<T> zeroPad(true, 0, static_cast<uint8_t>(dp - d), 0);
    for (uint32_t b = 0; b < 2; ++b) {
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT + b);
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT + b);
    }
    const uint8_t pitch = static_cast<uint8_t>(dp / 8);
    uint32_t k = 0;
    for (uint64_t r0 = lo; r0 < hi; r0 += chunk, ++k) {
        const uint32_t b = k % 2;
        const uint32_t rows = hi - r0 < chunk ? static_cast<uint32_t>(hi - r0) : chunk;
        const AscendC::DataCopyExtParams copy(static_cast<uint16_t>(rows), d * sizeof(T), 0, 0, 0);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT + b);  // the casts read set b
        AscendC::DataCopyPad(dyT[b], dy_[r0 * d], copy, zeroPad);
        AscendC::DataCopyPad(oT[b], o_[r0 * d], copy, zeroPad);
        AscendC::SetFlag<AscendC::HardEvent::MTE2_V>(EVT + b);
        AscendC::WaitFlag<AscendC::HardEvent::MTE2_V>(EVT + b);
        for (uint32_t s0 = 0; s0 < rows; s0 += sub) {
            const uint32_t n = rows - s0 < sub ? rows - s0 : sub;
            const int32_t count = static_cast<int32_t>(n * dp);
            CastToFloat(prod, dyT[b][s0 * dp], count);
            CastToFloat(other, oT[b][s0 * dp], count);
            AscendC::PipeBarrier<PIPE_V>();
            AscendC::Mul(prod, prod, other, count);
            AscendC::PipeBarrier<PIPE_V>();
            for (uint32_t c0 = 64; c0 < dp; c0 += 64) {
                const uint32_t lanes = dp - c0 < 64 ? dp - c0 : 64;
                AscendC::Add(prod, prod, prod[c0], static_cast<uint64_t>(lanes), static_cast<uint8_t>(n),
                             AscendC::BinaryRepeatParams(1, 1, 1, pitch, pitch, pitch));
                AscendC::PipeBarrier<PIPE_V>();
            }
            AscendC::WholeReduceSum(rowD[s0], prod, static_cast<int32_t>(dp < 64 ? dp : 64), static_cast<int32_t>(n), 1,
                                    1, pitch);
            AscendC::PipeBarrier<PIPE_V>();
        }
        AscendC::SetFlag<AscendC::HardEvent::V_MTE2>(EVT + b);
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT + b);  // set b's last D rows are out
        AscendC::Brcb(rows8[b], rowD, static_cast<uint8_t>((rows + 7) / 8), AscendC::BrcbRepeatParams(1, 8));
        AscendC::SetFlag<AscendC::HardEvent::V_MTE3>(EVT + b);
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE3>(EVT + b);
        AscendC::DataCopy(drow_[r0 * 8], rows8[b], rows * 8);
        AscendC::SetFlag<AscendC::HardEvent::MTE3_V>(EVT + b);
        ZeroShare(dp_, zerosLen, zeroTotal_ * (k + 1) / chunks);
    }
    ZeroShare(dp_, zerosLen, zeroTotal_);
    for (uint32_t b = 0; b < 2; ++b) {
        AscendC::WaitFlag<AscendC::HardEvent::V_MTE2>(EVT + b);
        AscendC::WaitFlag<AscendC::HardEvent::MTE3_V>(EVT + b);
    }
    PipeSync<AscendC::HardEvent::MTE3_V>();  // the last zeros are out before dP is reused
}

// dsink partial of this core: -sum over its (t, n) rows of exp(sink[n] - max) / sum * D,
// per head (scalar walk; one row at a time, the row count is T * N / cores).
template <typename T> __aicore__ inline void BackwardVector<T>::SinkGradPartials()
{
    const uint32_t heads = p_->numHeads;
    const AscendC::LocalTensor<float> part = sinkBuf_.Get<float>();
    const AscendC::LocalTensor<float> row = part[p_->dsinkPitch];
    AscendC::Duplicate(part, 0.0f, static_cast<int32_t>(p_->dsinkPitch));
    uint64_t lo, hi;
    Share(p_->tq * heads, lo, hi);
    PipeSync<AscendC::HardEvent::V_S>();
    for (uint64_t f = lo; f < hi; ++f) {
        const uint32_t n = static_cast<uint32_t>(f % heads);
        const uint64_t t = f / heads;
        const uint64_t offTnd = f * 8, offNt = (n * p_->tq + t) * 8;
        row.SetValue(0, sink_.GetValue(n) - max_.GetValue((p_->statsTnd & 1u) != 0 ? offTnd : offNt));
        row.SetValue(8, sum_.GetValue((p_->statsTnd & 2u) != 0 ? offTnd : offNt));
        row.SetValue(16, drow_.GetValue(f * 8));
        PipeSync<AscendC::HardEvent::S_V>();
        AscendC::Exp(row, row, 1);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Div(row, row, row[8], 1);
        AscendC::PipeBarrier<PIPE_V>();
        AscendC::Mul(row, row, row[16], 1);
        PipeSync<AscendC::HardEvent::V_S>();
        part.SetValue(n, part.GetValue(n) - row.GetValue(0));
    }
    PipeSync<AscendC::HardEvent::S_MTE3>();
    AscendC::DataCopy(dsinkWs_[vecId_ * p_->dsinkPitch], part, static_cast<uint32_t>(p_->dsinkPitch));
    PipeSync<AscendC::HardEvent::MTE3_V>();
}

// dsink = sum of the vector cores' partials (one core, after the barrier).
template <typename T> __aicore__ inline void BackwardVector<T>::SinkGradSum()
{
    const uint32_t pitch = static_cast<uint32_t>(p_->dsinkPitch);
    const AscendC::LocalTensor<float> total = sinkBuf_.Get<float>();
    const AscendC::LocalTensor<float> part = total[pitch];
    AscendC::Duplicate(total, 0.0f, static_cast<int32_t>(pitch));
    for (uint32_t v = 0; v < p_->usedCores * 2; ++v) {
        PipeSync<AscendC::HardEvent::V_MTE2>();
        AscendC::DataCopy(part, dsinkWs_[v * pitch], pitch);
        PipeSync<AscendC::HardEvent::MTE2_V>();
        AscendC::Add(total, total, part, static_cast<int32_t>(pitch));
        AscendC::PipeBarrier<PIPE_V>();
    }
    PipeSync<AscendC::HardEvent::V_MTE3>();
    AscendC::DataCopyPad(dsink_, total, AscendC::DataCopyExtParams(1, p_->numHeads * 4, 0, 0, 0));
    PipeSync<AscendC::HardEvent::MTE3_V>();
}

}  // namespace AttentionCore
