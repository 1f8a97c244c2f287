// Launch-level timeline model (see launch_timing.h) and the profile / trace output.
#include "launch_timing.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>

#include "emu/cost_table.h"
#include "emu/soc.h"
#include "emu/timing.h"
#include "l2_model.h"
#include "replay.h"

namespace emu {
namespace {

std::mutex g_mu;
std::string g_profile = "{}";
std::string g_tracePath;  // SetTracePath; else env ASCEND_EMU_TRACE

const char *kPipeNames[] = {"MTE2", "MTE1", "M", "V", "MTE3", "FIXP", "S"};
constexpr int kPipes = 7;

bool EnvFlag(const char *name, bool dflt)
{
    const char *v = std::getenv(name);
    if (v == nullptr || *v == '\0') return dflt;
    return v[0] == '1';
}

std::string TracePath()
{
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_tracePath.empty()) return g_tracePath;
    const char *e = std::getenv("ASCEND_EMU_TRACE");
    return e != nullptr ? e : "";
}

// msprof's PipeUtilization columns: (unit, pipe) -> name.
struct Metric {
    const char *name;
    bool aic;
    Pipe pipe;
};
const Metric kMetrics[] = {
    {"aic_mac_ratio", true, Pipe::M},      {"aic_mte1_ratio", true, Pipe::MTE1},
    {"aic_mte2_ratio", true, Pipe::MTE2},  {"aic_fixpipe_ratio", true, Pipe::FIXP},
    {"aic_scalar_ratio", true, Pipe::S},   {"aiv_vec_ratio", false, Pipe::V},
    {"aiv_mte2_ratio", false, Pipe::MTE2}, {"aiv_mte3_ratio", false, Pipe::MTE3},
    {"aiv_scalar_ratio", false, Pipe::S},
};

}  // namespace

void TimingBeginLaunch()
{
    g_timing = EnvFlag("ASCEND_EMU_TIMING", true);
    g_timingOnly = g_timing && EnvFlag("ASCEND_EMU_TIMING_ONLY", false);
    ReloadCosts();
}

void SetTracePath(const char *path)
{
    std::lock_guard<std::mutex> lock(g_mu);
    g_tracePath = path != nullptr ? path : "";
}

std::string LastLaunchProfileJson()
{
    std::lock_guard<std::mutex> lock(g_mu);
    return g_profile;
}

LaunchTiming::LaunchTiming(const LaunchConfig &cfg, int physicalCores, std::vector<CoreCtx> &ctx)
    : cfg_(cfg), ctx_(ctx), physFree_(physicalCores, 0.0), physOf_(cfg.blockDim, 0)
{
    aivPerBlock_ = cfg.mix == CoreMix::AIC_ONLY ? 0 : (cfg.mix == CoreMix::MIX_AIC_1_2 ? 2 : 1);
    hasAic_ = cfg.mix != CoreMix::AIV_ONLY;
    for (size_t i = 0; i < ctx.size(); ++i) ctx[i].timeline.index = static_cast<int>(i);
    if (!g_timing) return;
    if (!TracePath().empty()) traces_.resize(ctx.size());
    // ASCEND_EMU_COSTS_ALT=<file>[:<file>...]: the launch (one wave) is replayed again under each
    // file's costs; the profile lists the task durations (calibration's finite differences).
    if (const char *alt = std::getenv("ASCEND_EMU_COSTS_ALT"); alt != nullptr && *alt != '\0') {
        std::string list = alt;
        for (size_t a = 0, e; a <= list.size(); a = e + 1) {
            e = std::min(list.find(':', a), list.size());
            if (e > a) altPaths_.push_back(list.substr(a, e - a));
        }
    }
    const bool oneWave = static_cast<int>(cfg.blockDim) <= physicalCores;
    ReplayBeginLaunch(static_cast<int>(ctx.size()), &traces_, oneWave && !altPaths_.empty());
}

LaunchTiming::~LaunchTiming()
{
    for (CoreCtx &c : ctx_) ReplayDropLog(c.timeline);
    if (g_timing) ReplayEndLaunch();
}

// The task duration (µs) of the clocks the replay holds: launch + the longest of the critical
// path and the device-wide HBM and L2 floors.
double LaunchTiming::TaskUs(double *criticalUs, double *hbmFloorUs, double *l2FloorUs) const
{
    const CostTable &t = Costs();
    double critical = 0;
    uint64_t l2 = 0;
    for (uint32_t b = 0; b < cfg_.blockDim; ++b)
        for (int k = 0; k < 3; ++k)
            if (Active(k)) {
                const CoreClock &cl = ReplayClock(b * 3 + k);
                critical = std::max(critical, cl.End());
                l2 += cl.l2ReadBytes + cl.l2WriteBytes;
            }
    *criticalUs = critical * 1e6 / t.clockHz;
    *hbmFloorUs = L2HbmReadBytes() / t.hbmBytesPerSec * 1e6;  // whole lines, device-wide
    *l2FloorUs = l2 / t.l2BytesPerSec * 1e6;
    return t.launchUs + std::max({*criticalUs, *hbmFloorUs, *l2FloorUs});
}

