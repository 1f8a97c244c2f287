// Sorting (kernel_operator_proposal_intf.h): Sort and Extract in the Atlas A2 layout. Sort orders
// repeatTime x 32 scores descending, each with its uint32 index, into 8-byte (score, index)
// elements (a half score sits in the low 2 bytes, 2 bytes reserved, the index in the high 4);
// isFullSort orders all of them (Sort32 then MrgSort passes through tmp), else each group of 32.
// Extract splits repeatTime x 32 sorted elements back into scores and indices.
#pragma once
#include "emu/vec.h"
#include "kernel/kernel_data_copy.h"

namespace AscendC {

template <typename T, bool isFullSort>
void Sort(const LocalTensor<T> &dst, const LocalTensor<T> &concat, const LocalTensor<uint32_t> &index,
          LocalTensor<T> &tmp, const int32_t repeatTime)
{
    emu::VecSort("Sort", emu::DT<T>, emu::Ref(dst), emu::Ref(concat), emu::Ref(index), emu::Ref(tmp), repeatTime,
                 isFullSort);
}

template <typename T>
void Extract(const LocalTensor<T> &dstValue, const LocalTensor<uint32_t> &dstIndex, const LocalTensor<T> &sorted,
             const int32_t repeatTime)
{
    emu::VecExtract("Extract", emu::DT<T>, emu::Ref(dstValue), emu::Ref(dstIndex), emu::Ref(sorted), repeatTime);
}

}  // namespace AscendC
