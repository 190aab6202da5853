"""Rule O (session 15, latency30, docs/serving.md; tried, not kept, off): TensorRT-LLM's PyTorch backend runs its
overlap scheduler (``PyExecutor._executor_loop_overlap``), so a step takes ``max(t_body + t_comm, t_launch + h)``
instead of ``h + t_body + t_comm``, with ``h`` S2's host term and ``t_launch`` the eager floor of a step without a
CUDA graph (its kernels launched from Python, serial on the host).

Expected values are worked by hand on a made-up replica with the derived constants (``DERIVED``: ``η_w`` 0.8,
``f_layer`` 20 µs, ``f_eager`` 100 µs): 40 dense layers, tp 1, 8e9 B of weights at 1e12 B/s, no FLOPs, no KV, no
attention, ``o_engine`` 2 ms, ``o_seq`` 0.1 ms. The weight read is ``8e9/(1e12·0.8)`` = 10 ms, the graph floor
``40·20 µs`` = 0.8 ms, the eager floor ``40·100 µs`` = 4 ms, no collective:

- a decode step of 30 sequences: ``h`` = 2 + 30·0.1 = 5 ms; sum 15 ms, rule O ``max(10, 5)`` = 10 ms;
- a decode step of 100: ``h`` = 12 ms; sum 22 ms, rule O ``max(10, 12)`` = 12 ms (fixed part 2 ms);
- a prompt step of 512 tokens from 4 prompts, without a CUDA graph: ``h`` = 2.4 ms, ``t_body`` = max(10, 4) = 10 ms;
  sum 12.4 ms, rule O ``max(10, 4 + 2.4)`` = 10 ms;
- the same with 2e9 B of weights (read 2.5 ms, so the step is launch-bound, ``t_body`` = 4 ms): sum 6.4 ms and rule O
  ``max(4, 4 + 2.4)`` = 6.4 ms, the same: a launch-bound eager step has nothing to overlap.
"""

from __future__ import annotations

import dataclasses

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import step
from planner.serving.calibration import DERIVED
from planner.serving.step import Replica, build_replica, overlaps_host_work, step_parts, step_time_s


def _made_up(dense_bytes: float = 8e9, overlap: bool = True) -> Replica:
    return Replica(layers=40, hidden=4096, tp=1, pp=1, ep=1, dense_bytes=dense_bytes, expert_bytes=0.0,
                   num_experts=0, experts_per_token=0, body_flops_per_token=0.0, expert_flops_per_token=0.0,
                   head_flops_per_token=0.0, kv_read_bytes_per_seq=0.0, attn_flops_per_seq=0.0,
                   attn_flops_per_prefill_token=0.0, peak_flops_per_s=1e15, peak16_flops_per_s=1e15,
                   mem_bw_bytes_per_s=1e12, link_bytes_per_s=450e9, link_is_pcie=False, quant_kernel_eff=1.0,
                   engine="trtllm", fixed_s=2e-3, seq_s=1e-4, eager_prefill=True, overlap_host=overlap)


def test_switch_is_off_as_decided():
    assert step.TRTLLM_OVERLAP_SCHEDULER is False
    assert overlaps_host_work("trtllm", pytorch_backend=True) is False


def test_which_replicas_overlap(monkeypatch):
    monkeypatch.setattr(step, "TRTLLM_OVERLAP_SCHEDULER", True)
    assert overlaps_host_work("trtllm", pytorch_backend=True) is True
    assert overlaps_host_work("trtllm", pytorch_backend=False) is False  # NIM's engines: the C++ executor
    assert overlaps_host_work("trtllm", pytorch_backend=True, pp=2) is False  # _executor_loop_pp
    for engine in ("vllm", "vllm-v0", "sglang"):
        assert overlaps_host_work(engine, pytorch_backend=True) is False


def test_build_replica_sets_the_flag(monkeypatch):
    monkeypatch.setattr(step, "TRTLLM_OVERLAP_SCHEDULER", True)
    kw = dict(context_tokens=1024, input_tokens=512, calibration=DERIVED)
    m, g = get_model("llama-3.1-8b"), get_gpu("h100-sxm")
    assert build_replica(m, g, engine="trtllm", eager_prefill=True, **kw).overlap_host is True
    assert build_replica(m, g, engine="trtllm", **kw).overlap_host is False
    assert build_replica(m, g, engine="trtllm", eager_prefill=True, pp=2, **kw).overlap_host is False
    assert build_replica(m, g, engine="sglang", **kw).overlap_host is False
    monkeypatch.setattr(step, "TRTLLM_OVERLAP_SCHEDULER", False)
    assert build_replica(m, g, engine="trtllm", eager_prefill=True, **kw).overlap_host is False


@pytest.mark.parametrize("d, summed, overlapped", [(30, 15e-3, 10e-3), (100, 22e-3, 12e-3)])
def test_decode_step(d, summed, overlapped):
    assert step_time_s(_made_up(overlap=False), DERIVED, decode_seqs=d) == pytest.approx(summed, rel=1e-9)
    assert step_time_s(_made_up(), DERIVED, decode_seqs=d) == pytest.approx(overlapped, rel=1e-9)


def test_decode_step_parts():
    fixed, body, comm = step_parts(_made_up(), DERIVED, decode_seqs=100)
    assert (fixed, body, comm) == pytest.approx((2e-3, 10e-3, 0.0), rel=1e-9, abs=1e-15)
    fixed, body, comm = step_parts(_made_up(), DERIVED, decode_seqs=30)
    assert (fixed, body, comm) == pytest.approx((0.0, 10e-3, 0.0), rel=1e-9, abs=1e-15)


def test_eager_prompt_step_keeps_its_launch_serial():
    kw = dict(decode_seqs=0, prefill_tokens=512, prefill_seqs=4)
    assert step_time_s(_made_up(overlap=False), DERIVED, **kw) == pytest.approx(12.4e-3, rel=1e-9)
    assert step_time_s(_made_up(), DERIVED, **kw) == pytest.approx(10e-3, rel=1e-9)
    bound_off, bound_on = _made_up(2e9, overlap=False), _made_up(2e9)
    assert step_time_s(bound_off, DERIVED, **kw) == pytest.approx(6.4e-3, rel=1e-9)
    assert step_time_s(bound_on, DERIVED, **kw) == pytest.approx(6.4e-3, rel=1e-9)


def test_without_graph_flag_no_launch_term():
    r = dataclasses.replace(_made_up(2e9), eager_prefill=False)  # a prompt step under the graph floor (0.8 ms)
    kw = dict(decode_seqs=0, prefill_tokens=512, prefill_seqs=4)
    assert step_time_s(r, DERIVED, **kw) == pytest.approx(2.5e-3, rel=1e-9)  # max(2.5, 0 + 2.4)