const std::vector<double> &LaunchTiming::Origins(int first, int count)
{
    origins_.assign(count, 0.0);
    for (int i = 0; i < count; ++i) {
        // The block goes to the physical core that is free first (ties: the lowest index).
        const int p = static_cast<int>(std::min_element(physFree_.begin(), physFree_.end()) - physFree_.begin());
        origins_[i] = physFree_[p];
        physOf_[first + i] = p;
        physFree_[p] = 1e300;  // taken in this wave
    }
    if (g_timing) {
        std::vector<TimingLog *> logs;
        for (int b = first; b < first + count; ++b)
            for (int k = 0; k < 3; ++k)
                if (Active(k)) logs.push_back(&ctx_[b * 3 + k].timeline);
        ReplayBeginWave(logs);
    }
    return origins_;
}

void LaunchTiming::WaveDone(int first, int count)
{
    if (g_timing) complete_ = ReplayFinishWave() && complete_;
    for (int b = first; b < first + count; ++b) {
        double end = 0;
        for (int k = 0; k < 3; ++k)
            if (g_timing && Active(k)) end = std::max(end, ReplayClock(b * 3 + k).End());
        physFree_[physOf_[b]] = end;
    }
}

void LaunchTiming::Finish()
{
    const CostTable &t = Costs();
    const SocSpec &soc = CurrentSoc();
    const double us = 1e6 / t.clockHz;
    std::ostringstream o;
    o.precision(15);
    o << "{\"kernel\":\"" << cfg_.name << "\",\"soc\":\"" << soc.name << "\",\"block_dim\":" << cfg_.blockDim
      << ",\"model\":\"" << (g_timing ? (g_timingOnly ? "timeline (timing-only)" : "timeline") : "off") << "\"";
    if (!g_timing) {
        o << "}";
        std::lock_guard<std::mutex> lock(g_mu);
        g_profile = o.str();
        return;
    }
    double criticalUs, hbmFloorUs, l2FloorUs;
    const double taskUs = TaskUs(&criticalUs, &hbmFloorUs, &l2FloorUs);
    const uint64_t hbm = L2HbmReadBytes();
    uint64_t l2r = 0, l2w = 0;
    double sum[2][kPipes] = {}, maxBusy[2][kPipes] = {}, waitOfMax[2][kPipes][2] = {};
    int n[2] = {};
    std::ostringstream cores;
    cores.precision(15);
    bool firstCore = true;
    for (uint32_t b = 0; b < cfg_.blockDim; ++b)
        for (int k = 0; k < 3; ++k) {
            if (!Active(k)) continue;
            const CoreClock &cl = ReplayClock(b * 3 + k);
            const double end = cl.End(), elapsed = end - cl.origin;
            l2r += cl.l2ReadBytes;
            l2w += cl.l2WriteBytes;
            const int u = k == 0 ? 0 : 1;
            ++n[u];
            cores << (firstCore ? "" : ",") << "{\"core\":" << b << ",\"sub\":\""
                  << (k == 0   ? "aic"
                      : k == 1 ? "aiv0"
                               : "aiv1")
                  << "\",\"start_us\":" << cl.origin * us << ",\"end_us\":" << end * us << ",\"busy_us\":{";
            firstCore = false;
            for (int p = 0; p < kPipes; ++p) {
                sum[u][p] += elapsed > 0 ? cl.busy[p] / elapsed : 0.0;
                if (cl.busy[p] > maxBusy[u][p]) {
                    maxBusy[u][p] = cl.busy[p];
                    waitOfMax[u][p][0] = cl.bandwidthWait[0][p];
                    waitOfMax[u][p][1] = cl.bandwidthWait[1][p];
                }
                cores << (p ? "," : "") << "\"" << kPipeNames[p] << "\":" << cl.busy[p] * us;
            }
            cores << "},\"ratio\":{";
            for (int p = 0; p < kPipes; ++p)
                cores << (p ? "," : "") << "\"" << kPipeNames[p] << "\":" << (elapsed > 0 ? cl.busy[p] / elapsed : 0.0);
            cores << "}}";
        }
    // The bound: the device-wide floor when it exceeds the critical path, else the pipe with the
    // most busy time on one core (the per-pipe bound of the counters) - or the device's HBM or L2
    // bandwidth when at least a tenth of that busy time is waiting for its share (bandwidth.h).
    std::string bound = "-";
    double best = -1;
    for (int u = 0; u < 2; ++u)
        for (int p = 0; p < kPipes; ++p)
            if (maxBusy[u][p] > best) {
                best = maxBusy[u][p];
                bound = std::string(u == 0 ? "aic." : "aiv.") + kPipeNames[p];
                const double *w = waitOfMax[u][p];
                if (std::max(w[0], w[1]) >= 0.1 * best) bound = w[0] >= w[1] ? "HBM" : "L2";
            }
    if (hbmFloorUs > criticalUs && hbmFloorUs >= l2FloorUs)
        bound = "HBM";
    else if (l2FloorUs > criticalUs)
        bound = "L2";
    o << ",\"task_duration_us\":" << taskUs << ",\"launch_us\":" << t.launchUs << ",\"critical_path_us\":" << criticalUs
      << ",\"hbm_floor_us\":" << hbmFloorUs << ",\"l2_floor_us\":" << l2FloorUs << ",\"bound_pipe\":\"" << bound
      << "\",\"clock_mhz\":" << soc.clockMhz << ",\"hbm_bytes\":" << hbm << ",\"l2_read_bytes\":" << l2r
      << ",\"l2_write_bytes\":" << l2w << ",\"hbm_wait_us\":" << ReplayBandwidthDelayCycles(true) * us
      << ",\"l2_wait_us\":" << ReplayBandwidthDelayCycles(false) * us << ",\"aic_cores\":" << n[0]
      << ",\"aiv_cores\":" << n[1];
    for (const Metric &m : kMetrics) {
        const int u = m.aic ? 0 : 1;
        o << ",\"" << m.name << "\":";
        if (n[u] == 0)
            o << "null";
        else
            o << sum[u][static_cast<int>(m.pipe)] / n[u];
    }
    o << ",\"max_busy_us\":{";
    bool f = true;
    for (int u = 0; u < 2; ++u)
        for (int p = 0; p < kPipes; ++p) {
            if (n[u] == 0) continue;
            o << (f ? "" : ",") << "\"" << (u == 0 ? "aic." : "aiv.") << kPipeNames[p] << "\":" << maxBusy[u][p] * us;
            f = false;
        }
    uint64_t peak[static_cast<int>(Buf::COUNT)] = {};  // the launch's: max over its cores
    for (const CoreCtx &c : ctx_)
        for (int b = 0; b < static_cast<int>(Buf::COUNT); ++b) peak[b] = std::max(peak[b], c.peak[b]);
    std::string peakJson;
    AppendPeakJson(peakJson, peak, kMix);
    o << "}," << peakJson << ",\"cores\":[" << cores.str() << "]}";
    {
        std::lock_guard<std::mutex> lock(g_mu);
        g_profile = o.str();
    }
    WriteTrace();
    if (altPaths_.empty()) return;
    std::ostringstream alt;
    alt.precision(15);
    alt << ",\"alt_task_duration_us\":[";
    for (size_t i = 0; i < altPaths_.size(); ++i) {
        const CostTable table = AlternativeCosts(altPaths_[i].c_str());
        OverrideCosts(&table);
        double c, h, l;
        if (i) alt << ",";
        if (complete_ && ReplayAgain())
            alt << TaskUs(&c, &h, &l);
        else
            alt << "null";  // more than one wave, or a stopped launch
        OverrideCosts(nullptr);
    }
    alt << "]";
    std::lock_guard<std::mutex> lock(g_mu);
    g_profile.insert(g_profile.size() - 1, alt.str());
}

