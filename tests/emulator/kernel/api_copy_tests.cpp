// Data movement and global-memory views: DataCopyPad, int4b_t GM offsets and copies,
// ListTensorDesc, and the misuse of Nd2Nz copies and GM bounds.
#include <cstring>

#include "kernel_operator_list_tensor_intf.h"
#include "api_case.h"

static void data_copy_pad()
{
    auto *gm = static_cast<float *>(GmAlloc(64 * sizeof(float)));
    for (int i = 0; i < 64; ++i) gm[i] = float(i);
    Run(emu::CoreMix::AIV_ONLY, 1, [gm] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096);
        LocalTensor<float> u = buf.Get<float>();
        GlobalTensor<float> g;
        g.SetGlobalBuffer(gm, 64);
        // 3 rows of 5 floats, GM gap 3 floats: each UB row takes 1 block; pad with -7.
        DataCopyPad(u, g, DataCopyExtParams(3, 5 * 4, 3 * 4, 0, 0), DataCopyPadExtParams<float>(true, 0, 0, -7.0f));
        EXPECT(u.GetValue(0) == 0.0f && u.GetValue(4) == 4.0f && u.GetValue(5) == -7.0f && u.GetValue(8) == 8.0f &&
                   u.GetValue(16) == 16.0f,
               "GM->UB pad rows %f %f %f %f", u.GetValue(4), u.GetValue(5), u.GetValue(8), u.GetValue(16));
        DataCopyPad(g[40], u, DataCopyExtParams(2, 5 * 4, 0, 4, 0));  // UB gap 0 blocks, GM gap 1 float
        EXPECT(g.GetValue(40) == 0.0f && g.GetValue(44) == 4.0f && g.GetValue(45) == 45.0f && g.GetValue(46) == 8.0f,
               "UB->GM rows %f %f %f", g.GetValue(44), g.GetValue(45), g.GetValue(46));
    });
    GmFree(gm);
}

// int4b_t: two elements per byte, element 2j in the low nibble. A GlobalTensor offset counts
// elements (g[64] is byte 32), DataCopy's count too (64 elements = 32 bytes), and Cast to half
// reads nibbles, sign-extended.
static void int4_copy_cast()
{
    auto *gm = static_cast<uint8_t *>(GmAlloc(64));
    for (int i = 0; i < 64; ++i) gm[i] = static_cast<uint8_t>((i % 16) | ((15 - i % 16) << 4));
    Run(emu::CoreMix::AIV_ONLY, 1, [gm] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096);
        LocalTensor<int4b_t> q = buf.Get<int4b_t>();
        LocalTensor<half> h = buf.Get<half>()[512];
        GlobalTensor<int4b_t> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ int4b_t *>(gm), 128);
        EXPECT(q.GetSize() == 8192, "a 4096-byte int4b_t tensor holds %u elements", q.GetSize());
        DataCopy(q, g[64], 64);  // bytes 32..63
        Duplicate(h, half(99.0f), 256);
        Cast(h, q, RoundMode::CAST_NONE, 100);  // counter mode: 100 of the 128 lanes of one repeat
        for (int j = 0; j < 32; ++j) {
            const int lo = (32 + j) % 16, hi = 15 - lo;
            const float wantLo = float(lo >= 8 ? lo - 16 : lo), wantHi = float(hi >= 8 ? hi - 16 : hi);
            if (2 * j + 1 < 100)
                EXPECT(float(h.GetValue(2 * j)) == wantLo && float(h.GetValue(2 * j + 1)) == wantHi,
                       "byte %d: %g %g, want %g %g", 32 + j, float(h.GetValue(2 * j)), float(h.GetValue(2 * j + 1)),
                       wantLo, wantHi);
        }
        EXPECT(float(h.GetValue(100)) == 99.0f, "lane 100 is past the count: %g", float(h.GetValue(100)));
        DataCopy(q, g, 128);  // the whole 64 bytes
        Cast(h, q, RoundMode::CAST_NONE, 128);
        EXPECT(float(h.GetValue(126)) == -1.0f && float(h.GetValue(127)) == 0.0f, "byte 63 (0x0f): %g %g",
               float(h.GetValue(126)), float(h.GetValue(127)));
    });
    GmFree(gm);
}

