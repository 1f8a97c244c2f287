// The cost table of the timeline model: one value per instruction class of arch 2201 (Atlas A2/A3),
// each with its source or an "assumption" mark (emulator/src/timing/cost_table.cpp). Values are
// cycles of the AI core clock unless the name says otherwise. Users with CANN refit the assumed
// entries with `fakit prof calibrate`, which writes a file read through env ASCEND_EMU_COSTS.
#pragma once
#include <string>

namespace emu {

struct CostEntry {
    const char *key;  // name in the calibration file and the profile JSON
    double value;
    const char *source;  // "[S4] ..." or "assumption: ..."
    bool assumed;
};

struct CostTable {
    double clockHz;                 // from the SoC table
    double issue;                   // scalar cycles to issue one API call
    double issueQueueDepth;         // instructions a pipe's issue queue holds before the scalar unit stalls
    double cubeQueueDepth;          // the same for the MTE1 and M queues
    double scalarLocal;             // scalar cycles per GetValue/SetValue on a local tensor
    double scalarGm;                // scalar cycles per GlobalTensor GetValue/SetValue
    double macsFp16;                // cube MACs per cycle, fp16/bf16
    double macsInt8;                // int8
    double macsFp32;                // fp32 (HF32 off)
    double mmadHead;                // fixed cycles per Mmad
    double l0aBytes;                // LoadData L1 -> L0A bytes per cycle
    double l0bBytes;                // L1 -> L0B
    double mte1Head;                // fixed cycles per LoadData
    double fixpCastElems;           // Fixpipe elements per cycle with f32->f16/bf16 or deq
    double fixpNoCastElems;         // Fixpipe f32/s32 out, no conversion
    double fixpHead;                // fixed cycles per Fixpipe
    double vecHead;                 // fixed cycles per vector instruction
    double vecCyclesPerRepeat[10];  // by VClass (a repeat = 256 bytes of the widest operand)
    double vecElemScale[10];        // 1: cost per repeat as is; else cycles scale with lanes (elements / rate)
    double dmaHead;                 // fixed cycles per DMA instruction (MTE2/MTE3)
    double nd2nzRowCycles;          // cycles per row of an Nd2Nz copy (the ND -> NZ conversion in MTE2)
    double hbmReadBytes;            // GM->core bytes per cycle per DMA engine when the line comes from HBM
    double l2ReadBytes;             // when it hits L2
    double l2WriteBytes;            // UB->GM bytes per cycle per engine (writes land in L2)
    double fixpL2WriteBytes;        // L0C->GM (Fixpipe) bytes per cycle
    double atomicFactor;            // atomic-add writes cost this many times a plain write
    double localCopyBytes;          // UB->UB, UB->L1 bytes per cycle
    double dmaMinTransfer;          // the smallest GM transfer (bursts are cut into 128/256/512 B transfers)
    double crossFlag;               // cycles from a cross-core set to the wait seeing it
    double syncAll;                 // cycles of a SyncAll after the last core arrives
    double launchUs;                // fixed task start cost (µs)
    double l2LineBytes;             // granularity of the L2 first-touch model
    double l2Capacity;              // bytes (from the SoC table)
    double hbmBytesPerSec;          // device-wide (from the SoC table)
    double l2BytesPerSec;           // device-wide L2 bandwidth
    double bandwidthWindow;         // cycles over which the device-wide HBM and L2 bandwidth is shared (0: off)
};

// The table for the current SoC (with ASCEND_EMU_COSTS overrides applied); built once per launch.
const CostTable &Costs();
void ReloadCosts();
// The current table with a file of replayed keys applied (ASCEND_EMU_COSTS_ALT); Costs() returns
// *t while OverrideCosts(t) is in force (nullptr ends it).
CostTable AlternativeCosts(const char *path);
void OverrideCosts(const CostTable *t);
// Every entry with its source, in the order of the table (for docs, the profile and calibration).
std::string CostTableJson();

}  // namespace emu
