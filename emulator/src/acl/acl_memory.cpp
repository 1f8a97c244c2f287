// Device memory of the acl runtime on the CPU target: aclrtMalloc/Free/Memcpy/Memset.
//
// Rounding rule (CANN runtime doc of aclrtMemMallocPolicy): huge-page allocations are made in
// 2 MiB units; ACL_MEM_MALLOC_HUGE_FIRST uses normal pages for requests up to 1 MiB and huge
// pages above. The normal page size is not stated there; we take 4 KiB. So a request of R bytes
// owns round_up(R, 4 KiB) bytes (R <= 1 MiB or NORMAL_ONLY) or round_up(R, 2 MiB) bytes — all of
// them backed by host memory and registered with emu::DeviceAlloc, so kernels and copies may
// touch them as a device would. A copy that reaches past the requested size but stays inside
// the rounded size prints a warning (the spec examples copy an fp16 output into a double
// vector, which the device's page granularity makes legal); past the rounded size it is an
// error and nothing is copied. HUGE1G policies are treated as 2 MiB pages (1 GiB pages would
// commit a gigabyte of host memory per allocation).
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "acl/acl_rt.h"
#include "emu/device_memory.h"
#include "emu/log.h"

namespace {

constexpr size_t kNormalPage = 4 * 1024;
constexpr size_t kHugePage = 2 * 1024 * 1024;
constexpr size_t kHugeFirstThreshold = 1024 * 1024;

struct Allocation {
    size_t requested;
    size_t usable;
};

std::mutex g_mu;
std::map<uintptr_t, Allocation> g_allocations;  // by base address
std::set<void *> g_hostAllocations;             // live aclrtMallocHost blocks

size_t RoundUp(size_t n, size_t unit) { return (n + unit - 1) / unit * unit; }

size_t UsableSize(size_t size, aclrtMemMallocPolicy policy)
{
    switch (static_cast<unsigned>(policy) & 0xFFu) {
        case ACL_MEM_MALLOC_HUGE_ONLY:
        case ACL_MEM_MALLOC_HUGE_ONLY_P2P:
        case ACL_MEM_MALLOC_HUGE1G_ONLY:
        case ACL_MEM_MALLOC_HUGE1G_ONLY_P2P:
            return RoundUp(size, kHugePage);
        case ACL_MEM_MALLOC_NORMAL_ONLY:
        case ACL_MEM_MALLOC_NORMAL_ONLY_P2P:
            return RoundUp(size, kNormalPage);
        default:  // HUGE_FIRST (also the meaning of a bare bandwidth flag)
            return RoundUp(size, size > kHugeFirstThreshold ? kHugePage : kNormalPage);
    }
}

// The live allocation containing p, or nullptr.
const std::pair<const uintptr_t, Allocation> *Owner(const void *p)
{
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    auto it = g_allocations.upper_bound(a);
    if (it == g_allocations.begin()) return nullptr;
    --it;
    return a < it->first + it->second.usable ? &*it : nullptr;
}

// Checks [p, p + count) of device memory for `what` ("destination"/"source").
aclError CheckDeviceRange(const char *api, const char *what, const void *p, size_t count)
{
    const auto *owner = Owner(p);
    if (owner == nullptr) {
        emu::LogError("%s: %s %p is not inside a live device allocation (aclrtMalloc)", api, what, p);
        return ACL_ERROR_INVALID_PARAM;
    }
    const size_t offset = reinterpret_cast<uintptr_t>(p) - owner->first;
    const Allocation &a = owner->second;
    if (count > a.usable - offset) {
        emu::LogError("%s: %s range of %zu bytes at offset %zu runs past the device allocation at %p "
                      "(requested %zu bytes, usable %zu bytes after rounding); nothing copied",
                      api, what, count, offset, reinterpret_cast<void *>(owner->first), a.requested, a.usable);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (count > a.requested - (offset < a.requested ? offset : a.requested)) {
        emu::LogWarning("%s: %s range of %zu bytes at offset %zu goes past the %zu bytes requested from "
                        "aclrtMalloc (within the %zu bytes the device's page rounding provides)",
                        api, what, count, offset, a.requested, a.usable);
    }
    return ACL_SUCCESS;
}

}  // namespace

extern "C" {

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    if (devPtr == nullptr) {
        emu::LogError("aclrtMalloc: devPtr is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    *devPtr = nullptr;
    if (size == 0) {
        emu::LogError("aclrtMalloc: size is 0");
        return ACL_ERROR_INVALID_PARAM;
    }
    // The page rounding is the whole slack: DeviceAlloc would round (and pad) a second time and
    // let kernels run past what the device really provides.
    const size_t usable = UsableSize(size, policy);
    void *p = emu::DeviceAllocUsable(usable, size, "aclrtMalloc");
    if (p == nullptr) {
        emu::LogError("aclrtMalloc: cannot allocate %zu bytes of device memory", size);
        return ACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    std::lock_guard<std::mutex> lock(g_mu);
    g_allocations[reinterpret_cast<uintptr_t>(p)] = Allocation{size, usable};
    *devPtr = p;
    return ACL_SUCCESS;
}

aclError aclrtFree(void *devPtr)
{
    {
        std::lock_guard<std::mutex> lock(g_mu);
        auto it = g_allocations.find(reinterpret_cast<uintptr_t>(devPtr));
        if (devPtr == nullptr || it == g_allocations.end()) {
            emu::LogError("aclrtFree: %p is not the base of a live aclrtMalloc allocation", devPtr);
            return ACL_ERROR_INVALID_PARAM;
        }
        g_allocations.erase(it);
    }
    emu::DeviceFree(devPtr, "aclrtFree");
    return ACL_SUCCESS;
}

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    if (hostPtr == nullptr || size == 0) {
        emu::LogError("aclrtMallocHost: %s", hostPtr == nullptr ? "hostPtr is null" : "size is 0");
        return ACL_ERROR_INVALID_PARAM;
    }
    *hostPtr = std::malloc(size);
    if (*hostPtr == nullptr) return ACL_ERROR_BAD_ALLOC;
    std::lock_guard<std::mutex> lock(g_mu);
    g_hostAllocations.insert(*hostPtr);
    return ACL_SUCCESS;
}

// A pointer aclrtMallocHost did not return (a stack object, a block freed twice) is refused with
// an error, as the runtime refuses it, instead of reaching free().
aclError aclrtFreeHost(void *hostPtr)
{
    {
        std::lock_guard<std::mutex> lock(g_mu);
        if (g_hostAllocations.erase(hostPtr) == 0) {
            emu::LogError("aclrtFreeHost: %p is not a live aclrtMallocHost allocation", hostPtr);
            return ACL_ERROR_INVALID_PARAM;
        }
    }
    std::free(hostPtr);
    return ACL_SUCCESS;
}

aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
    if (devPtr == nullptr) {
        emu::LogError("aclrtMemset: devPtr is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    if (count > maxCount) {
        emu::LogError("aclrtMemset: count %zu exceeds maxCount %zu", count, maxCount);
        return ACL_ERROR_INVALID_PARAM;
    }
    std::lock_guard<std::mutex> lock(g_mu);
    aclError err = CheckDeviceRange("aclrtMemset", "destination", devPtr, count);
    if (err != ACL_SUCCESS) return err;
    std::memset(devPtr, value, count);
    return ACL_SUCCESS;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind)
{
    const char *api = "aclrtMemcpy";
    if (dst == nullptr || src == nullptr) {
        emu::LogError("%s: %s is null", api, dst == nullptr ? "dst" : "src");
        return ACL_ERROR_INVALID_PARAM;
    }
    if (count > destMax) {
        emu::LogError("%s: count %zu exceeds destMax %zu", api, count, destMax);
        return ACL_ERROR_INVALID_PARAM;
    }
    std::lock_guard<std::mutex> lock(g_mu);
    const bool dstDevice = Owner(dst) != nullptr;
    const bool srcDevice = Owner(src) != nullptr;
    bool wantDst = dstDevice, wantSrc = srcDevice;
    switch (kind) {
        case ACL_MEMCPY_HOST_TO_HOST:
            wantDst = false;
            wantSrc = false;
            break;
        case ACL_MEMCPY_HOST_TO_DEVICE:
        case ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE:
            wantDst = true;
            wantSrc = false;
            break;
        case ACL_MEMCPY_DEVICE_TO_HOST:
            wantDst = false;
            wantSrc = true;
            break;
        case ACL_MEMCPY_DEVICE_TO_DEVICE:
        case ACL_MEMCPY_INNER_DEVICE_TO_DEVICE:
        case ACL_MEMCPY_INTER_DEVICE_TO_DEVICE:
            wantDst = true;
            wantSrc = true;
            break;
        case ACL_MEMCPY_DEFAULT:
            break;  // the runtime infers the direction from the pointers
        default:
            emu::LogError("%s: unknown kind %d", api, static_cast<int>(kind));
            return ACL_ERROR_INVALID_PARAM;
    }
    // A host pointer handed in as device memory (or the reverse) is a caller error on a device.
    if (wantDst != dstDevice || wantSrc != srcDevice) {
        emu::LogError("%s: kind %d expects a %s destination and a %s source, got dst %p (%s) and src %p (%s)", api,
                      static_cast<int>(kind), wantDst ? "device" : "host", wantSrc ? "device" : "host", dst,
                      dstDevice ? "device" : "host", src, srcDevice ? "device" : "host");
        return ACL_ERROR_INVALID_PARAM;
    }
    if (dstDevice) {
        aclError err = CheckDeviceRange(api, "destination", dst, count);
        if (err != ACL_SUCCESS) return err;
    }
    if (srcDevice) {
        aclError err = CheckDeviceRange(api, "source", src, count);
        if (err != ACL_SUCCESS) return err;
    }
    std::memmove(dst, src, count);
    return ACL_SUCCESS;
}

aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind, aclrtStream)
{
    return aclrtMemcpy(dst, destMax, src, count, kind);  // every stream is synchronous here
}

}  // extern "C"
