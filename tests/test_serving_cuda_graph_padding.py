"""Rule CG (session 14, latency24): TensorRT-LLM's PyTorch backend pads a decode-only batch to a CUDA-graph batch size
(``_filter_cuda_graph_batch_sizes`` and ``_get_padded_batch`` in ``tensorrt_llm/_torch/pyexecutor/model_engine.py``,
1.0 era; the overview's ``llm_options.yml``). Expected values are worked by hand from those rules, not from the code."""

from dataclasses import replace

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import accuracy
from planner.serving.calibration import DERIVED
from planner.serving.step import (
    TRTLLM_OVERVIEW_GRAPH_SIZES,
    build_replica,
    cuda_graph_sizes,
    padded_decode_tokens,
    step_parts,
)


def test_graph_sizes_kept_below_the_cap_plus_the_cap():
    # 405B on 8 H100s, 1,000/2,000: max_batch_size 384, max_num_tokens 2,048 -> c = 384, itself listed: no extra entry
    assert cuda_graph_sizes(TRTLLM_OVERVIEW_GRAPH_SIZES, max_batch_size=384, max_num_tokens=2048) == (
        1, 2, 4, 8, 16, 32, 64, 128, 256, 384)
    # c = 1,792 is not listed: 1..1024 kept, then 1,792 added (2,048 > 1,792)
    assert cuda_graph_sizes(TRTLLM_OVERVIEW_GRAPH_SIZES, max_batch_size=1792, max_num_tokens=2792)[-2:] == (1024, 1792)
    # the token budget binds: min(4096, 600) = 600
    assert cuda_graph_sizes(TRTLLM_OVERVIEW_GRAPH_SIZES, max_batch_size=4096, max_num_tokens=600)[-2:] == (512, 600)


def test_padded_decode_tokens_by_hand():
    g = (1, 2, 4, 8, 16, 32, 64, 128, 256, 384)
    assert padded_decode_tokens(259, g) == 384  # 259 -> next kept size 384
    assert padded_decode_tokens(256, g) == 256  # a kept size is not padded
    assert padded_decode_tokens(3, g) == 4
    assert padded_decode_tokens(259, ()) == 259  # no sizes: no padding
    # attention DP over 8 ranks: 1,500 / 8 = 187.5 -> 188 a rank -> 256 -> 8 x 256 = 2,048
    assert padded_decode_tokens(1500, (1, 2, 4, 8, 16, 32, 64, 128, 256, 384, 512, 1024, 1792), dp=8) == 2048


def _replica(sizes):
    return build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), tp=2, context_tokens=1024,
                         input_tokens=512, engine="trtllm", calibration=DERIVED, graph_sizes=sizes)


def test_decode_step_runs_gemm_and_all_reduce_at_the_padded_batch():
    """A decode step of 259 sequences with sizes (..., 256, 384) costs what the same step of 384 tokens costs in its
    GEMM and all-reduce parts, with its attention and KV reads of 259 sequences and its host cost of 259."""
    padded = _replica((256, 384))
    plain = _replica(())
    f_pad, body_pad, comm_pad = step_parts(padded, DERIVED, decode_seqs=259)
    f_384, _, comm_384 = step_parts(plain, DERIVED, decode_seqs=384)
    f_259, body_259, comm_259 = step_parts(plain, DERIVED, decode_seqs=259)
    assert comm_pad == pytest.approx(comm_384)  # all-reduce message of 384 tokens
    assert comm_pad > comm_259
    assert f_pad == pytest.approx(f_259)  # per-sequence host cost of the 259 real sequences
    assert body_pad >= body_259
    # attention unchanged: with the GEMM part equal (weights only), the body differs only if GEMM compute binds
    no_kv = replace(padded, kv_read_bytes_per_seq=0.0, attn_flops_per_seq=0.0)
    no_kv_plain = replace(plain, kv_read_bytes_per_seq=0.0, attn_flops_per_seq=0.0)
    assert step_parts(no_kv, DERIVED, decode_seqs=259)[1] == pytest.approx(
        step_parts(no_kv_plain, DERIVED, decode_seqs=384)[1])


def test_prompt_steps_are_not_padded():
    padded = _replica((256, 384))
    plain = _replica(())
    assert step_parts(padded, DERIVED, decode_seqs=259, prefill_tokens=100, prefill_seqs=1) == pytest.approx(
        step_parts(plain, DERIVED, decode_seqs=259, prefill_tokens=100, prefill_seqs=1))


def test_only_overview_points_and_only_with_the_switch(monkeypatch):
    point = {"id": "trtllm-perf-overview/llama-3.1-405b/h100-sxmx8/1000-2000/offline"}
    monkeypatch.setattr(accuracy, "CUDA_GRAPH_PADDING", True)
    assert accuracy.cuda_graph_batch_sizes(point) == TRTLLM_OVERVIEW_GRAPH_SIZES
    assert accuracy.cuda_graph_batch_sizes({"id": "nim-benchmarking-perf/llama-3.3-70b/x"}) is None
    monkeypatch.setattr(accuracy, "CUDA_GRAPH_PADDING", False)
    assert accuracy.cuda_graph_batch_sizes(point) is None
