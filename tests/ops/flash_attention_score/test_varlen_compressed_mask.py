"""The compressed attention mask of the sparse modes that generate their mask (spec 001 and its
sparse-mode page): modes 2, 3, 4, 7 and 8 take the optimised 2048 x 2048 lower-triangular mask,
mode 6 the 3072 x 2048 causal-plus-prefix one. In every such mode

* the case generator builds exactly the documented shape,
* the golden refuses any other shape (ValueError), as it does any other invalid argument,
* aclnnFlashAttentionVarLenScoreGetWorkspaceSize answers 161002 (ACLNN_ERR_PARAM_INVALID)
  naming attenMaskOptional for any other shape — the [maxSq, maxSkv] mask modes 0 and 1 take,
  one row or column short, wider, or the other mode's compressed mask —
* and accepts the documented shape, with a result the golden confirms.
"""

import numpy as np
import pytest
from fa_varlen_helpers import OP, judge

import fakit
from fakit import golden
from fakit.cases import flash_attention_var_len_score as fav_cases

INVALID = 161002
DOCUMENTED = {2: (2048, 2048), 3: (2048, 2048), 4: (2048, 2048), 6: (3072, 2048), 7: (2048, 2048), 8: (2048, 2048)}
# batch 0: Sq 5, Skv 9; batch 1: Sq 20, Skv 24. Mode 7's band batch is the last, mode 8's the
# first (their pre/next as the sparse-mode page requires); mode 6's prefix in [Skv - Sq, Skv].
OPTIONS = {4: dict(pre=8, nxt=2), 6: dict(prefix=[6, 10]), 7: dict(pre=24, nxt=-4), 8: dict(pre=9, nxt=0)}


def case(mode):
    return fav_cases.make("fp16", qlens=(5, 20), kvlens=(9, 24), N=2, D=16, sparse_mode=mode, **OPTIONS.get(mode, {}))


def wrong_shapes(mode):
    rows, cols = DOCUMENTED[mode]
    other = (2048, 2048) if mode == 6 else (3072, 2048)
    return {
        "max_sq_x_max_skv": (20, 24),
        "one_row_short": (rows - 1, cols),
        "one_column_short": (rows, cols - 1),
        "wider": (rows, 2 * cols),
        "other_compressed": other,
    }


WRONG = [(mode, name) for mode in DOCUMENTED for name in wrong_shapes(mode)]


@pytest.mark.parametrize("mode", sorted(DOCUMENTED))
def test_case_generator_builds_the_documented_mask(mode):
    mask = case(mode).inputs()["atten_mask"]
    assert mask.shape == DOCUMENTED[mode]
    assert mask.shape == golden._common.COMPRESSED_MASK_SHAPES[mode]


@pytest.mark.parametrize("mode,name", WRONG, ids=[f"mode{m}-{n}" for m, n in WRONG])
def test_golden_refuses_another_shape(mode, name):
    kw = case(mode).inputs()
    kw["atten_mask"] = np.zeros(wrong_shapes(mode)[name], np.bool_)
    with pytest.raises(ValueError, match="compressed"):
        golden.flash_attention_var_len_score(**kw)


@pytest.mark.parametrize("mode,name", WRONG, ids=[f"mode{m}-{n}" for m, n in WRONG])
def test_host_rejects_another_shape_with_161002(mode, name):
    kw = case(mode).inputs()
    kw["atten_mask"] = np.zeros(wrong_shapes(mode)[name], np.bool_)
    with pytest.raises(fakit.AclnnError) as err:
        fakit.run(OP, backend="cpu", **kw)
    assert err.value.status == INVALID, err.value.log
    assert "attenMaskOptional" in err.value.log and "compressed" in err.value.log, err.value.log


@pytest.mark.parametrize("mode", sorted(DOCUMENTED))
def test_documented_shape_is_accepted_and_matches_the_golden(mode):
    kw = case(mode).inputs()
    assert kw["atten_mask"].shape == DOCUMENTED[mode]
    _, _, report = judge(kw)
    assert report.passed, report.summary()