// ListTensorDesc over the block the op runner builds for a tensor-list input: header word,
// per-tensor (dimNum | index << 32) + dims, then the data pointers.
static void list_tensor_desc()
{
    auto *a = static_cast<float *>(GmAlloc(8 * sizeof(float)));
    auto *b = static_cast<float *>(GmAlloc(8 * sizeof(float)));
    a[0] = 1.5f;
    b[0] = 2.5f;
    auto *desc = static_cast<uint64_t *>(GmAlloc(8 * sizeof(uint64_t)));
    const uint64_t words[] = {6 * sizeof(uint64_t), 2, 2, 4, 1ULL | (1ULL << 32), 8};  // shapes (2, 4), (8)
    std::memcpy(desc, words, sizeof(words));
    desc[6] = reinterpret_cast<uintptr_t>(a);
    desc[7] = reinterpret_cast<uintptr_t>(b);
    Run(emu::CoreMix::AIV_ONLY, 1, [&] {
        ListTensorDesc list(reinterpret_cast<__gm__ void *>(desc));
        EXPECT(list.GetSize() == 2, "GetSize %u", list.GetSize());
        EXPECT(list.GetDataPtr<float>(0) == a && list.GetDataPtr<float>(1) == b, "data pointers");
        EXPECT(list.GetDataPtr<float>(1)[0] == 2.5f, "read through pointer 1");
    });
    GmFree(desc);
    GmFree(b);
    GmFree(a);
}

// ---- misuse: each must abort with a message naming the API ----
static void misuse_int4_odd_offset()
{
    auto *gm = static_cast<uint8_t *>(GmAlloc(64));
    Run(emu::CoreMix::AIV_ONLY, 1, [gm] {
        GlobalTensor<int4b_t> g;
        g.SetGlobalBuffer(reinterpret_cast<__gm__ int4b_t *>(gm), 128);
        (void)g[3];
    });
}

static void misuse_nd2nz_rows_without_stride()
{
    auto *gm = static_cast<half *>(GmAlloc(256 * sizeof(half)));
    Run(emu::CoreMix::AIC_ONLY, 1, [gm] {
        TPipe pipe;
        TBuf<TPosition::A1> l1;
        pipe.InitBuffer(l1, 1024);
        GlobalTensor<half> g;
        g.SetGlobalBuffer(gm, 256);
        DataCopy(l1.Get<half>(), g, Nd2NzParams(1, 2, 16, 0, 0, 2, 1, 0));  // two rows need a row stride
    });
    GmFree(gm);
}

static void misuse_gm_out_of_range()
{
    auto *gm = static_cast<float *>(GmAlloc(100 * sizeof(float)));
    Run(emu::CoreMix::AIV_ONLY, 1, [gm] {
        TPipe pipe;
        TBuf<TPosition::VECCALC> buf;
        pipe.InitBuffer(buf, 4096);
        GlobalTensor<float> g;
        g.SetGlobalBuffer(gm, 100);
        DataCopy(buf.Get<float>(), g[64], 64);  // reads floats 64..127 of a 100-float allocation
    });
}

void AddCopyCases(ApiCases &cases)
{
    const ApiCases mine = {
        {"data_copy_pad", data_copy_pad},
        {"int4_copy_cast", int4_copy_cast},
        {"misuse_int4_odd_offset", misuse_int4_odd_offset},
        {"list_tensor_desc", list_tensor_desc},
        {"misuse_nd2nz_rows_without_stride", misuse_nd2nz_rows_without_stride},
        {"misuse_gm_out_of_range", misuse_gm_out_of_range},
    };
    AddCases(cases, mine);
}