void LaunchTiming::WriteTrace()
{
    const double us = 1e6 / Costs().clockHz;
    const std::string path = TracePath();
    if (path.empty() || traces_.empty()) return;
    FILE *out = std::fopen(path.c_str(), "w");
    if (out == nullptr) {
        std::fprintf(stderr, "[ascendc-emu] cannot write the trace to %s\n", path.c_str());
        return;
    }
    // Chrome trace / Perfetto: one process per AI core, one thread per (sub-core, pipe) that has
    // spans; µs. A cross-core flag is a flow arrow from a zero-length "CrossCoreSetFlag" slice on
    // the setter's scalar track to a "CrossCoreWaitFlag" slice where the wait was released; an
    // IBSet / IBWait slot likewise, from the releasing call's slot write ("IBSlot").
    constexpr int kS = 6;  // Pipe::S, the scalar unit's track
    int truncated = 0;
    for (uint32_t b = 0; b < cfg_.blockDim; ++b)
        for (int k = 0; k < 3; ++k) truncated += Active(k) && ReplayClock(b * 3 + k).traceFull ? 1 : 0;
    std::fprintf(out,
                 "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"kernel\":\"%s\",\"model\":\"modelled device time\","
                 "\"sub_cores_truncated_at_%zu_spans\":%d},\"traceEvents\":[",
                 cfg_.name, CoreClock::kMaxTraceSpans, truncated);
    const char *subName[] = {"aic", "aiv0", "aiv1"};
    std::vector<uint8_t> used(traces_.size(), 0);  // bit p: the sub-core has spans on pipe p
    for (size_t i = 0; i < traces_.size(); ++i)
        for (const TraceSpan &sp : traces_[i]) {
            used[i] |= 1u << (sp.pipe == kFlowPipe ? kS : sp.pipe);
            if (sp.pipe == kFlowPipe && sp.from >= 0 && static_cast<size_t>(sp.from) < used.size())
                used[sp.from] |= 1u << kS;
        }
    bool first = true;
    int flowId = 0;
    for (uint32_t b = 0; b < cfg_.blockDim; ++b) {
        std::fprintf(out, "%s{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"args\":{\"name\":\"core %u\"}}",
                     first ? "" : ",", b, b);
        first = false;
        for (int k = 0; k < 3; ++k) {
            if (!Active(k)) continue;
            for (int p = 0; p < kPipes; ++p)
                if (used[b * 3 + k] & (1u << p))
                    std::fprintf(
                        out,
                        ",{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%u,\"tid\":%d,\"args\":{\"name\":\"%s %s\"}}",
                        b, k * 8 + p, subName[k], kPipeNames[p]);
            for (const TraceSpan &sp : traces_[b * 3 + k]) {
                if (sp.pipe != kFlowPipe) {
                    std::fprintf(out, ",{\"ph\":\"X\",\"name\":\"%s\",\"pid\":%u,\"tid\":%d,\"ts\":%.4f,\"dur\":%.4f}",
                                 sp.name, b, k * 8 + sp.pipe, sp.start * us, (sp.end - sp.start) * us);
                    continue;
                }
                const int fb = sp.from / 3, fk = sp.from % 3;
                ++flowId;
                // IBSet / IBWait (the flow names the waiting call): the other call's slot write released it.
                const bool ib = std::strcmp(sp.name, "CrossCoreFlag") != 0;
                const char *setName = !ib                                   ? "CrossCoreSetFlag"
                                      : std::strcmp(sp.name, "IBWait") == 0 ? "IBSet"
                                                                            : "IBWait";
                const char *waitName = ib ? sp.name : "CrossCoreWaitFlag";
                const char *flow = ib ? "IBSlot" : "CrossCoreFlag";
                const char *arg = ib ? "eventID" : "flag";
                // A meeting of all vector cores (CrossCoreSetFlag mode 0) can be released by the
                // waiting core's own arrival: both slices, no arrow from a core to itself.
                const bool self = sp.from == static_cast<int>(b * 3 + k);
                std::fprintf(out,
                             ",{\"ph\":\"X\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%.4f,\"dur\":0,"
                             "\"args\":{\"%s\":%d,\"to\":\"core %u %s\"}}",
                             setName, fb, fk * 8 + kS, sp.start * us, arg, sp.flag, b, subName[k]);
                if (!self)
                    std::fprintf(out,
                                 ",{\"ph\":\"s\",\"name\":\"%s\",\"cat\":\"%s\",\"id\":%d,\"pid\":%d,\"tid\":%d,"
                                 "\"ts\":%.4f}",
                                 flow, flow, flowId, fb, fk * 8 + kS, sp.start * us);
                std::fprintf(out,
                             ",{\"ph\":\"X\",\"name\":\"%s\",\"pid\":%u,\"tid\":%d,\"ts\":%.4f,\"dur\":0,"
                             "\"args\":{\"%s\":%d,\"from\":\"core %d %s\"}}",
                             waitName, b, k * 8 + kS, sp.end * us, arg, sp.flag, fb, subName[fk]);
                if (!self)
                    std::fprintf(out,
                                 ",{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"%s\",\"cat\":\"%s\",\"id\":%d,"
                                 "\"pid\":%u,\"tid\":%d,\"ts\":%.4f}",
                                 flow, flow, flowId, b, k * 8 + kS, sp.end * us);
            }
        }
    }
    std::fprintf(out, "]}\n");
    std::fclose(out);
}

}  // namespace emu

extern "C" const char *ascendc_emu_last_profile_json(void)
{
    static thread_local std::string copy;
    copy = emu::LastLaunchProfileJson();
    return copy.c_str();
}

extern "C" const char *ascendc_emu_cost_table_json(void)
{
    static thread_local std::string copy;
    copy = emu::CostTableJson();
    return copy.c_str();
}

extern "C" void ascendc_emu_set_trace_path(const char *path) { emu::SetTracePath(path); }
