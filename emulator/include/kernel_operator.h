// The Ascend C kernel API (namespace AscendC) as implemented by the CPU emulator for Atlas A2
// (dav-c220). A kernel written against this header must compile unchanged with CANN; see
// docs/emulator.md for the list of APIs, their checked restrictions and what is missing.
#pragma once
#include "kernel/emu_types.h"
#include "kernel/kernel_common.h"
#include "kernel/kernel_tensor.h"
#include "kernel/kernel_sync.h"
#include "kernel/kernel_tpipe.h"
#include "kernel/kernel_data_copy.h"
#include "kernel/kernel_vec.h"
#include "kernel/kernel_proposal.h"
#include "kernel/kernel_mm.h"
