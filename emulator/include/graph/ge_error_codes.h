// ge status codes (CPU target); everything lives in graph/types.h.
#ifndef EMU_GRAPH_GE_ERROR_CODES_H_
#define EMU_GRAPH_GE_ERROR_CODES_H_
#include "graph/types.h"
#endif
