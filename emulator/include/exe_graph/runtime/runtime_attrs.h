// gert::RuntimeAttrs: the operator's attributes in OpDef order, as tiling/infershape read them.
// Getters return nullptr when the index is out of range or the stored type differs.
#ifndef EMU_EXE_GRAPH_RUNTIME_RUNTIME_ATTRS_H_
#define EMU_EXE_GRAPH_RUNTIME_RUNTIME_ATTRS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "exe_graph/runtime/continuous_vector.h"

namespace gert {

// One attribute value (CPU target representation).
struct AttrValue {
    enum class Kind { NONE, INT, FLOAT, BOOL, STRING, LIST_INT, LIST_FLOAT, LIST_BOOL };
    Kind kind = Kind::NONE;
    int64_t i = 0;
    float f = 0.0f;
    bool b = false;
    std::string s;
    TypedContinuousVector<int64_t> listInt;
    TypedContinuousVector<float> listFloat;
    TypedContinuousVector<bool> listBool;
};

class RuntimeAttrs {
public:
    size_t GetAttrNum() const { return values_.size(); }
    const int64_t *GetInt(size_t index) const { return Is(index, AttrValue::Kind::INT) ? &values_[index].i : nullptr; }
    const float *GetFloat(size_t index) const
    {
        return Is(index, AttrValue::Kind::FLOAT) ? &values_[index].f : nullptr;
    }
    const bool *GetBool(size_t index) const { return Is(index, AttrValue::Kind::BOOL) ? &values_[index].b : nullptr; }
    const char *GetStr(size_t index) const
    {
        return Is(index, AttrValue::Kind::STRING) ? values_[index].s.c_str() : nullptr;
    }
    const TypedContinuousVector<int64_t> *GetListInt(size_t index) const
    {
        return Is(index, AttrValue::Kind::LIST_INT) ? &values_[index].listInt : nullptr;
    }
    const TypedContinuousVector<float> *GetListFloat(size_t index) const
    {
        return Is(index, AttrValue::Kind::LIST_FLOAT) ? &values_[index].listFloat : nullptr;
    }
    // GetAttrPointer<int64_t|float|bool|char>(i) as CANN code uses it (char: the string).
    template <typename T> const T *GetAttrPointer(size_t index) const;

    // CPU target: filled by the op runner.
    std::vector<AttrValue> &MutableValues() { return values_; }

private:
    bool Is(size_t index, AttrValue::Kind kind) const { return index < values_.size() && values_[index].kind == kind; }
    std::vector<AttrValue> values_;
};

template <> inline const int64_t *RuntimeAttrs::GetAttrPointer<int64_t>(size_t index) const { return GetInt(index); }
template <> inline const float *RuntimeAttrs::GetAttrPointer<float>(size_t index) const { return GetFloat(index); }
template <> inline const bool *RuntimeAttrs::GetAttrPointer<bool>(size_t index) const { return GetBool(index); }
template <> inline const char *RuntimeAttrs::GetAttrPointer<char>(size_t index) const { return GetStr(index); }
template <>
inline const TypedContinuousVector<int64_t> *
RuntimeAttrs::GetAttrPointer<TypedContinuousVector<int64_t>>(size_t index) const
{
    return GetListInt(index);
}

}  // namespace gert

#endif
