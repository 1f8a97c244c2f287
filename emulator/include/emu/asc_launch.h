// `kernel<<<blockDim, l2ctrl, stream>>>(args...)` for Ascend C single-source files built by the
// ASC compiler driver (cmake/asc/asc_cc). Not a CANN header: the driver includes it first in
// every pass and rewrites each launch into
//     ::emu::asc::Launcher(<lambda calling kernel>, "kernel", blockDim, l2ctrl, stream)(args...)
// The source is compiled once per core kind: the cube pass (__DAV_C220_CUBE__, which also gives
// the program its host code) and the vector pass (__DAV_C220_VEC__), each with its own
// compile-time g_coreType. Each pass instantiates, for every launch site, an entry that runs the
// kernel body it compiled, and registers it at start-up under the site's key (the source file and
// the mangled name of the site's type, the same in both passes). The launch looks the entries up
// and runs the cube entry on the AIC threads and the vector entry on the AIV threads.
#pragma once
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

#include "emu/abi_stamp.h"

#ifndef __EMU_ASC_UNIT__
#define __EMU_ASC_UNIT__ __FILE__
#endif

namespace emu {
namespace asc {

enum Pass : int { kCubePass = 0, kVectorPass = 1 };
#if defined(__DAV_C220_VEC__) || defined(__DAV_VEC__)
constexpr int kThisPass = kVectorPass;
#else
constexpr int kThisPass = kCubePass;
#endif

// Runs one core kind's kernel body on the argument pack of a launch.
using Entry = void (*)(void *pack);

// Called at start-up by each pass: `entry` is what pass `pass` compiled for launch site `site` of
// source `unit`, against the headers whose digest is `abiStamp` (ASCEND_EMU_ABI_STAMP). Returns
// true (the value initialises a static). A site registered with another stamp than the runtime's
// does not launch: its kernel was built against another emulator's headers.
bool RegisterEntry(const char *unit, const char *site, int pass, Entry entry, uint64_t abiStamp);

// Runs the entries registered for the site: blockDim AI cores; the kernel type (AIV only, AIC
// only, MIX 1:2) follows from which core kinds have a non-empty body, as bisheng decides it.
void LaunchSite(const char *unit, const char *site, const char *name, uint32_t blockDim, void *l2ctrl, void *stream,
                void *pack);

template <class F, class... A> struct Site {
    struct Pack {
        F call;
        std::tuple<A...> args;
    };
    // Each core gets its own copy of the arguments, as each core of the NPU receives them by value.
    static void Run(void *p)
    {
        const Pack &pack = *static_cast<const Pack *>(p);
        std::tuple<A...> args = pack.args;
        std::apply(pack.call, args);
    }
    static inline const bool registered =
        RegisterEntry(__EMU_ASC_UNIT__, typeid(Site).name(), kThisPass, &Run, ASCEND_EMU_ABI_STAMP);
};

template <class F> struct Launcher {
    F call;
    const char *name;
    uint32_t blockDim;
    void *l2ctrl = nullptr;
    void *stream = nullptr;

    Launcher(F f, const char *kernelName, uint32_t dim, void *l2 = nullptr, void *s = nullptr)
        : call(f), name(kernelName), blockDim(dim), l2ctrl(l2), stream(s)
    {
    }

    template <class... A> void operator()(A &&...args) const
    {
        using S = Site<F, std::decay_t<A>...>;
        (void)S::registered;
        typename S::Pack pack{call, std::tuple<std::decay_t<A>...>(std::forward<A>(args)...)};
        LaunchSite(__EMU_ASC_UNIT__, typeid(S).name(), name, blockDim, l2ctrl, stream, &pack);
    }
};

}  // namespace asc
}  // namespace emu
