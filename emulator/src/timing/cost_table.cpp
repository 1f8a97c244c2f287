// The cost table (see emu/cost_table.h). Every entry names its source; sources are keyed as in
// docs/sources.md (public locations):
//   [S1] pypto A2A3.ini AICoreMemoryRates (ddr_rate 32, l2_read_rate 110, l2_write_rate 86,
//        ub_to_ddr/ub_to_l2 64 B/cycle/core)
//   [S4] asc-devkit "Cube指令理论性能汇总" (MACs/cycle per dtype, L1->L0A 256 / L0B 128 B/cycle,
//        Fixpipe 64 elements/cycle with f32->f16 cast)
//   [S5] asc-devkit "Vector指令理论性能汇总" (256 B/cycle per repeat; exp/ln/sqrt 32 elem/cycle;
//        Cast f32->f16 64/cycle; ReduceRepeat fp32 64/7 elem/cycle; Gather 5 elem/cycle)
//   [S6] asc-devkit "L2-Cache切分" (L2 ~7 TB/s mixed read/write)
//   [SOC] the emulator's SoC table (clock, HBM bandwidth, L2 size; emulator/src/soc.cpp)
//   [QUEUE] CANN Ascend C guide "Control units": the per-pipe instruction queues
//   [HWC] asc-devkit "硬件约束/NPU架构版本2201" (MTE1 and MMAD queues 32 deep; a GM move is cut into
//        128/256/512 B transfers, unaligned pieces rounded up)
// Entries marked "fitted" come from `fakit prof calibrate --catlass` (docs/performance.md,
// "Calibration"); they stay refittable like the assumptions.
// Entries marked "assumption" are not documented anywhere we could read; they are chosen here,
// kept in this one place, and are what `fakit prof calibrate` refits from msprof results.
#include "emu/cost_table.h"

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <sstream>

#include "emu/soc.h"

