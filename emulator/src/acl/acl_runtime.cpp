// acl runtime lifecycle on the CPU target: init, the single device (id 0), contexts, streams.
// Every launch runs to completion before the aclnn call returns, so a stream is only a handle
// that must exist; synchronising it has nothing to wait for.
#include <mutex>
#include <set>

#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "aclnn/opdev/op_errno.h"
#include "emu/log.h"
#include "emu/soc.h"

namespace {

std::mutex g_mu;
bool g_initialized = false;
int32_t g_currentDevice = -1;
std::set<void *> g_streams;
std::set<void *> g_contexts;
void *g_currentContext = nullptr;

constexpr uint32_t kDeviceCount = 1;

aclError CheckDevice(const char *api, int32_t deviceId)
{
    if (deviceId < 0 || static_cast<uint32_t>(deviceId) >= kDeviceCount) {
        emu::LogError("%s: device %d does not exist (the CPU target has %u device, id 0)", api, deviceId, kDeviceCount);
        return ACL_ERROR_RT_INVALID_DEVICEID;
    }
    return ACL_SUCCESS;
}

}  // namespace

extern "C" {

aclError aclInit(const char *)
{
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_initialized) return ACL_ERROR_REPEAT_INITIALIZE;
    g_initialized = true;
    return ACL_SUCCESS;
}

aclError aclFinalize(void)
{
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_initialized) return ACL_ERROR_UNINITIALIZE;
    g_initialized = false;
    return ACL_SUCCESS;
}

aclnnStatus aclnnInit(const char *) { return ACLNN_SUCCESS; }
aclnnStatus aclnnFinalize(void) { return ACLNN_SUCCESS; }

aclError aclrtSetDevice(int32_t deviceId)
{
    aclError err = CheckDevice("aclrtSetDevice", deviceId);
    if (err != ACL_SUCCESS) return err;
    std::lock_guard<std::mutex> lock(g_mu);
    g_currentDevice = deviceId;
    return ACL_SUCCESS;
}

aclError aclrtResetDevice(int32_t deviceId)
{
    aclError err = CheckDevice("aclrtResetDevice", deviceId);
    if (err != ACL_SUCCESS) return err;
    std::lock_guard<std::mutex> lock(g_mu);
    g_currentDevice = -1;
    return ACL_SUCCESS;
}

aclError aclrtGetDevice(int32_t *deviceId)
{
    if (deviceId == nullptr) return ACL_ERROR_INVALID_PARAM;
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_currentDevice < 0) return ACL_ERROR_RT_CONTEXT_NULL;
    *deviceId = g_currentDevice;
    return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t *count)
{
    if (count == nullptr) return ACL_ERROR_INVALID_PARAM;
    *count = kDeviceCount;
    return ACL_SUCCESS;
}

aclError aclrtGetRunMode(aclrtRunMode *runMode)
{
    if (runMode == nullptr) return ACL_ERROR_INVALID_PARAM;
    *runMode = ACL_HOST;
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeDevice(void) { return ACL_SUCCESS; }

const char *aclrtGetSocName(void) { return emu::CurrentSoc().name; }

aclError aclrtGetHardwareSyncAddr(void **addr)
{
    if (addr == nullptr) {
        emu::LogError("aclrtGetHardwareSyncAddr: addr is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    static uint64_t syncBlock[16];  // stands for the device's FFTS block; never written
    *addr = syncBlock;
    return ACL_SUCCESS;
}

aclError aclrtCreateContext(aclrtContext *context, int32_t deviceId)
{
    if (context == nullptr) {
        emu::LogError("aclrtCreateContext: context is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    aclError err = CheckDevice("aclrtCreateContext", deviceId);
    if (err != ACL_SUCCESS) return err;
    std::lock_guard<std::mutex> lock(g_mu);
    *context = new char;  // a unique handle
    g_contexts.insert(*context);
    g_currentContext = *context;
    return ACL_SUCCESS;
}

aclError aclrtDestroyContext(aclrtContext context)
{
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_contexts.erase(context) == 0) {
        emu::LogError("aclrtDestroyContext: %p is not a live context", context);
        return ACL_ERROR_INVALID_PARAM;
    }
    if (g_currentContext == context) g_currentContext = nullptr;
    delete static_cast<char *>(context);
    return ACL_SUCCESS;
}

aclError aclrtSetCurrentContext(aclrtContext context)
{
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_contexts.count(context) == 0) {
        emu::LogError("aclrtSetCurrentContext: %p is not a live context", context);
        return ACL_ERROR_INVALID_PARAM;
    }
    g_currentContext = context;
    return ACL_SUCCESS;
}

aclError aclrtGetCurrentContext(aclrtContext *context)
{
    if (context == nullptr) return ACL_ERROR_INVALID_PARAM;
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_currentContext == nullptr) return ACL_ERROR_RT_CONTEXT_NULL;
    *context = g_currentContext;
    return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream *stream)
{
    if (stream == nullptr) {
        emu::LogError("aclrtCreateStream: stream is null");
        return ACL_ERROR_INVALID_PARAM;
    }
    std::lock_guard<std::mutex> lock(g_mu);
    *stream = new char;
    g_streams.insert(*stream);
    return ACL_SUCCESS;
}

aclError aclrtDestroyStream(aclrtStream stream)
{
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_streams.erase(stream) == 0) {
        emu::LogError("aclrtDestroyStream: %p is not a live stream", stream);
        return ACL_ERROR_INVALID_PARAM;
    }
    delete static_cast<char *>(stream);
    return ACL_SUCCESS;
}

aclError aclrtSynchronizeStream(aclrtStream stream)
{
    std::lock_guard<std::mutex> lock(g_mu);
    if (stream != nullptr && g_streams.count(stream) == 0) {  // nullptr: the default stream
        emu::LogError("aclrtSynchronizeStream: %p is not a live stream", stream);
        return ACL_ERROR_INVALID_PARAM;
    }
    return ACL_SUCCESS;
}

}  // extern "C"
