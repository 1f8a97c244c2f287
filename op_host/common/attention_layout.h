// Q/K/V layouts shared by the host code of every operator: the layout names of the specs, and
// (B, N, S, D) read off a shape. Header-only and free of CANN library symbols on purpose: the
// tiling libraries (op_proto / op_tiling) and the public op_api library (cust_opapi) both use
// it, and each of them links different CANN libraries (docs/npu.md, "Which code goes where").
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "aclnn/aclnn_base.h"
#include "checked_math.h"

namespace fa_host {

// What a check or a tiling needs to know about one tensor argument.
struct TensorDesc {
    bool present = false;
    aclDataType dtype = ACL_DT_UNDEFINED;
    aclFormat format = ACL_FORMAT_ND;
    std::vector<int64_t> shape;
    bool contiguous = true;

    int64_t Numel() const
    {
        // Saturating: a hostile shape must not overflow here (tensor_memory_checks.h rejects it).
        int64_t n = 1;
        for (int64_t d : shape) n = SaturatingMul(n, d);
        return n;
    }
    std::string ShapeString() const
    {
        std::string s = "[";
        for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
        return s + "]";
    }
};

enum class Layout { BSH, BSND, BNSD, BNSD_BSND, TND, INVALID };

inline Layout ParseLayout(const char *text)
{
    if (text == nullptr) return Layout::INVALID;
    if (std::strcmp(text, "BSH") == 0) return Layout::BSH;
    if (std::strcmp(text, "BSND") == 0) return Layout::BSND;
    if (std::strcmp(text, "BNSD") == 0) return Layout::BNSD;
    if (std::strcmp(text, "BNSD_BSND") == 0) return Layout::BNSD_BSND;
    if (std::strcmp(text, "TND") == 0) return Layout::TND;
    return Layout::INVALID;
}

inline const char *LayoutName(Layout layout)
{
    switch (layout) {
        case Layout::BSH:
            return "BSH";
        case Layout::BSND:
            return "BSND";
        case Layout::BNSD:
            return "BNSD";
        case Layout::BNSD_BSND:
            return "BNSD_BSND";
        case Layout::TND:
            return "TND";
        default:
            return "INVALID";
    }
}

// (B, N, S, D) of a Q/K/V tensor in `layout` (BNSD_BSND reads as BNSD); for BSH, N is the
// given head count and D = H / N. Returns false when the rank does not fit the layout.
struct BnsdDims {
    int64_t b = 0, n = 0, s = 0, d = 0;
};

inline bool DimsOf(const TensorDesc &t, Layout layout, int64_t heads, BnsdDims &out)
{
    const auto &s = t.shape;
    switch (layout) {
        case Layout::BSH:
            if (s.size() != 3 || heads <= 0) return false;
            out = {s[0], heads, s[1], s[2] / heads};
            return true;
        case Layout::BSND:
            if (s.size() != 4) return false;
            out = {s[0], s[2], s[1], s[3]};
            return true;
        case Layout::BNSD:
        case Layout::BNSD_BSND:
            if (s.size() != 4) return false;
            out = {s[0], s[1], s[2], s[3]};
            return true;
        default:
            return false;
    }
}

}  // namespace fa_host
