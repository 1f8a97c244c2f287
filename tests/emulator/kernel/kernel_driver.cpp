// Runs one proof kernel through ICPU_RUN_KF on inputs written by pytest.
// usage: kernel_driver <dir>; <dir>/launch.txt holds
//   "<kernel> <blockDim> <mode: aiv|aic|mix> <tilingKey> <outBytes> <workspaceBytes>"
// and in0.bin, in1.bin, tiling.bin; writes out.bin and counters.json.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tikicpulib.h"

extern "C" void vector_axpy(GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR);
extern "C" void cube_matmul(GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR);
extern "C" void mix_softmax(GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR, GM_ADDR);

static uint8_t *LoadToGm(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    auto *p = static_cast<uint8_t *>(AscendC::GmAlloc(bytes.size() ? bytes.size() : 1));
    std::memcpy(p, bytes.data(), bytes.size());
    return p;
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    const std::string dir = argv[1];
    char kernel[64], mode[8];
    unsigned blockDim;
    unsigned long long key, outBytes, wsBytes;
    FILE *f = std::fopen((dir + "/launch.txt").c_str(), "r");
    if (!f || std::fscanf(f, "%63s %u %7s %llu %llu %llu", kernel, &blockDim, mode, &key, &outBytes, &wsBytes) != 6)
        return 2;
    std::fclose(f);
    uint8_t *in0 = LoadToGm(dir + "/in0.bin"), *in1 = LoadToGm(dir + "/in1.bin"),
            *tiling = LoadToGm(dir + "/tiling.bin");
    auto *out = static_cast<uint8_t *>(AscendC::GmAlloc(outBytes));
    auto *ws = wsBytes ? static_cast<uint8_t *>(AscendC::GmAlloc(wsBytes)) : nullptr;
    AscendC::SetKernelMode(std::strcmp(mode, "aiv") == 0   ? KernelMode::AIV_MODE
                           : std::strcmp(mode, "aic") == 0 ? KernelMode::AIC_MODE
                                                           : KernelMode::MIX_MODE);
    ICPU_SET_TILING_KEY(key);
    const std::string k = kernel;
    if (k == "vector_axpy")
        ICPU_RUN_KF(vector_axpy, blockDim, in0, in1, out, ws, tiling);
    else if (k == "cube_matmul")
        ICPU_RUN_KF(cube_matmul, blockDim, in0, in1, out, ws, tiling);
    else if (k == "mix_softmax")
        ICPU_RUN_KF(mix_softmax, blockDim, in0, in1, out, ws, tiling);
    else
        return 2;
    std::ofstream(dir + "/out.bin", std::ios::binary)
        .write(reinterpret_cast<char *>(out), static_cast<std::streamsize>(outBytes));
    std::ofstream(dir + "/counters.json") << emu::LastLaunchCountersJson();
    for (uint8_t *p : {in0, in1, tiling, out, ws}) AscendC::GmFree(p);
    return 0;
}
