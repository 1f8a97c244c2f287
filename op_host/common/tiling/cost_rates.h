// The rates the host planners price work with, in one place: the per-core rates of the
// emulator's Ascend910B2 timeline model (emulator/src/timing/cost_table.cpp, where each row cites
// its source) and the forward core's per-key fits to that model's traces (docs/performance.md,
// "Planner costs"). A planner only compares alternatives with them: a rate that is off shifts a
// choice (block size, split, pass width), never a result.
#pragma once
#include <cstdint>

namespace fa_host {

// Cost table rows (per core, per cube cycle).
constexpr double L2_READ_BYTES_PER_CYCLE = 110;            // l2_read_bytes: MTE2 from L2
constexpr double FIXP_WRITE_BYTES_PER_CYCLE = 86;          // fixp_l2_write_bytes: Fixpipe L0C -> GM
constexpr double DMA_HEAD_CYCLES = 197.9;                  // dma_head (fitted): start cost of one MTE2 copy
constexpr double MMAD_MACS_PER_CYCLE = 4096;               // fp16 16 x 16 x 16 fractal per cycle
constexpr double MMAD_HEAD_CYCLES = 16;                    // start cost of one Mmad
constexpr double FIXP_HEAD_CYCLES = 32;                    // start cost of one Fixpipe write
constexpr uint64_t L1_TO_L0_BYTES_PER_CYCLE = 128;         // MTE1 L1 -> L0A/L0B
constexpr uint64_t L2_DEVICE_SHARE_BYTES_PER_CYCLE = 162;  // l2_bytes_per_sec 7 TB/s over 24 cores at 1.8 GHz
constexpr double HBM_READ_BYTES_PER_CYCLE = 32;            // hbm_read_bytes: one core's MTE2 from HBM
constexpr double ND2NZ_ROW_CYCLES = 3.36;                  // nd2nz_row_cycles: per row an Nd2Nz copy converts

// ForwardKeyCost's fixed point: 1/2048 cube cycle per key, and the per-pipe rates fitted to the
// model's trace of PFA S8K at D = 64 (each 128 x 128 block: cube MTE2 0.61 us for K, V and P,
// a vector core 0.61 us for its half of the scores).
constexpr uint64_t KEY_COST_SCALE = 2048;
constexpr uint64_t KEY_MTE2_PER_ELEM = 2 * KEY_COST_SCALE / 89;  // a fp16 element at ~89 B/cycle: 46
constexpr uint64_t KEY_VEC_PER_SCORE = 137;                      // ~0.067 cycles per score, x 2048
// A key block's fixed share (cube <-> vector hand-off, rescale) per q-block row, in the score
// elements ForwardKeyCost returns: a planner weight (assumption), not a model rate.
constexpr uint64_t BLOCK_COST_PER_ROW = 32;

}  // namespace fa_host
