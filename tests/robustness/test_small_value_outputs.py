"""V5 backward with every KV length 1: each query row attends to one key, so P = 1 and
dS = P * (dP - rowsum(dP * P)) = 0 -- dQ and dK are analytically zero, and kernel and benchmark
both leave ~1e-8 of rounding residue. The precision standard's small-value rule judges such
outputs by their small-value error count (none here), not by the ratio of two residues; each
case below used to fail `fakit run` on an RMSE ratio of 2-270x."""

import pytest
from robust_helpers import run_and_judge

from fakit.cases import flash_attention_unpadding_score_grad_v5 as v5_cases

V5 = "flash_attention_unpadding_score_grad_v5"
CASES = [
    dict(dtype=dtype, qlens=(31, 31, 5), kvlens=(1, 1, 1), N=n, Nkv=nkv, D=16)
    for dtype in ("fp16", "bf16")
    for n, nkv in ((4, 2), (2, 2), (4, 1))
]


def _name(c):
    return (
        f"{c['dtype']}-q{'_'.join(map(str, c['qlens']))}-kv{'_'.join(map(str, c['kvlens']))}"
        f"-N{c['N']}_{c['Nkv']}-D{c['D']}"
    )


@pytest.mark.parametrize("spec", CASES, ids=_name)
@pytest.mark.parametrize("seed", [0, 1])
def test_v5_every_kv_length_one_passes_the_standard(spec, seed):
    spec = dict(spec)
    kw = v5_cases.make(spec.pop("dtype"), seed=seed, **spec).inputs()
    run_and_judge(V5, kw)
