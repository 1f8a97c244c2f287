// Seam: the emulated device (global) memory. aclrtMalloc, AscendC::GmAlloc and the GM bounds
// checks of GlobalTensor/DataCopy all go through this one allocation table.
#pragma once
#include <cstddef>
#include <cstdint>

namespace emu {

// Allocates `bytes` of device memory, zero-filled, rounded up to the device's allocation
// granularity (see device_memory.cpp for the rule and its source). Never returns nullptr for
// bytes > 0 unless the emulated HBM capacity is exhausted.
void *DeviceAlloc(size_t bytes, const char *who);
// Same, but `usableBytes` is used as is (the caller already applied its own rounding rule,
// e.g. aclrtMalloc's per-policy one); `requestedBytes` is what the user asked for.
void *DeviceAllocUsable(size_t usableBytes, size_t requestedBytes, const char *who);
void DeviceFree(void *ptr, const char *who);  // aborts on a pointer that is not an allocation base

struct DeviceAllocation {
    uintptr_t base = 0;
    size_t requested = 0;  // bytes asked for
    size_t usable = 0;     // bytes after rounding (all of them are backed by host memory)
};
// Finds the allocation that contains [ptr, ptr + bytes). Returns false when the range is not
// wholly inside one live allocation's usable bytes.
bool DeviceFind(const void *ptr, size_t bytes, DeviceAllocation *out);

}  // namespace emu
