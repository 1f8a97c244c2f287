"""Spec S003: softmaxMax, softmaxSum and attentionIn are optional each. The absent ones
are recomputed by the forward core in the same launch; the given ones are used as given (a
perturbed given statistic changes the result exactly as the golden says), in both statistics
layouts."""

import itertools

import numpy as np
import pytest
from fag_helpers import make_kwargs, run_and_judge

NAMES = ("softmax_max", "softmax_sum", "attention_in")
PARTIAL = [c for r in (1, 2) for c in itertools.combinations(NAMES, r)]


@pytest.mark.parametrize("layout", ["same_as_input", ""])
@pytest.mark.parametrize("absent", PARTIAL, ids=lambda c: "-".join(c))
def test_partial_forward_outputs_match_the_golden(absent, layout):
    kw = make_kwargs("fp16", q_lens=(40, 24), kv_lens=(56, 40), n=2, d=32, softmax_in_layout=layout)
    for name in absent:
        kw[name] = None
    run_and_judge(kw)


@pytest.mark.parametrize("given", ["softmax_max", "softmax_sum", "attention_in"])
def test_given_outputs_are_used_not_recomputed(given):
    kw = make_kwargs(
        "bf16", q_lens=(48,), kv_lens=(64,), n=2, d=32, sparse_mode=3, mask=np.triu(np.ones((2048, 2048), bool), 1)
    )
    for name in NAMES:
        if name != given:
            kw[name] = None
    # a given value that is not the forward's: the kernel must follow it as the golden does
    if given == "softmax_max":
        kw[given] = kw[given] + np.float32(0.25)
    elif given == "softmax_sum":
        kw[given] = kw[given] * np.float32(1.5)
    else:
        kw[given] = (kw[given].astype(np.float32) * 0.5).astype(kw[given].dtype)
    run_and_judge(kw)
