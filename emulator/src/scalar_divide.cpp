// See scalar_divide.h.
#include "scalar_divide.h"

#include <csignal>
#include <cstdint>
#include <cstring>
#include <mutex>

#if defined(__x86_64__) && defined(__linux__)
#include <ucontext.h>
#endif

#include "emu/core.h"

namespace emu {
namespace {

thread_local int t_faults = 0;

#if defined(__x86_64__) && defined(__linux__)
// Length of the div/idiv at `p` (legacy prefixes, REX, F6/F7 /6 or /7, ModRM, SIB, displacement)
// and its operand size in bytes; 0 when `p` is not one.
int DivLength(const uint8_t *p, int *size)
{
    int n = 0;
    bool osize = false, rexw = false;
    while (p[n] == 0x66 || p[n] == 0x67 || p[n] == 0xf2 || p[n] == 0xf3 || p[n] == 0x2e || p[n] == 0x3e ||
           p[n] == 0x26 || p[n] == 0x64 || p[n] == 0x65 || p[n] == 0x36) {
        osize = osize || p[n] == 0x66;
        ++n;
    }
    if ((p[n] & 0xf0) == 0x40) rexw = (p[n++] & 0x08) != 0;
    const uint8_t op = p[n++];
    if (op != 0xf6 && op != 0xf7) return 0;
    const uint8_t modrm = p[n++];
    const int reg = (modrm >> 3) & 7, mod = modrm >> 6, rm = modrm & 7;
    if (reg != 6 && reg != 7) return 0;
    if (mod != 3 && rm == 4) {  // SIB
        const uint8_t sib = p[n++];
        if (mod == 0 && (sib & 7) == 5) n += 4;
    }
    if (mod == 1)
        n += 1;
    else if (mod == 2 || (mod == 0 && rm == 5))
        n += 4;
    *size = op == 0xf6 ? 1 : (rexw ? 8 : (osize ? 2 : 4));
    return n;
}

struct sigaction g_previous;

void OnSigfpe(int sig, siginfo_t *info, void *uctx)
{
    auto *uc = static_cast<ucontext_t *>(uctx);
    greg_t *r = uc->uc_mcontext.gregs;
    int size = 0;
    const int len = t_currentCore != nullptr && info->si_code == FPE_INTDIV
                        ? DivLength(reinterpret_cast<const uint8_t *>(r[REG_RIP]), &size)
                        : 0;
    if (len == 0) {  // not a kernel's division by zero: the default action
        sigaction(sig, &g_previous, nullptr);
        return;
    }
    const uint64_t a = static_cast<uint64_t>(r[REG_RAX]);
    if (size == 1) {
        r[REG_RAX] = static_cast<greg_t>((a & ~0xffffull) | ((a & 0xff) << 8));  // AL = 0, AH = AL
    } else if (size == 2) {
        r[REG_RAX] = static_cast<greg_t>(a & ~0xffffull);
        r[REG_RDX] = static_cast<greg_t>((static_cast<uint64_t>(r[REG_RDX]) & ~0xffffull) | (a & 0xffff));
    } else {
        r[REG_RAX] = 0;
        r[REG_RDX] = static_cast<greg_t>(size == 4 ? (a & 0xffffffffull) : a);
    }
    r[REG_RIP] += len;
    ++t_faults;
}
#endif

}  // namespace

void InstallScalarDivideHandler()
{
#if defined(__x86_64__) && defined(__linux__)
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction sa;
        std::memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = OnSigfpe;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGFPE, &sa, &g_previous);
    });
#endif
}

int TakeScalarDivideFaults()
{
    const int n = t_faults;
    t_faults = 0;
    return n;
}

}  // namespace emu
