// The emulated device memory: one table of live allocations shared by aclrtMalloc,
// AscendC::GmAlloc and the GM bounds checks of the kernel APIs.
// Rounding rule (acl runtime reference, aclrtMalloc): the size is rounded up to a
// multiple of 32 bytes and 32 bytes are added; the base is 64-byte aligned on the device (we
// align to 512 bytes, a multiple of it).
#include "emu/device_memory.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>

#include "emu/soc.h"

namespace emu {
namespace {

std::shared_mutex g_mu;                         // many cores look up, few threads allocate
std::map<uintptr_t, DeviceAllocation> g_table;  // by base
uint64_t g_live = 0;

size_t Rounded(size_t bytes) { return (bytes + 31) / 32 * 32 + 32; }

}  // namespace

void *DeviceAlloc(size_t bytes, const char *who)
{
    return DeviceAllocUsable(bytes == 0 ? 0 : Rounded(bytes), bytes, who);
}

void *DeviceAllocUsable(size_t usable, size_t bytes, const char *who)
{
    if (bytes == 0 || usable < bytes) return nullptr;
    std::unique_lock<std::shared_mutex> lock(g_mu);
    if (g_live + usable > CurrentSoc().hbmBytes) {
        std::fprintf(stderr, "[ascendc-emu] %s: device memory exhausted (%zu bytes asked, %llu live, %s HBM %llu)\n",
                     who, bytes, (unsigned long long)g_live, CurrentSoc().name,
                     (unsigned long long)CurrentSoc().hbmBytes);
        return nullptr;
    }
    void *p = std::aligned_alloc(512, (usable + 511) / 512 * 512);
    if (p == nullptr) return nullptr;
    // Real device memory comes back with whatever was there: ASCEND_EMU_POISON_ALLOC=1 fills
    // new allocations with 0xFF bytes (NaN in fp16/bf16/fp32) so a kernel that reads a
    // workspace it never initialised shows it.
    const char *poison = std::getenv("ASCEND_EMU_POISON_ALLOC");  // read per allocation: tests switch it
    std::memset(p, poison != nullptr && poison[0] == '1' ? 0xFF : 0, usable);
    DeviceAllocation a;
    a.base = reinterpret_cast<uintptr_t>(p);
    a.requested = bytes;
    a.usable = usable;
    g_table[a.base] = a;
    g_live += usable;
    return p;
}

void DeviceFree(void *ptr, const char *who)
{
    if (ptr == nullptr) return;
    std::unique_lock<std::shared_mutex> lock(g_mu);
    auto it = g_table.find(reinterpret_cast<uintptr_t>(ptr));
    if (it == g_table.end()) {
        std::fprintf(stderr, "[ascendc-emu] %s: %p is not the base of a live device allocation\n", who, ptr);
        std::abort();
    }
    g_live -= it->second.usable;
    g_table.erase(it);
    std::free(ptr);
}

bool DeviceFind(const void *ptr, size_t bytes, DeviceAllocation *out)
{
    const uintptr_t p = reinterpret_cast<uintptr_t>(ptr);
    std::shared_lock<std::shared_mutex> lock(g_mu);
    auto it = g_table.upper_bound(p);
    if (it == g_table.begin()) return false;
    --it;
    const DeviceAllocation &a = it->second;
    if (p < a.base || p - a.base > a.usable || bytes > a.usable - (p - a.base)) return false;
    if (out != nullptr) *out = a;
    return true;
}

}  // namespace emu
