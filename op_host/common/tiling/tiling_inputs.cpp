#include "tiling_inputs.h"

namespace fa_host {

std::vector<int64_t> Dims(const gert::Shape &shape)
{
    std::vector<int64_t> d;
    for (size_t i = 0; i < shape.GetDimNum(); ++i) d.push_back(shape.GetDim(i));
    return d;
}

std::vector<int64_t> Dims(const gert::StorageShape *shape)
{
    if (shape == nullptr) return {};
    return Dims(shape->GetStorageShape());
}

std::vector<int64_t> Int64Values(const gert::TilingContext *context, size_t index)
{
    const gert::Tensor *t = context->GetOptionalInputTensor(index);
    if (t == nullptr || t->GetData<int64_t>() == nullptr) return {};
    const int64_t *v = t->GetData<int64_t>();
    return std::vector<int64_t>(v, v + t->GetShapeSize());
}

std::vector<int64_t> Lengths(const std::vector<int64_t> &cumulative)
{
    std::vector<int64_t> lens(cumulative.size());
    for (size_t i = 0; i < cumulative.size(); ++i) lens[i] = cumulative[i] - (i == 0 ? 0 : cumulative[i - 1]);
    return lens;
}

CoreBudget ReadCoreBudget(const platform_ascendc::PlatformAscendC &platform)
{
    CoreBudget budget;
    budget.aicNum = platform.GetCoreNumAic();
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::UB, budget.ub);
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::L1, budget.l1);
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::L0_A, budget.l0a);
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::L0_B, budget.l0b);
    platform.GetCoreMemSize(platform_ascendc::CoreMemType::L0_C, budget.l0c);
    return budget;
}

}  // namespace fa_host
