// The launch's per-core pipe counters and buffer peaks as JSON (last_counters()) and the
// ASCEND_EMU_PROFILE line.
#include "launch_counters.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include "emu/core.h"
#include "emu/soc.h"
#include "emu/timing.h"

namespace emu {

namespace {

std::mutex g_countersMu;
std::string g_lastCounters = "{}";

const char *PipeName(int p)
{
    static const char *names[] = {"MTE2", "MTE1", "M", "V", "MTE3", "FIXP", "S"};
    return names[p];
}

void AppendCounters(std::ostringstream &o, const PipeCounter *pc)
{
    for (int p = 0; p < static_cast<int>(Pipe::COUNT); ++p) {
        if (p) o << ",";
        o << "\"" << PipeName(p) << "\":{\"bytes\":" << pc[p].bytes << ",\"ops\":" << pc[p].ops;
        if (p == static_cast<int>(Pipe::M)) o << ",\"macs\":" << pc[p].macs;
        o << "}";
    }
}

}  // namespace

// ASCEND_EMU_PROFILE=<file>: every launch appends the modelled profile of last_profile() (kernel,
// block dim, task_duration_us, the msprof ratios) as one JSON line, so a program that is not
// driven from Python (a CATLASS example, a user's host driver) still reports its modelled time.
void AppendProfileLine()
{
    const char *path = std::getenv("ASCEND_EMU_PROFILE");
    if (path == nullptr || path[0] == '\0') return;
    static std::mutex mu;
    std::lock_guard<std::mutex> lock(mu);
    FILE *out = std::fopen(path, "a");
    if (out == nullptr) {
        std::fprintf(stderr, "[ascendc-emu] ASCEND_EMU_PROFILE: cannot append to %s\n", path);
        return;
    }
    std::fprintf(out, "%s\n", LastLaunchProfileJson().c_str());
    std::fclose(out);
}

void AppendPeakJson(std::string &out, const uint64_t *peak, int kind)
{
    out += "\"peak\":{";
    bool first = true;
    for (int b = static_cast<int>(Buf::UB); b < static_cast<int>(Buf::COUNT); ++b) {
        if ((kind == kAiv && b != static_cast<int>(Buf::UB)) || (kind == kAic && b == static_cast<int>(Buf::UB)))
            continue;
        out += std::string(first ? "\"" : ",\"") + BufName(static_cast<Buf>(b)) + "\":" + std::to_string(peak[b]);
        first = false;
    }
    out += "}";
}

void RecordLaunchCounters(const LaunchConfig &cfg, const std::vector<CoreCtx> &ctx)
{
    std::ostringstream o;
    PipeCounter total[static_cast<int>(Pipe::COUNT)];
    uint64_t peak[static_cast<int>(Buf::COUNT)] = {};  // max over the cores
    o << "{\"kernel\":\"" << cfg.name << "\",\"block_dim\":" << cfg.blockDim << ",\"soc\":\"" << CurrentSoc().name
      << "\",\"cores\":[";
    bool firstCore = true;
    const int aivPerBlock = cfg.mix == CoreMix::AIC_ONLY ? 0 : (cfg.mix == CoreMix::MIX_AIC_1_2 ? 2 : 1);
    for (uint32_t b = 0; b < cfg.blockDim; ++b)
        for (int k = 0; k < 3; ++k) {
            if (k == 0 && cfg.mix == CoreMix::AIV_ONLY) continue;
            if (k > 0 && k > aivPerBlock) continue;
            const CoreCtx &c = ctx[b * 3 + k];
            if (!firstCore) o << ",";
            firstCore = false;
            o << "{\"core\":" << b << ",\"sub\":\"" << (k == 0 ? "aic" : (k == 1 ? "aiv0" : "aiv1")) << "\",";
            AppendCounters(o, c.counters);
            std::string peakJson;
            AppendPeakJson(peakJson, c.peak, c.kind);
            o << "," << peakJson << "}";
            for (int m = 0; m < static_cast<int>(Buf::COUNT); ++m) peak[m] = std::max(peak[m], c.peak[m]);
            for (int p = 0; p < static_cast<int>(Pipe::COUNT); ++p) {
                total[p].bytes += c.counters[p].bytes;
                total[p].ops += c.counters[p].ops;
                total[p].macs += c.counters[p].macs;
            }
        }
    o << "],\"total\":{";
    AppendCounters(o, total);
    std::string peakJson;
    AppendPeakJson(peakJson, peak, kMix);
    o << "}," << peakJson << "}";
    std::lock_guard<std::mutex> lock(g_countersMu);
    g_lastCounters = o.str();
}

std::string LastLaunchCountersJson()
{
    std::lock_guard<std::mutex> lock(g_countersMu);
    return g_lastCounters;
}

}  // namespace emu

extern "C" const char *ascendc_emu_last_counters_json(void)
{
    static thread_local std::string copy;
    copy = emu::LastLaunchCountersJson();
    return copy.c_str();
}
