// CANN's platform/platform_info.h: on the CPU target only fe::PlatFormInfos is needed.
#ifndef EMU_PLATFORM_PLATFORM_INFO_H_
#define EMU_PLATFORM_PLATFORM_INFO_H_
#include "platform/platform_infos_def.h"
#endif
