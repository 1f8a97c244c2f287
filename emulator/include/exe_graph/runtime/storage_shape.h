// gert::StorageShape: the origin (logical) shape and the storage shape of a tensor.
#ifndef EMU_EXE_GRAPH_RUNTIME_STORAGE_SHAPE_H_
#define EMU_EXE_GRAPH_RUNTIME_STORAGE_SHAPE_H_

#include "exe_graph/runtime/shape.h"

namespace gert {

class StorageShape {
public:
    StorageShape() = default;
    StorageShape(const Shape &origin, const Shape &storage) : origin_(origin), storage_(storage) {}
    const Shape &GetOriginShape() const { return origin_; }
    const Shape &GetStorageShape() const { return storage_; }
    Shape &MutableOriginShape() { return origin_; }
    Shape &MutableStorageShape() { return storage_; }

private:
    Shape origin_;
    Shape storage_;
};

}  // namespace gert

#endif
