// gert::ContinuousVector / TypedContinuousVector: list attributes as seen by tiling code.
#ifndef EMU_EXE_GRAPH_RUNTIME_CONTINUOUS_VECTOR_H_
#define EMU_EXE_GRAPH_RUNTIME_CONTINUOUS_VECTOR_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gert {

template <typename T> class TypedContinuousVector {
public:
    TypedContinuousVector() = default;
    explicit TypedContinuousVector(std::vector<T> values) : values_(std::move(values)) {}
    size_t GetSize() const { return values_.size(); }
    size_t GetCapacity() const { return values_.size(); }
    const T *GetData() const { return values_.data(); }

private:
    std::vector<T> values_;
};

using ContinuousVector = TypedContinuousVector<int64_t>;

}  // namespace gert

#endif
