// gert::Shape of the CPU target: a small fixed-capacity dimension list (as CANN metadef
// exe_graph/runtime/shape.h).
#ifndef EMU_EXE_GRAPH_RUNTIME_SHAPE_H_
#define EMU_EXE_GRAPH_RUNTIME_SHAPE_H_

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace gert {

class Shape {
public:
    static constexpr size_t kMaxDimNum = 25;
    static constexpr int64_t kInvalidDimValue = INT64_MIN;

    Shape() = default;
    Shape(std::initializer_list<int64_t> dims)
    {
        for (int64_t d : dims) AppendDim(d);
    }
    size_t GetDimNum() const { return dimNum_; }
    void SetDimNum(size_t num) { dimNum_ = num > kMaxDimNum ? kMaxDimNum : num; }
    int64_t GetDim(size_t index) const { return index < dimNum_ ? dims_[index] : kInvalidDimValue; }
    void SetDim(size_t index, int64_t value)
    {
        if (index < dimNum_) dims_[index] = value;
    }
    Shape &AppendDim(int64_t value)
    {
        if (dimNum_ < kMaxDimNum) dims_[dimNum_++] = value;
        return *this;
    }
    bool IsScalar() const { return dimNum_ == 0; }
    // Product of the dims (1 for a scalar); negative dims (unknown) give -1.
    int64_t GetShapeSize() const
    {
        int64_t n = 1;
        for (size_t i = 0; i < dimNum_; ++i) {
            if (dims_[i] < 0) return -1;
            n *= dims_[i];
        }
        return n;
    }
    const int64_t &operator[](size_t index) const { return dims_[index]; }
    int64_t &operator[](size_t index) { return dims_[index]; }
    bool operator==(const Shape &other) const
    {
        if (dimNum_ != other.dimNum_) return false;
        for (size_t i = 0; i < dimNum_; ++i)
            if (dims_[i] != other.dims_[i]) return false;
        return true;
    }
    bool operator!=(const Shape &other) const { return !(*this == other); }

private:
    size_t dimNum_ = 0;
    int64_t dims_[kMaxDimNum] = {};
};

}  // namespace gert

#endif
