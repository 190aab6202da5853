"""S8L: S8's activation passes counted beyond the GPU's last shared cache (docs/serving.md, session 14, latency20;
tried, not kept: the switch ``LAYER_ACT_L2`` is off, and these tests turn it on where they time it), and the cache
sizes in the GPU catalog.

Every expected value is worked by hand from the rule

    HBM bytes of a step of M tokens = Σ_passes n·max(0, M·b − C),

``b`` the bytes one pass moves per token per GPU (S8's: ``8h`` each residual add + RMSNorm, ``Q(x) = (2 + a)·x`` each
quantisation before an 8-bit GEMM, ``Q(q)`` and ``4·(r_q + r_k)`` outside TensorRT-LLM, ``6·I`` SiLU-and-mul), ``n``
how many such passes the layers run, ``C`` the last cache in front of HBM that every compute unit shares. Model
shapes from the published ``config.json``: Llama-3.1-8B hidden 4,096, MLP 14,336, 32 query and 8 KV heads of 128,
32 layers. Cache sizes: the H100's driver-reported ``l2CacheSize`` 52,428,800 B (50 MiB; NVIDIA's H100 datasheet
50 MB), the A100's 41,943,040 B (40 MiB; NVIDIA's A100 whitepaper 40 MB), the MI300X's 256 MiB Infinity Cache and
8 × 4 MiB L2 (AMD's ROCm GPU specification table). The H100 SXM's 3.35 TB/s is NVIDIA's datasheet figure.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import step
from planner.serving.api import default_calibration

MIB = 2**20
H100_L2 = 52_428_800


def test_catalog_cache_sizes_and_their_sources() -> None:
    raw = json.loads((Path(__file__).resolve().parent.parent / "planner" / "data" / "gpus.json").read_text())
    filled = {}
    for entry in raw["gpus"]:
        assert "l2_cache_bytes" in entry and entry["l2_source"], entry["id"]  # null is said, not omitted
        if entry["l2_cache_bytes"] is None:
            assert entry["l2_as_of"] is None and "none sourced" in entry["l2_source"], entry["id"]
            continue
        assert entry["l2_as_of"], entry["id"]
        filled[entry["id"]] = entry["l2_cache_bytes"]
    assert filled == {"a100-40gb-sxm": 40 * MIB, "a100-80gb-sxm": 40 * MIB, "a100-80gb-pcie": 40 * MIB,
                      "h100-sxm": 50 * MIB, "h100-pcie": 50 * MIB, "h200-sxm": 50 * MIB, "b200-hgx": 126 * MIB,
                      "gb200": 126 * MIB, "l4": 48 * MIB, "rtx-4090": 72 * MIB, "rtx-3090": 6 * MIB,
                      "mi300x": 32 * MIB, "mi325x": 32 * MIB, "mi355x": 32 * MIB}
    assert {e["id"]: e["infinity_cache_bytes"] for e in raw["gpus"] if "infinity_cache_bytes" in e} == {
        "mi300x": 256 * MIB, "mi325x": 256 * MIB, "mi355x": 256 * MIB}
    assert get_gpu("h100").l2_cache_bytes == H100_L2 and get_gpu("h100").infinity_cache_bytes is None
    assert get_gpu("l40s").l2_cache_bytes is None


def test_the_cache_counted_against() -> None:
    assert step.activation_cache_bytes(get_gpu("h100-sxm")) == H100_L2
    assert step.activation_cache_bytes(get_gpu("a100-80gb-sxm")) == 41_943_040
    assert step.activation_cache_bytes(get_gpu("mi300x")) == 268_435_456  # the Infinity Cache, not the 32 MiB of L2
    assert step.activation_cache_bytes(get_gpu("h100-nvl")) == 0.0  # not sourced: the full S8 bytes


def test_passes_of_llama_8b_fp8_h100() -> None:
    model, gpu = get_model("llama-3.1-8b"), get_gpu("h100-sxm")
    # TensorRT-LLM: 8h = 32,768 and Q(h) = 3·4,096 = 12,288, two of each a layer (64); 6I = 6·14,336 = 86,016 and
    # Q(I) = 3·14,336 = 43,008, one a layer (32).
    trt = step.layer_activation_passes(model, gpu, engine="trtllm", weight_dtype="fp8")
    assert sorted(trt) == sorted([(32_768, 64), (12_288, 64), (86_016, 32), (43_008, 32)])
    # vLLM adds the attention output's quantisation 3·(32·128) = 12,288 and RoPE 4·(32 + 8)·128 = 20,480 a layer.
    vllm = step.layer_activation_passes(model, gpu, engine="vllm", weight_dtype="fp8")
    assert sorted(vllm) == sorted([(32_768, 64), (12_288, 64), (12_288, 32), (20_480, 32), (86_016, 32),
                                   (43_008, 32)])
    # Their sums are S8's bytes a token: 219,136 × 32 = 7,012,352 and 251,904 × 32 = 8,060,928.
    assert sum(b * n for b, n in trt) == pytest.approx(7_012_352)
    assert sum(b * n for b, n in vllm) == pytest.approx(8_060_928)


def test_switch_is_off_by_default() -> None:
    r = step.build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), weight_dtype="fp8", engine="trtllm",
                           context_tokens=2048, input_tokens=2048, calibration=default_calibration())
    assert not step.LAYER_ACT_L2 and r.layer_act_passes == () and r.act_cache_bytes == 0.0


def _body(model: str, gpu, *, engine: str, dtype: str, decode: int, prompt: int) -> float:
    cal = default_calibration().replace(weight_bw_eff=0.9)
    r = step.build_replica(get_model(model), gpu, weight_dtype=dtype, engine=engine, context_tokens=2048,
                           input_tokens=max(prompt, 1), calibration=cal)
    return step.step_parts(r, cal, decode_seqs=decode, prefill_tokens=prompt, prefill_seqs=1 if prompt else 0)[1]


def _added(monkeypatch: pytest.MonkeyPatch, model: str, gpu, **kw) -> float:
    monkeypatch.setattr(step, "LAYER_ACT_TRAFFIC", False)
    monkeypatch.setattr(step, "LAYER_ACT_L2", False)
    before = _body(model, gpu, **kw)
    monkeypatch.setattr(step, "LAYER_ACT_TRAFFIC", True)
    monkeypatch.setattr(step, "LAYER_ACT_L2", True)
    return _body(model, gpu, **kw) - before


def test_h100_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    h100 = get_gpu("h100-sxm")
    kw = dict(engine="trtllm", dtype="fp8")
    bw = 3.35e12 * 0.9
    # A decode step of 256 sequences: the largest pass, 256 × 86,016 = 22,020,096 B, fits in 52,428,800: nothing.
    assert _added(monkeypatch, "llama-3.1-8b", h100, decode=256, prompt=0, **kw) == pytest.approx(0.0, abs=1e-15)
    # A prompt step of 2,048 tokens: norms 2,048 × 32,768 = 67,108,864 − C = 14,680,064 (two a layer), Q(h)
    # 2,048 × 12,288 = 25,165,824 fits, SiLU-and-mul 176,160,768 − C = 123,731,968, Q(I) 88,080,384 − C =
    # 35,651,584: 188,743,680 B a layer, × 32 = 6,039,797,760 B (S8: 14,361,296,896), 2.003 ms at 3.35 TB/s × 0.9.
    assert _added(monkeypatch, "llama-3.1-8b", h100, decode=0, prompt=2048, **kw) == pytest.approx(
        6_039_797_760 / bw, rel=1e-9)
    # 8,192 tokens: every pass beyond C: 8,192 × 219,136 − 6·C = 1,480,589,312 B a layer, × 32 = 47,378,857,984.
    assert _added(monkeypatch, "llama-3.1-8b", h100, decode=0, prompt=8192, **kw) == pytest.approx(
        47_378_857_984 / bw, rel=1e-9)


def test_an_unsourced_cache_counts_all_of_s8(monkeypatch: pytest.MonkeyPatch) -> None:
    # C = 0: 2,048 × 7,012,352 = 14,361,296,896 B, S8's count.
    gpu = replace(get_gpu("h100-sxm"), l2_cache_bytes=None)
    assert _added(monkeypatch, "llama-3.1-8b", gpu, engine="trtllm", dtype="fp8", decode=0, prompt=2048) == (
        pytest.approx(14_361_296_896 / (3.35e12 * 0.9), rel=1e-9))


def test_mi300x_counts_against_its_infinity_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    # Llama-3.1-8B BF16 with vLLM on an MI300X (5.3 TB/s, C = 268,435,456): no quantisation passes; 8h = 32,768
    # (64), RoPE 20,480 (32), 6I = 86,016 (32). 2,048 tokens: 176,160,768 B the largest pass, under C: nothing.
    mi300x = get_gpu("mi300x")
    kw = dict(engine="vllm", dtype="bf16")
    assert _added(monkeypatch, "llama-3.1-8b", mi300x, decode=0, prompt=2048, **kw) == pytest.approx(0.0, abs=1e-15)
    # 8,192 tokens: the norms reach C exactly (8,192 × 32,768 = 268,435,456), RoPE 167,772,160 fits, SiLU-and-mul
    # 704,643,072 − C = 436,207,616 B a layer, × 32 = 13,958,643,712 B at 5.3 TB/s × 0.9.
    assert _added(monkeypatch, "llama-3.1-8b", mi300x, decode=0, prompt=8192, **kw) == pytest.approx(
        13_958_643_712 / (5.3e12 * 0.9), rel=1e-9)
