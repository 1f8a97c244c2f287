// ge::TypeUtils of the CPU target: names of data types and formats (as CANN metadef).
#ifndef EMU_GRAPH_UTILS_TYPE_UTILS_H_
#define EMU_GRAPH_UTILS_TYPE_UTILS_H_

#include <string>
#include "graph/types.h"

namespace ge {
class TypeUtils {
public:
    // CANN spells these without the DT_/FORMAT_ prefix ("DT_FLOAT16" -> "DT_FLOAT16" is kept
    // here because messages read better with it).
    static std::string DataTypeToSerialString(DataType type) { return DataTypeName(type); }
    static std::string FormatToSerialString(Format format) { return FormatName(format); }
};
}  // namespace ge

#endif
