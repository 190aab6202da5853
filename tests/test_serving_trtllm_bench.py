"""The limits trtllm-bench throughput sets for the TensorRT-LLM performance overview's runs
(planner.serving.accuracy.trtllm_bench_settings; docs/serving.md section 2).

Expected values are worked by hand from trtllm-bench's heuristic (NVIDIA/TensorRT-LLM
tensorrt_llm/bench/build/tuning.py calc_engine_setting/finetune_setting, bench/benchmark/utils/general.py) and the
catalog's published model and GPU figures, not from the code under test.
"""
from __future__ import annotations

from planner.serving.accuracy import harness_settings, trtllm_bench_settings


def _point(**kw):
    base = {"id": "trtllm-perf-overview/qwen3-235b-a22b/h200-sxmx8/128-2048/offline", "engine": "trtllm",
            "model": "qwen3-235b-a22b", "gpu": "h200-sxm", "tp": 8, "pp": 1, "weight_dtype": "fp8",
            "input_tokens": 128, "output_tokens": 2048, "mode": "offline"}
    return {**base, **kw}


def test_moe_tp8_attention_dp_per_rank_limits():
    # Qwen3-235B-A22B (235.09 G parameters, 94 layers, 4 KV heads of 128) in FP8 on 8 H200 (NVML total 140.40 GiB):
    # KV room 0.95 * (8 * 140.40 - 235.09e9 / 2^30) = 0.95 * (1123.21 - 218.94) = 859.05 GiB;
    # a token 2 * 94 * max(8, 4) * 128 * 1 B = 192,512 B; a request of 2,176 tokens 0.3901 GiB -> R = 2,201.9;
    # max_batch_size 256 * ceil(2201.9 / 256) = 2,304; tokens 2201.9 * (1 + 128/2048) = 2,339.5 -> 2,560 (a multiple
    # of 256); chunked prefill off: max(2560, 128 + 2304) = 2,560. Attention DP: each of the 8 ranks has those limits.
    out = trtllm_bench_settings(_point())
    assert out == {"max_batch_size": 8 * 2304, "max_num_tokens": 8 * 2560, "enable_chunked_prefill": False,
                   "enable_attention_dp": True}


def test_dense_prefill_heavy_token_budget_at_least_prompt_plus_batch():
    # Llama-3.1-405B (405.85 G, 126 layers, 8 KV heads of 128) in FP8 on 8 H100 (79.65 GiB) at 20,000/2,000:
    # R = 0.95 * (637.18 - 377.98) / (2*126*8*128 B * 22,000 / 2^30) = 246.24 / 5.2872 = 46.57 -> batch 64 (minimum);
    # tokens 46.57 * 11 = 512.3 -> 2,048; chunked prefill off: max(2048, 20000 + 64) = 20,064. Dense: no attention DP.
    out = trtllm_bench_settings(_point(id="trtllm-perf-overview/llama-3.1-405b/h100-sxmx8/20000-2000/offline",
                                       model="llama-3.1-405b", gpu="h100-sxm", input_tokens=20000,
                                       output_tokens=2000))
    assert out == {"max_batch_size": 64, "max_num_tokens": 20064, "enable_chunked_prefill": False}


def test_other_sources_untouched():
    assert trtllm_bench_settings(_point(id="trtllm-dsr1-blog/deepseek-r1/b200-hgxx8/1024-2048/c3072")) == {}
    assert harness_settings(_point(id="nim-benchmarking-perf/llama-3.3-70b/h100-sxmx2/5000-500/c50"),
                            gpu_big=True) == {}
    assert harness_settings(_point(), gpu_big=True)["enable_attention_dp"] is True
