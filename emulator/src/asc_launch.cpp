// The run-time half of emu/asc_launch.h: the registry of per-core-kind kernel entries and the
// launch of a `<<<>>>` site.
#include "emu/asc_launch.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "emu/launch.h"
#include "foreign_headers.h"

namespace emu {
namespace asc {
namespace {

struct Entries {
    Entry pass[2] = {};
    uint64_t stamp[2] = {};  // ASCEND_EMU_ABI_STAMP of the headers each pass was built with
};

std::mutex &RegistryMu()
{
    static std::mutex mu;
    return mu;
}
// site -> source file -> entries. The cube pass's entries of a site inside an inline function or
// a template (the same code in every file, one registration for the program) may be filed under
// another source file than the vector pass's (one per file).
std::map<std::string, std::map<std::string, Entries>> &Registry()
{
    static std::map<std::string, std::map<std::string, Entries>> r;
    return r;
}

// True when the machine code of `entry` is a bare return: the pass compiled no code for its core
// kind (the kernel body is empty there after constant folding of g_coreType), which is how bisheng
// tells a cube-only or vector-only kernel from a MIX one. Device passes are optimised (asc_cc), so
// an empty body is exactly a return; anything else counts as code.
bool IsEmptyBody(Entry entry)
{
    const auto *p = reinterpret_cast<const unsigned char *>(entry);
#if defined(__x86_64__)
    if (std::memcmp(p, "\xf3\x0f\x1e\xfa", 4) == 0) p += 4;  // endbr64
    return p[0] == 0xc3 || (p[0] == 0xf3 && p[1] == 0xc3);   // ret, rep ret
#elif defined(__aarch64__)
    uint32_t w;
    for (;;) {
        std::memcpy(&w, p, 4);
        if (w != 0xd503233f && w != 0xd503245f && w != 0xd503241f) break;  // paciasp, bti c, bti
        p += 4;
    }
    return w == 0xd65f03c0 || w == 0xd65f0bff;  // ret, retaa
#else
    (void)p;
    return false;
#endif
}

}  // namespace

bool RegisterEntry(const char *unit, const char *site, int pass, Entry entry, uint64_t abiStamp)
{
    std::lock_guard<std::mutex> lock(RegistryMu());
    Entries &e = Registry()[site][unit];
    e.pass[pass] = entry;
    e.stamp[pass] = abiStamp;
    return true;
}

// What kernels built against headers older than the stamp call (same name, no stamp): kept so
// that such a binary still loads and its launch is refused with a message instead of crashing.
bool RegisterEntry(const char *unit, const char *site, int pass, Entry entry);
bool RegisterEntry(const char *unit, const char *site, int pass, Entry entry)
{
    return RegisterEntry(unit, site, pass, entry, 0);
}

void LaunchSite(const char *unit, const char *site, const char *name, uint32_t blockDim, void * /*l2ctrl*/,
                void * /*stream*/, void *pack)
{
    Entries e;
    {
        std::lock_guard<std::mutex> lock(RegistryMu());
        auto it = Registry().find(site);
        if (it != Registry().end()) {
            auto own = it->second.find(unit);
            if (own != it->second.end()) e = own->second;
            for (int p = 0; p < 2; ++p)
                for (const auto &other : it->second)
                    if (e.pass[p] == nullptr) {
                        e.pass[p] = other.second.pass[p];
                        e.stamp[p] = other.second.stamp[p];
                    }
        }
    }
    if (e.pass[kCubePass] == nullptr || e.pass[kVectorPass] == nullptr) {
        std::fprintf(stderr,
                     "[ascendc-emu] launch of %s<<<%u>>> from %s: no %s entry was compiled for this launch; build the "
                     "source with the ASC compiler driver (find_package(ASC), LANGUAGE ASC)\n",
                     name, blockDim, unit, e.pass[kCubePass] == nullptr ? "cube" : "vector");
        std::abort();
    }
    for (uint64_t stamp : e.stamp) {
        if (stamp == ASCEND_EMU_ABI_STAMP) continue;
        // The kernel's objects were compiled against other headers: the runtime's types (TPipe,
        // queues, tensors) may be laid out differently, so running it would corrupt memory.
        const std::string launch = std::string(name) + "<<<" + std::to_string(blockDim) + ">>> from " + unit;
        std::fprintf(stderr, "%s\n", ForeignHeadersMessage(launch, "the kernel", stamp).c_str());
        std::abort();
    }
    const bool cube = !IsEmptyBody(e.pass[kCubePass]);
    const bool vector = !IsEmptyBody(e.pass[kVectorPass]);
    LaunchConfig cfg;
    cfg.name = name;
    cfg.blockDim = blockDim;
    cfg.mix = cube && vector ? CoreMix::MIX_AIC_1_2 : (cube ? CoreMix::AIC_ONLY : CoreMix::AIV_ONLY);
    const Entry aic = e.pass[kCubePass], aiv = e.pass[kVectorPass];
    Launch(cfg, [aic, pack] { aic(pack); }, [aiv, pack] { aiv(pack); }, ASCEND_EMU_ABI_STAMP);
}

}  // namespace asc
}  // namespace emu
