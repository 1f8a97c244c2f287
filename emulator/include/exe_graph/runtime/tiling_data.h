// gert::TilingData: the raw byte buffer the tiling function fills and the kernel reads.
#ifndef EMU_EXE_GRAPH_RUNTIME_TILING_DATA_H_
#define EMU_EXE_GRAPH_RUNTIME_TILING_DATA_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gert {

class TilingData {
public:
    // Capacity of the tiling buffer of one launch on the CPU target.
    static constexpr size_t kCapacity = 64 * 1024;

    TilingData() : bytes_(kCapacity, 0) {}
    void *GetData() { return bytes_.data(); }
    const void *GetData() const { return bytes_.data(); }
    size_t GetCapacity() const { return bytes_.size(); }
    size_t GetDataSize() const { return size_; }
    void SetDataSize(size_t size) { size_ = size > bytes_.size() ? bytes_.size() : size; }

private:
    std::vector<uint8_t> bytes_;
    size_t size_ = 0;
};

}  // namespace gert

#endif
