"""vLLM V0's step host cost at one GPU (S2 and the tried S2'' of docs/serving.md; session 13, latency17).

S2'' is vLLM V0's async output processing read from vLLM 0.7.3 (``ModelRunner.execute_model`` calls the previous
step's ``_process_model_outputs`` through ``async_callback`` after launching the forward): the per-sequence cost
overlapped with the GPU's step, ``t = o_engine + max(t_body + t_comm, o_seq·(d + n_p))``. It was refitted and not
kept (training loss 0.2860 against 0.2749 for the same refit under S2), so it is off
(``V0_ASYNC_OUTPUT_OVERLAP``); these tests pin what it computes when switched on and that the published model is S2.

Expected values are worked by hand from the formula, the catalog figures and the constants. The common case:
Llama-3.1-8B bf16 (8.03 G parameters, 16.06 GB; V = 128,256, h = 4,096; 32 layers, 8 KV heads of 128: 131,072 B of
KV a token) on one H100 SXM (3.35 TB/s, 989 TFLOP/s bf16), 32 decoding sequences at 1,024 tokens of context, the
derived constants (η_w 0.8, η_kv 0.6, η_gemm 0.7, M½ 64; vLLM V0's o_engine 1.5 ms, o_seq 50 us):

- weights 16.06e9 / (3.35e12 x 0.8) = 5.992537 ms;
- KV 32 x 1,024 x 131,072 B / (3.35e12 x 0.6) = 2.136800 ms;
- GEMM FLOPs 32 x 2 x (8.03e9 − 128,256 x 4,096) = 480.30 GFLOP at 989e12 x 0.7 x 32/96: 2.0813 ms < 5.9925 ms;
- t_body = 5.992537 + 2.136800 = 8.129337 ms (the CUDA-graph floor 32 x 20 us = 0.64 ms is below it); no t_comm.
"""

from __future__ import annotations

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import step
from planner.serving.api import default_calibration
from planner.serving.calibration import DERIVED
from planner.serving.schedule import first_token_delay_s
from planner.serving.step import build_replica, overlaps_output_processing, step_parts, step_time_s

BODY_MS = 5.992537 + 2.136800  # t_body of the module docstring's case, worked by hand


def _replica(cal=DERIVED, *, engine: str = "vllm-v0", **kwargs):
    return build_replica(get_model("llama-3.1-8b"), get_gpu("h100-sxm"), context_tokens=1024, input_tokens=512,
                         engine=engine, calibration=cal, **kwargs)


def test_published_model_is_the_serial_sum():
    """S2'' was not kept: the flag is off, no engine overlaps, and V0's step is ``o_engine + o_seq·d + t_body``:
    1.5 ms + 32 x 50 us + 8.129337 ms = 11.229337 ms."""
    assert step.V0_ASYNC_OUTPUT_OVERLAP is False
    assert not overlaps_output_processing("vllm-v0")
    r = _replica()
    assert not r.overlap_seq
    assert step_time_s(r, DERIVED, decode_seqs=32) * 1e3 == pytest.approx(1.5 + 1.6 + BODY_MS, rel=1e-5)


def test_published_constants_fixed_part_at_32_sequences():
    """With the published constants (planner/data/serving_calibration.json after session 23's trimmed refit, rule T:
    V0's o_engine session 16's 4.047715 ms x 1.6^(1/4) = 4.552395 ms, o_seq session 16's 112.468265 us / 1.6^(1/2) =
    88.913970 us), a 32-sequence V0 step carries 4.552395 + 32 x 0.088913970 = 7.397642 ms of host time."""
    cal = default_calibration()
    fixed, _, comm = step_parts(_replica(cal), cal, decode_seqs=32)
    assert fixed * 1e3 == pytest.approx(7.397642, rel=1e-6)
    assert comm == 0.0


def test_overlap_hides_the_per_sequence_cost_behind_the_gpu(monkeypatch):
    """S2'' switched on: 32 x 50 us = 1.6 ms of host work is below t_body (8.129 ms), so the step is
    1.5 + 8.129337 = 9.629337 ms, 1.6 ms less than S2; the parts say where: t_fixed is o_engine alone."""
    monkeypatch.setattr(step, "V0_ASYNC_OUTPUT_OVERLAP", True)
    r = _replica()
    assert r.overlap_seq
    fixed, body, comm = step_parts(r, DERIVED, decode_seqs=32)
    assert fixed * 1e3 == pytest.approx(1.5, rel=1e-9)
    assert body * 1e3 == pytest.approx(BODY_MS, rel=1e-5)
    assert step_time_s(r, DERIVED, decode_seqs=32) * 1e3 == pytest.approx(1.5 + BODY_MS, rel=1e-5)


def test_host_bound_step_takes_the_host_time(monkeypatch):
    """S2'' with o_seq 0.5 ms: 32 x 0.5 ms = 16 ms of host work exceeds t_body, so the step is o_engine + 16 ms =
    17.5 ms whatever the GPU does (S2 would give 1.5 + 16 + 8.129337 = 25.629337 ms)."""
    cal = DERIVED.replace(per_seq_overhead_s={"vllm-v0": 5e-4})
    serial = step_time_s(_replica(cal), cal, decode_seqs=32)
    monkeypatch.setattr(step, "V0_ASYNC_OUTPUT_OVERLAP", True)
    overlapped = step_time_s(_replica(cal), cal, decode_seqs=32)
    assert overlapped * 1e3 == pytest.approx(17.5, rel=1e-9)
    assert serial * 1e3 == pytest.approx(1.5 + 16.0 + BODY_MS, rel=1e-5)


def test_no_overlap_where_vllm_turns_async_output_off(monkeypatch):
    """vLLM 0.7.3 turns async output processing off with ``enforce_eager`` (``CudaPlatform.is_async_output_supported``)
    and pipeline parallelism (``ModelConfig.verify_async_output_proc``); vLLM V1 is another engine. Eager V0 at 32
    sequences: the eager floor 32 x 0.1 ms = 3.2 ms is below t_body, so the step stays S2's 11.229337 ms."""
    monkeypatch.setattr(step, "V0_ASYNC_OUTPUT_OVERLAP", True)
    assert overlaps_output_processing("vllm-v0")
    assert not overlaps_output_processing("vllm-v0", enforce_eager=True)
    assert not overlaps_output_processing("vllm-v0", pp=2)
    assert not overlaps_output_processing("vllm")
    eager = _replica(enforce_eager=True)
    assert step_time_s(eager, DERIVED, decode_seqs=32) * 1e3 == pytest.approx(1.5 + 1.6 + BODY_MS, rel=1e-5)


def test_first_token_delay_is_unchanged_by_the_overlap(monkeypatch):
    """Q4' (the first token leaves after the next step's launch) keeps ``o_engine + o_seq·d``: 1.5 ms + 10 x 50 us =
    2.0 ms with or without S2''."""
    assert first_token_delay_s(_replica(), decode_seqs=10) * 1e3 == pytest.approx(2.0, rel=1e-9)
    monkeypatch.setattr(step, "V0_ASYNC_OUTPUT_OVERLAP", True)
    assert first_token_delay_s(_replica(), decode_seqs=10) * 1e3 == pytest.approx(2.0, rel=1e-9)
