// Seed-style example program for the cube proof operator, written like the aclnn examples of the
// operator specs: acl init, device tensors, the two-stage aclnn call, copy back, release.
// Checks the result against a host matmul and exits non-zero on a mismatch.
#include <cmath>
#include <cstdio>
#include <vector>

#include "acl/acl.h"
#include "aclnn_cube_matmul.h"

#define CHECK_RET(cond, return_expr)                                                                                   \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            return_expr;                                                                                               \
        }                                                                                                              \
    } while (0)

#define LOG_PRINT(message, ...)                                                                                        \
    do {                                                                                                               \
        printf(message, ##__VA_ARGS__);                                                                                \
    } while (0)

int64_t GetShapeSize(const std::vector<int64_t> &shape)
{
    int64_t size = 1;
    for (auto dim : shape) {
        size *= dim;
    }
    return size;
}

int Init(int32_t deviceId, aclrtStream *stream)
{
    auto ret = aclInit(nullptr);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclInit failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSetDevice(deviceId);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSetDevice failed. ERROR: %d\n", ret); return ret);
    ret = aclrtCreateStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtCreateStream failed. ERROR: %d\n", ret); return ret);
    return 0;
}

template <typename T>
int CreateAclTensor(const std::vector<T> &hostData, const std::vector<int64_t> &shape, void **deviceAddr,
                    aclDataType dataType, aclTensor **tensor)
{
    auto size = GetShapeSize(shape) * sizeof(T);
    auto ret = aclrtMalloc(deviceAddr, size, ACL_MEM_MALLOC_HUGE_FIRST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMalloc failed. ERROR: %d\n", ret); return ret);
    ret = aclrtMemcpy(*deviceAddr, size, hostData.data(), size, ACL_MEMCPY_HOST_TO_DEVICE);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtMemcpy failed. ERROR: %d\n", ret); return ret);
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; i--) {
        strides[i] = shape[i + 1] * strides[i + 1];
    }
    *tensor = aclCreateTensor(shape.data(), shape.size(), dataType, strides.data(), 0, aclFormat::ACL_FORMAT_ND,
                              shape.data(), shape.size(), *deviceAddr);
    return 0;
}

int main()
{
    // 1. device/stream initialisation
    int32_t deviceId = 0;
    aclrtStream stream;
    auto ret = Init(deviceId, &stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("Init acl failed. ERROR: %d\n", ret); return ret);

    // 2. inputs and output: c[M, N] = a[M, K] * b[K, N] in fp16, shapes not multiples of 16
    const int64_t m = 37, k = 70, n = 45;
    std::vector<int64_t> aShape = {m, k};
    std::vector<int64_t> bShape = {k, n};
    std::vector<int64_t> cShape = {m, n};
    std::vector<float> aValues(m * k), bValues(k * n);
    std::vector<aclFloat16> aHost(m * k), bHost(k * n), cHost(m * n, 0);
    for (int64_t i = 0; i < m * k; ++i) {
        aValues[i] = aclFloat16ToFloat(aclFloatToFloat16(static_cast<float>((i * 7) % 11 - 5) / 8.0f));
        aHost[i] = aclFloatToFloat16(aValues[i]);
    }
    for (int64_t i = 0; i < k * n; ++i) {
        bValues[i] = aclFloat16ToFloat(aclFloatToFloat16(static_cast<float>((i * 5) % 13 - 6) / 16.0f));
        bHost[i] = aclFloatToFloat16(bValues[i]);
    }
    void *aDeviceAddr = nullptr, *bDeviceAddr = nullptr, *cDeviceAddr = nullptr;
    aclTensor *a = nullptr, *b = nullptr, *c = nullptr;
    ret = CreateAclTensor(aHost, aShape, &aDeviceAddr, aclDataType::ACL_FLOAT16, &a);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(bHost, bShape, &bDeviceAddr, aclDataType::ACL_FLOAT16, &b);
    CHECK_RET(ret == ACL_SUCCESS, return ret);
    ret = CreateAclTensor(cHost, cShape, &cDeviceAddr, aclDataType::ACL_FLOAT16, &c);
    CHECK_RET(ret == ACL_SUCCESS, return ret);

    // 3. first stage: workspace size and executor
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor = nullptr;
    ret = aclnnCubeMatmulGetWorkspaceSize(a, b, c, &workspaceSize, &executor);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnCubeMatmulGetWorkspaceSize failed. ERROR: %d\n", ret); return ret);
    void *workspaceAddr = nullptr;
    if (workspaceSize > 0) {
        ret = aclrtMalloc(&workspaceAddr, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST);
        CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("allocate workspace failed. ERROR: %d\n", ret); return ret);
    }

    // 4. second stage, then wait for the stream
    ret = aclnnCubeMatmul(workspaceAddr, workspaceSize, executor, stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclnnCubeMatmul failed. ERROR: %d\n", ret); return ret);
    ret = aclrtSynchronizeStream(stream);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("aclrtSynchronizeStream failed. ERROR: %d\n", ret); return ret);

    // 5. copy the result back and compare with a host matmul (fp32 accumulation, fp16 output)
    auto size = GetShapeSize(cShape);
    std::vector<aclFloat16> result(size, 0);
    ret = aclrtMemcpy(result.data(), result.size() * sizeof(result[0]), cDeviceAddr, size * sizeof(result[0]),
                      ACL_MEMCPY_DEVICE_TO_HOST);
    CHECK_RET(ret == ACL_SUCCESS, LOG_PRINT("copy result from device to host failed. ERROR: %d\n", ret); return ret);
    double maxError = 0.0;
    for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
            float expected = 0.0f;
            for (int64_t p = 0; p < k; ++p) {
                expected += aValues[i * k + p] * bValues[p * n + j];
            }
            const double error = std::fabs(aclFloat16ToFloat(result[i * n + j]) - expected);
            maxError = error > maxError ? error : maxError;
        }
    }
    LOG_PRINT("result[0] is: %f\n", aclFloat16ToFloat(result[0]));
    LOG_PRINT("max abs error against the host matmul: %g\n", maxError);

    // 6. release
    aclDestroyTensor(a);
    aclDestroyTensor(b);
    aclDestroyTensor(c);
    aclrtFree(aDeviceAddr);
    aclrtFree(bDeviceAddr);
    aclrtFree(cDeviceAddr);
    if (workspaceSize > 0) {
        aclrtFree(workspaceAddr);
    }
    aclrtDestroyStream(stream);
    aclrtResetDevice(deviceId);
    aclFinalize();
    // fp16 output of sums up to ~|3|: half an ulp is below 2^-10.
    return maxError < 4e-3 ? 0 : 1;
}
