"""framework/pytorch/ascend_fa/: torch.library ops shaped like torch_npu's, dispatching CPU
tensors to a fakit backend (the cpu target by default)."""

import numpy as np
import pytest
import torch

import ascend_fa  # installed by pip install -e .[test] (or .[torch])
import fakit  # noqa: E402

OPS = torch.ops.ascend_fa


def bnsd(b=1, n=2, s=24, d=32, dtype=torch.float16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.rand(b, n, s, d, generator=g).sub(0.5).to(dtype) for _ in range(3)]


@pytest.mark.parametrize(
    "layout, shape, out_shape",
    [
        ("BSH", (2, 16, 128), (2, 16, 128)),
        ("BNSD", (2, 2, 16, 64), (2, 2, 16, 64)),
        ("BNSD_BSND", (2, 2, 16, 64), (2, 16, 2, 64)),
    ],
)
def test_fake_tensors_get_the_output_shape(layout, shape, out_shape):
    q = torch.empty(shape, dtype=torch.bfloat16, device="meta")
    out = OPS.npu_prompt_flash_attention(q, q, q, num_heads=2, input_layout=layout)
    assert out.shape == out_shape and out.dtype == torch.bfloat16 and out.device.type == "meta"


def test_fusion_attention_fake_outputs():
    q = torch.empty((24, 2, 64), dtype=torch.float16, device="meta")
    out, smax, ssum, sout, *_ = OPS.npu_fusion_attention(
        q, q, q, 2, "TND", actual_seq_qlen=[8, 24], actual_seq_kvlen=[8, 24]
    )
    assert out.shape == (24, 2, 64) and smax.shape == ssum.shape == (24, 2, 8) and smax.dtype == torch.float32


def test_unroutable_arguments_are_rejected_by_name():
    q, k, v = bnsd()
    with pytest.raises(NotImplementedError, match="no API of this package with an int8 query path.*deq_scale1"):
        OPS.npu_prompt_flash_attention(q, k, v, num_heads=2, input_layout="BNSD", deq_scale1=torch.ones(1))


def test_unavailable_target_is_a_clear_not_implemented(monkeypatch, no_cann_env_for_torch):
    monkeypatch.setenv("FAKIT_TORCH_BACKEND", "sim")
    q, k, v = bnsd()
    with pytest.raises(
        NotImplementedError, match="the sim target cannot run prompt_flash_attention: .*ASCEND_HOME_PATH"
    ):
        OPS.npu_prompt_flash_attention(q, k, v, num_heads=2, input_layout="BNSD")


def test_operator_not_implemented_on_the_target_is_a_clear_not_implemented(monkeypatch):
    from fakit import ops

    monkeypatch.setattr(ops, "REGISTRY", {k: v for k, v in ops.REGISTRY.items() if k != "prompt_flash_attention"})
    q, k, v = bnsd()
    with pytest.raises(
        NotImplementedError, match="operator prompt_flash_attention is not implemented on the cpu target"
    ):
        OPS.npu_prompt_flash_attention(q, k, v, num_heads=2, input_layout="BNSD")


@pytest.fixture
def no_cann_env_for_torch(monkeypatch):
    for var in ("ASCEND_HOME_PATH", "ASCEND_CANN_PACKAGE_PATH"):
        monkeypatch.delenv(var, raising=False)


def test_dispatch_converts_arguments_for_the_golden_backend(monkeypatch):
    """The conversion path (bf16 through ml_dtypes, masks, lists, output layout) against the
    NumPy golden and an independent torch reference."""
    monkeypatch.setenv("FAKIT_TORCH_BACKEND", "golden")
    q, k, v = bnsd(dtype=torch.bfloat16)
    mask = torch.triu(torch.ones(24, 24, dtype=torch.bool), diagonal=1)
    out = OPS.npu_prompt_flash_attention(
        q,
        k,
        v,
        atten_mask=mask,
        num_heads=2,
        scale_value=0.2,
        input_layout="BNSD_BSND",
        pre_tokens=65535,
        next_tokens=0,
    )
    assert out.dtype == torch.bfloat16 and out.shape == (1, 24, 2, 32)
    ref = torch.nn.functional.scaled_dot_product_attention(
        q.float(), k.float(), v.float(), attn_mask=~mask, scale=0.2
    ).transpose(1, 2)
    torch.testing.assert_close(out.float(), ref, atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("dtype, layout", [(torch.float16, "BNSD"), (torch.bfloat16, "BSH")])
def test_pfa_on_the_cpu_target_matches_the_golden(dtype, layout):
    """torch.ops.ascend_fa.npu_prompt_flash_attention on the cpu target (the Ascend C kernel on
    the emulator) against fakit.golden, judged by fakit.compare's precision standard."""
    from fakit import compare

    q, k, v = bnsd(b=2, n=2, s=64, d=64, dtype=dtype, seed=3)
    if layout == "BSH":
        q, k, v = (t.transpose(1, 2).reshape(2, 64, 128).contiguous() for t in (q, k, v))
    mask = torch.triu(torch.ones(64, 64, dtype=torch.bool), diagonal=1)
    out = OPS.npu_prompt_flash_attention(
        q,
        k,
        v,
        atten_mask=mask,
        num_heads=2,
        scale_value=0.125,
        input_layout=layout,
        pre_tokens=2147483647,
        next_tokens=0,
    )
    assert out.dtype == dtype and out.shape == q.shape
    kwargs = dict(
        query=ascend_fa.to_numpy(q),
        key=ascend_fa.to_numpy(k),
        value=ascend_fa.to_numpy(v),
        atten_mask=mask.numpy(),
        num_heads=2,
        scale_value=0.125,
        input_layout=layout,
        pre_tokens=2147483647,
        next_tokens=0,
    )
    report = compare.compare(
        "prompt_flash_attention",
        ascend_fa.to_numpy(out),
        fakit.golden.prompt_flash_attention(**kwargs),
        fakit.golden.benchmark("prompt_flash_attention", **kwargs),
    )
    assert report.passed, report.summary()
    # and bit-identical to calling the cpu backend directly
    np.testing.assert_array_equal(ascend_fa.to_numpy(out), fakit.run("prompt_flash_attention", **kwargs))