namespace emu {
namespace {

struct Row {
    const char *key;
    double CostTable::*field;
    int index;  // for the vector arrays, else -1
    double value;
    const char *source;
    bool assumed;
};

#define F(name) &CostTable::name, -1
#define V(i) nullptr, i
// The defaults (clock, HBM bandwidth and L2 size come from the SoC row).
const Row kRows[] = {
    {"issue", F(issue), 8, "assumption: scalar cycles to compute operands and issue one API call", true},
    {"issue_queue_depth", F(issueQueueDepth), 16,
     "assumption: a pipe's issue queue holds 16 instructions that have not started ([QUEUE] names the queues, not "
     "their depth); the MTE1 and M queues are cube_queue_depth",
     true},
    {"cube_queue_depth", F(cubeQueueDepth), 32, "[HWC] the MTE1 and MMAD instruction queues are 32 deep", false},
    {"scalar_local", F(scalarLocal), 2, "assumption: scalar load/store of one UB/L1 element", true},
    {"scalar_gm", F(scalarGm), 100, "assumption: scalar GM access through the data cache (miss)", true},
    {"macs_fp16", F(macsFp16), 4096, "[S4] fp16/bf16 16x16x16 per cycle", false},
    {"macs_int8", F(macsInt8), 8192, "[S4] int8 16x32x16 per cycle", false},
    {"macs_fp32", F(macsFp32), 1024, "[S4] fp32 16x16x4 per cycle (HF32 off)", false},
    {"mmad_head", F(mmadHead), 16, "assumption: per-Mmad head cost (Δt of [S4], not quantified)", true},
    {"l0a_bytes", F(l0aBytes), 256, "[S4] LoadData L1->L0A 256 B/cycle (API doc; the ini says 512)", false},
    {"l0b_bytes", F(l0bBytes), 128, "[S4] LoadData L1->L0B 128 B/cycle (API doc; the ini says 256)", false},
    {"mte1_head", F(mte1Head), 8, "assumption: per-LoadData start cost", true},
    {"fixp_cast_elems", F(fixpCastElems), 64, "[S4] Fixpipe 64 elem/cycle with f32->f16/bf16 (also used for DEQF16)",
     false},
    {"fixp_nocast_elems", F(fixpNoCastElems), 32,
     "assumption: Fixpipe f32 out without cast, 32 elem/cycle (the 950 doc value, [S13])", true},
    {"fixp_head", F(fixpHead), 32, "assumption: per-Fixpipe start cost", true},
    {"vec_head", F(vecHead), 2, "assumption: per vector instruction start cost", true},
    {"vec_simple", V(0), 1, "[S5] 256 B per cycle: add/mul/max/min, scalar forms, Duplicate, Copy, bitwise", false},
    {"vec_transcendental", V(1), 32, "[S5] exp/ln/sqrt 32 elem/cycle; Div, Reciprocal, Rsqrt assumed the same", false},
    {"vec_reduce", V(2), 64.0 / 7.0, "[S5] ReduceRepeat fp32 64/7 elem/cycle (fp16 assumed the same element rate)",
     false},
    {"vec_block_reduce", V(3), 2, "assumption: BlockReduce 2 cycles per repeat", true},
    {"vec_cast", V(4), 64, "[S5] Cast f32->f16 64 elem/cycle (other pairs assumed the same)", false},
    {"vec_compare_select", V(5), 1, "assumption: Compare/Select one cycle per repeat like simple arithmetic", true},
    {"vec_brcb", V(6), 1, "assumption: Brcb one cycle per repeat", true},
    {"vec_gather", V(7), 5, "[S5] Gather 5 elem/cycle", false},
    {"vec_sort32", V(8), 1, "assumption: Sort32 one (score, index) element per cycle (32 cycles per repeat)", true},
    {"vec_mrgsort", V(9), 1, "assumption: MrgSort one merged element per cycle", true},
    {"dma_head", F(dmaHead), 197.9,
     "fitted: per DMA instruction start cost (MTE2/MTE3), least squares in log time to the four published "
     "00_basic_matmul times (CATLASS, benchmarks/peers/calibration.py; fit errors -15.8/+15.6/+2.3/0.0 %; was the "
     "assumption 64)",
     true},
    {"nd2nz_row_cycles", F(nd2nzRowCycles), 3.36,
     "fitted: per row of an Nd2Nz copy (ND in GM to NZ in L1), the same fit as dma_head (was the assumption 0)", true},
    {"hbm_read_bytes", F(hbmReadBytes), 32, "[S1] ddr_rate 32 B/cycle per core", false},
    {"l2_read_bytes", F(l2ReadBytes), 110, "[S1] l2_read_rate 110 B/cycle per core", false},
    {"l2_write_bytes", F(l2WriteBytes), 64, "[S1] ub_to_l2_rate / ub_to_ddr_rate 64 B/cycle (MTE3 UB->GM)", false},
    {"fixp_l2_write_bytes", F(fixpL2WriteBytes), 86, "[S1] l2_write_rate 86 B/cycle per core (Fixpipe L0C->GM)", false},
    {"atomic_factor", F(atomicFactor), 2,
     "assumption: an atomic-add GM write is a read-modify-write in L2, twice a write", true},
    {"local_copy_bytes", F(localCopyBytes), 64, "assumption: UB->UB / UB->L1 DataCopy 64 B/cycle", true},
    {"dma_min_transfer", F(dmaMinTransfer), 128,
     "[HWC] a GM move is cut at 512 B boundaries into aligned 128/256/512 B transfers, each piece rounded up", false},
    {"cross_flag", F(crossFlag), 100, "assumption: cross-core flag latency (set to visible wait)", true},
    {"sync_all", F(syncAll), 500, "assumption: SyncAll release after the last arrival", true},
    {"launch_us", F(launchUs), 2, "assumption: fixed task start cost in µs on the device, host launch excluded", true},
    {"l2_line_bytes", F(l2LineBytes), 512, "assumption: L2 first-touch granularity 512 B", true},
    {"l2_bytes_per_sec", F(l2BytesPerSec), 7e12, "[S6] L2 ~7 TB/s mixed read/write (device-wide)", false},
    {"bandwidth_window", F(bandwidthWindow), 0,
     "assumption: 0, HBM and L2 bandwidth are launch-wide floors; > 0 shares them over windows of this many cycles, "
     "first come first served (a pessimistic bracket: docs/performance.md)",
     true},
};
#undef F
#undef V

// The vector rates of [S5] are elements per cycle for some classes: those rows are converted
// to cycles per repeat by lanes/rate when the table is used (vecElemScale != 0).
const bool kVecIsElemRate[10] = {false, true, true, false, true, false, false, true, true, true};

std::mutex g_mu;
CostTable g_table;
bool g_loaded = false;

double &FieldOf(CostTable &t, const Row &r)
{
    if (r.field != nullptr) return t.*(r.field);
    return t.vecCyclesPerRepeat[r.index];
}

// Keys the replay applies itself (emulator/src/timing/replay.cpp), so a launch's logs can be
// replayed again under another value (ASCEND_EMU_COSTS_ALT); the others are folded into the
// logged instructions by the core threads.
const char *const kReplayedKeys[] = {"issue",           "issue_queue_depth", "cube_queue_depth",
                                     "scalar_local",    "scalar_gm",         "mmad_head",
                                     "mte1_head",       "fixp_head",         "vec_head",
                                     "dma_head",        "nd2nz_row_cycles",  "hbm_read_bytes",
                                     "l2_read_bytes",   "l2_write_bytes",    "fixp_l2_write_bytes",
                                     "atomic_factor",   "dma_min_transfer",  "cross_flag",
                                     "sync_all",        "launch_us",         "l2_bytes_per_sec",
                                     "bandwidth_window"};

// Applies a text file of "key value" lines (fakit prof calibrate writes them) named by env `var`.
void ApplyFile(const char *var, const char *path, CostTable &t, bool replayedOnly)
{
    FILE *f = std::fopen(path, "r");
    if (f == nullptr) {
        std::fprintf(stderr, "[ascendc-emu] %s: %s cannot be opened\n", var, path);
        std::abort();
    }
    char key[64];
    double v;
    int got;
    while ((got = std::fscanf(f, "%63s %lf", key, &v)) == 2) {
        bool found = false, replayed = false;
        for (const Row &r : kRows)
            if (std::strcmp(r.key, key) == 0) {
                FieldOf(t, r) = v;
                found = true;
            }
        for (const char *k : kReplayedKeys) replayed = replayed || std::strcmp(k, key) == 0;
        if (!found) {
            std::fprintf(stderr, "[ascendc-emu] %s: unknown cost key %s in %s\n", var, key, path);
            std::abort();
        }
        if (replayedOnly && !replayed) {
            std::fprintf(stderr,
                         "[ascendc-emu] %s: %s in %s is folded into the logged instructions and cannot vary "
                         "between replays of one launch (set it in ASCEND_EMU_COSTS)\n",
                         var, key, path);
            std::abort();
        }
    }
    if (got != EOF) {
        std::fprintf(stderr, "[ascendc-emu] %s=%s: expected \"<key> <number>\" lines\n", var, path);
        std::abort();
    }
    std::fclose(f);
}

void Build()
{
    const SocSpec &soc = CurrentSoc();
    CostTable t{};
    for (const Row &r : kRows) FieldOf(t, r) = r.value;
    for (int i = 0; i < 10; ++i) t.vecElemScale[i] = kVecIsElemRate[i] ? 1 : 0;
    t.clockHz = soc.clockMhz * 1e6;
    t.hbmBytesPerSec = soc.hbmBytesPerSec;
    t.l2Capacity = static_cast<double>(soc.l2Bytes);
    if (const char *path = std::getenv("ASCEND_EMU_COSTS"); path != nullptr && *path != '\0')
        ApplyFile("ASCEND_EMU_COSTS", path, t, false);
    g_table = t;
    g_loaded = true;
}

const CostTable *g_override = nullptr;

}  // namespace

// Rebuilt by ReloadCosts() at every launch start (before the core threads run), so the core
// threads only read it.
const CostTable &Costs()
{
    if (g_override != nullptr) return *g_override;
    if (!g_loaded) ReloadCosts();
    return g_table;
}

CostTable AlternativeCosts(const char *path)
{
    CostTable t = Costs();
    ApplyFile("ASCEND_EMU_COSTS_ALT", path, t, true);
    return t;
}

void OverrideCosts(const CostTable *t) { g_override = t; }

void ReloadCosts()
{
    std::lock_guard<std::mutex> lock(g_mu);
    Build();
}

std::string CostTableJson()
{
    ReloadCosts();  // reflect the current ASCEND_EMU_COSTS, not the last launch's
    const CostTable &t = Costs();
    std::ostringstream o;
    o.precision(17);
    o << "[";
    for (size_t i = 0; i < sizeof(kRows) / sizeof(kRows[0]); ++i) {
        const Row &r = kRows[i];
        const double v = r.field != nullptr ? t.*(r.field) : t.vecCyclesPerRepeat[r.index];
        if (i) o << ",";
        o << "{\"key\":\"" << r.key << "\",\"value\":" << v << ",\"assumed\":" << (r.assumed ? "true" : "false")
          << ",\"source\":\"" << r.source << "\"}";
    }
    o << "]";
    return o.str();
}

}  // namespace emu
