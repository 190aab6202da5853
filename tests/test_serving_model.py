"""Physics of the serving model: step time, steady state, saturation, Little's law, TP communication."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from planner import serving_performance
from planner.catalog import get_gpu, get_model
from planner.serving import schedule as sch
from planner.serving.calibration import DERIVED
from planner.serving.step import build_replica, step_parts, step_time_s

H100 = get_gpu("h100-sxm")
LLAMA8 = get_model("llama-3.1-8b")
LLAMA70 = get_model("llama-3.1-70b")


def _replica(model=LLAMA8, tp=1, **kw):
    return build_replica(model, H100, tp=tp, context_tokens=1500, input_tokens=1000, calibration=DERIVED, **kw)


def test_step_time_grows_with_decode_batch_and_prefill_tokens():
    r = _replica()
    times = [step_time_s(r, DERIVED, decode_seqs=b) for b in (1, 2, 8, 32, 128, 512)]
    assert all(a < b for a, b in zip(times, times[1:]))
    mixed = [step_time_s(r, DERIVED, decode_seqs=16, prefill_tokens=p, prefill_seqs=p / 1000) for p in (0, 256, 4096)]
    assert all(a < b for a, b in zip(mixed, mixed[1:]))


def test_decode_step_at_batch_one_is_the_weight_read_plus_fixed_cost():
    # 16.06e9 bytes of bf16 weights over 3.35e12 B/s at the derived 80%: 5.99 ms, plus the 0.6 ms fixed step and
    # 10 us for the sequence; the KV of 1,500 tokens (196.6 MB) at 60% adds 0.10 ms.
    r = _replica()
    expected = 2 * 8.03e9 / (3.35e12 * 0.8) + 6e-4 + 1e-5 + 1500 * 131072 / (3.35e12 * 0.6)
    assert step_time_s(r, DERIVED, decode_seqs=1) == pytest.approx(expected, rel=0.01)


def test_prefill_flops_leave_out_the_embedding_table():
    # A 4,096-token prefill is compute-bound: 2 * (8.03e9 - 2 * 128256 * 4096) FLOPs per token (no embedding
    # lookup FLOPs, no LM head for prompt tokens but the sampled one).
    r = _replica()
    body = 2 * (LLAMA8.params_active - 2 * 128256 * 4096)
    assert r.body_flops_per_token == pytest.approx(body, rel=1e-9)
    assert r.head_flops_per_token == pytest.approx(2 * 128256 * 4096)


def test_tensor_parallel_communication_grows_with_tp():
    comms = []
    for tp in (2, 4, 8):
        r = _replica(LLAMA70, tp=tp)
        comms.append(step_parts(r, DERIVED, decode_seqs=64, prefill_tokens=2048, prefill_seqs=2)[2])
    assert 0 < comms[0] < comms[1] < comms[2]
    assert step_parts(_replica(), DERIVED, decode_seqs=64)[2] == 0.0  # one GPU: no communication


def test_pcie_all_reduce_is_slower_than_nvlink():
    l40s = get_gpu("l40s")
    nv = build_replica(LLAMA8, H100, tp=2, context_tokens=1500, input_tokens=1000, calibration=DERIVED)
    pcie = build_replica(LLAMA8, l40s, tp=2, context_tokens=1500, input_tokens=1000, calibration=DERIVED)
    assert pcie.link_is_pcie and not nv.link_is_pcie
    assert step_parts(pcie, DERIVED, decode_seqs=64)[2] > step_parts(nv, DERIVED, decode_seqs=64)[2]


def test_moe_reads_only_touched_experts_at_small_batches():
    mix = get_model("mixtral-8x7b")
    r = build_replica(mix, H100, tp=2, context_tokens=1500, input_tokens=1000, calibration=DERIVED)
    one = step_parts(r, DERIVED, decode_seqs=1)[1]
    many = step_parts(r, DERIVED, decode_seqs=64)[1]
    # batch 1 touches 2 of 8 experts: well under the all-expert read a batch of 64 needs
    assert one < 0.6 * many


def test_tpot_rises_with_concurrency_and_throughput_with_it():
    results = [serving_performance(LLAMA8, H100, input_tokens=1000, output_tokens=200, concurrency=c,
                                   calibration=DERIVED) for c in (1, 4, 16, 64, 256)]
    tpots = [r.tpot_s for r in results]
    rates = [r.output_tokens_per_s for r in results]
    assert all(a < b for a, b in zip(tpots, tpots[1:]))
    assert all(a < b for a, b in zip(rates, rates[1:]))
    assert all(not r.saturated for r in results)


def test_open_loop_beyond_the_maximum_is_saturated_never_finite():
    offline = serving_performance(LLAMA8, H100, input_tokens=1000, output_tokens=200, calibration=DERIVED)
    over = serving_performance(LLAMA8, H100, input_tokens=1000, output_tokens=200,
                               request_rate=offline.requests_per_s * 1.2, calibration=DERIVED)
    assert over.saturated
    assert math.isinf(over.tpot_s) and math.isinf(over.ttft_s) and math.isinf(over.e2e_s)
    under = serving_performance(LLAMA8, H100, input_tokens=1000, output_tokens=200,
                                request_rate=offline.requests_per_s * 0.5, calibration=DERIVED)
    assert not under.saturated and math.isfinite(under.ttft_s)
    assert under.requests_per_s == pytest.approx(offline.requests_per_s * 0.5, rel=1e-3)


def test_ttft_grows_without_bound_towards_saturation():
    peak = serving_performance(LLAMA8, H100, input_tokens=2000, output_tokens=100, calibration=DERIVED)
    ttfts = [serving_performance(LLAMA8, H100, input_tokens=2000, output_tokens=100, calibration=DERIVED,
                                 request_rate=peak.requests_per_s * f).ttft_s for f in (0.2, 0.6, 0.9, 0.99)]
    assert all(a < b for a, b in zip(ttfts, ttfts[1:]))
    assert ttfts[-1] > 3 * ttfts[0]


def test_closed_and_open_loop_agree_through_littles_law():
    closed = serving_performance(LLAMA8, H100, input_tokens=1000, output_tokens=200, concurrency=32,
                                 calibration=DERIVED)
    # N = X * E2E (Little's law over the whole request)
    assert closed.requests_per_s * closed.e2e_s == pytest.approx(32, rel=0.02)
    opened = serving_performance(LLAMA8, H100, input_tokens=1000, output_tokens=200,
                                 request_rate=closed.requests_per_s, calibration=DERIVED)
    assert opened.tpot_s == pytest.approx(closed.tpot_s, rel=0.02)
    assert opened.running_batch == pytest.approx(closed.running_batch, rel=0.05)


def test_prefill_steals_decode_time():
    # same decode work, longer prompts: the mixed steps carry more prefill, so TPOT rises
    short = serving_performance(LLAMA8, H100, input_tokens=100, output_tokens=200, concurrency=32,
                                calibration=DERIVED)
    long = serving_performance(LLAMA8, H100, input_tokens=4000, output_tokens=200, concurrency=32,
                               calibration=DERIVED)
    assert long.tpot_s > 1.5 * short.tpot_s
    assert long.prefill_share > short.prefill_share


def test_sglang_stalls_decode_during_prefill_steps():
    kw = dict(input_tokens=2000, output_tokens=200, concurrency=32, calibration=DERIVED)
    assert sch.engine_schedule("sglang", gpu_big=True, gpu_gib=79.6, max_position=131072).mixed is False
    vllm = serving_performance(LLAMA8, H100, engine="vllm", **kw)
    sglang = serving_performance(LLAMA8, H100, engine="sglang", **kw)
    assert sglang.tpot_s > vllm.tpot_s


def test_admission_cap_makes_extra_clients_wait():
    capped = serving_performance(LLAMA8, H100, input_tokens=500, output_tokens=200, concurrency=64, max_num_seqs=16,
                                 calibration=DERIVED)
    assert capped.running_batch <= 16.5
    assert capped.admission_wait_s > 0
    assert capped.requests_per_s * capped.e2e_s == pytest.approx(64, rel=0.03)


def test_pipeline_parallel_replica_serves_more_than_one_stage_alone():
    one = serving_performance(LLAMA70, H100, tp=4, input_tokens=1000, output_tokens=200, calibration=DERIVED)
    two = serving_performance(LLAMA70, H100, tp=4, pp=2, input_tokens=1000, output_tokens=200, calibration=DERIVED)
    assert two.output_tokens_per_s > one.output_tokens_per_s


def test_one_shot_offline_batch_prefills_everything_first():
    from planner.serving.api import performance

    runs = [performance(LLAMA8, H100, input_tokens=2000, output_tokens=100, num_prompts=n, calibration=DERIVED)
            for n in (4, 16, 64)]
    ttfts = [r.ttft_s for r in runs]
    rates = [r.output_tokens_per_s for r in runs]
    assert all(a < b for a, b in zip(ttfts, ttfts[1:]))  # later prompts wait for the earlier ones' prefill
    assert all(a < b for a, b in zip(rates, rates[1:]))
    # 64 prompts of 2,000 tokens = 128,000 prompt tokens: at least 2 * 6.98e9 * 128,000 / 989e12 = 1.8 s of prefill
    # at 100% of peak before any decode, so 64 x 100 tokens take longer than that
    assert runs[-1].e2e_s > 2 * (8.03e9 - 2 * 128256 * 4096) * 128000 / 989e12


@pytest.mark.parametrize(("model", "layers", "moe"), [("llama-3.1-8b", 32, False), ("mixtral-8x7b", 32, True)])
def test_prompt_steps_without_cuda_graphs_take_the_eager_layer_floor(model, layers, moe):
    """vLLM V0 and SGLang run a step that carries prompt tokens eagerly (CUDA graphs for decode-only batches only):
    with 1 ms per layer its compute part is at least ``L x 1 ms`` (32 ms; 64 ms for an MoE model, whose layers count
    twice), well above 16 GB of weights read in ~6 ms; a decode-only step, and vLLM V1's prompt step, keep the
    graphed floor."""

    cal = DERIVED.replace(eager_layer_floor_s=1e-3)
    floor = layers * 1e-3 * (2 if moe else 1)
    for engine in ("sglang", "vllm-v0"):
        r = build_replica(get_model(model), H100, context_tokens=100, input_tokens=8, engine=engine,
                          calibration=cal)
        assert step_parts(r, cal, decode_seqs=0, prefill_tokens=8, prefill_seqs=1)[1] == pytest.approx(floor)
        assert step_parts(r, cal, decode_seqs=1)[1] < floor
    v1 = build_replica(get_model(model), H100, context_tokens=100, input_tokens=8, engine="vllm",
                       calibration=cal)
    assert step_parts(v1, cal, decode_seqs=0, prefill_tokens=8, prefill_seqs=1)[1] < floor


def test_pre_hopper_attention_kernels_have_their_own_efficiency():
    # Llama-3.1-8B prefilling 8,192 tokens on one A100 80GB: causal attention is 32 layers x 2 x 32 heads x
    # (128 + 128) x 8,192 x 8,193 / 2 = 1.7594e13 FLOPs at 312 TFLOP/s. Halving the pre-Hopper attention efficiency
    # from 0.70 to 0.35 adds 1.7594e13 / (312e12 x 0.70) = 80.6 ms; the Hopper constant does not touch the A100,
    # and the pre-Hopper one does not touch the H100 (vLLM: FlashAttention-2 below compute capability 9, FA3 on it).
    a100 = get_gpu("a100-80gb-sxm")
    flops = 32 * 2 * 32 * 256 * 8192 * 8193 / 2

    def prefill(gpu, cal):
        r = build_replica(LLAMA8, gpu, context_tokens=8192, input_tokens=8192, calibration=cal)
        return step_time_s(r, cal, decode_seqs=0, prefill_tokens=8192, prefill_seqs=1)

    fast, slow = DERIVED.replace(attn_eff_pre_hopper=0.70), DERIVED.replace(attn_eff_pre_hopper=0.35)
    assert prefill(a100, slow) - prefill(a100, fast) == pytest.approx(flops / (312e12 * 0.70), rel=1e-3)
    assert prefill(a100, DERIVED.replace(attn_eff=0.25)) == prefill(a100, DERIVED)
    assert prefill(H100, slow) == prefill(H100, fast)


def test_pre_hopper_gpus_are_those_below_compute_capability_9():
    """The catalog's compute capabilities (NVIDIA's table) pick the FlashAttention-2 class GPUs: the eight the
    serving model's session-10 set named by hand, no Hopper, Blackwell or AMD GPU."""
    from planner.catalog import gpus
    from planner.serving.calibration import DERIVED
    from planner.serving.step import attention_eff

    pre = {g.name for g in gpus() if attention_eff(g, DERIVED) == DERIVED.attn_eff_pre_hopper}
    assert pre == {"a100-40gb-sxm", "a100-80gb-sxm", "a100-80gb-pcie", "a10", "rtx-3090", "l4", "l40s", "rtx-4090"}
    cc = {g.name: g.compute_capability for g in gpus()}
    assert (cc["a100-80gb-sxm"], cc["h100-sxm"], cc["b200-hgx"], cc["mi300x"]) == (8.0, 9.0, 10.0, None)


def test_a_gpus_sheet_compute_capability_reaches_the_attention_efficiency():
    """What the GPUs sheet shows is what is computed: a row's compute capability picks the attention kernels."""
    from planner.catalog_sheet import gpu_from_token
    from planner.serving.calibration import DERIVED
    from planner.serving.step import attention_eff

    assert attention_eff(gpu_from_token("h100-sxm"), DERIVED) == DERIVED.attn_eff
    assert attention_eff(gpu_from_token("h100-sxm|compute_capability=8.6"), DERIVED) == DERIVED.attn_eff_pre_hopper


def test_enforce_eager_puts_the_eager_floor_on_every_step():
    """vLLM's ``enforce_eager=True`` captures no CUDA graph, so a decode-only step on vLLM V1 also launches every
    kernel from Python: with 1 ms per layer, Llama-3.1-8B's 32 layers floor the step's compute part at 32 ms, where
    the graphed step of one sequence reads 16 GB of weights in ~6 ms (AccelMark's vLLM 0.20 suite-C quantized runs
    record ``task.extra_config.enforce_eager: true``)."""
    cal = DERIVED.replace(eager_layer_floor_s=1e-3)
    graphed = build_replica(LLAMA8, H100, context_tokens=100, input_tokens=8, engine="vllm", calibration=cal)
    eager = build_replica(LLAMA8, H100, context_tokens=100, input_tokens=8, engine="vllm", calibration=cal,
                          enforce_eager=True)
    assert step_parts(graphed, cal, decode_seqs=1)[1] < 0.032
    assert step_parts(eager, cal, decode_seqs=1)[1] == pytest.approx(0.032)
    from planner.serving.api import performance

    base = performance("llama-3.1-8b", "h100-sxm", input_tokens=8, output_tokens=64, concurrency=1, calibration=cal)
    forced = performance("llama-3.1-8b", "h100-sxm", input_tokens=8, output_tokens=64, concurrency=1,
                         calibration=cal, enforce_eager=True)
    assert forced.tpot_s > base.tpot_s + 0.02


def test_gptq_named_explicitly_rebuilds_the_16_bit_weights_above_50_tokens():
    """``quantization="gptq"`` keeps vLLM on its ExLlama GPTQ kernels (no Marlin): a GEMM of more than 50 tokens
    first writes the dense 16-bit weights and cuBLAS reads them back (``csrc/quantization/gptq/q_gemm.cu``,
    ``MAX_Q_GEMM_ROWS`` 50). Llama-3.1-8B's linear layers without embedding and LM head are 8.03e9 − 2 × 128,256 ×
    4,096 = 6.98e9 parameters: 4 bytes each, 27.9 GB, at 80% of the H100's 3.35 TB/s add 10.4 ms to a step of 64
    sequences and nothing to a step of 50."""
    # GEMMs at full efficiency, so that 64 tokens stay bound by the weight read with either kernel
    cal = DERIVED.replace(gemm_eff=1.0, w4_kernel_eff=1.0)
    marlin = build_replica(LLAMA8, H100, context_tokens=1500, input_tokens=1000, calibration=cal,
                           weight_dtype="gptq")
    exllama = build_replica(LLAMA8, H100, context_tokens=1500, input_tokens=1000, calibration=cal,
                            weight_dtype="gptq", quantization="gptq")
    extra = 4 * (8.03e9 - 2 * 128256 * 4096) / (3.35e12 * 0.8)
    assert step_time_s(exllama, cal, decode_seqs=64) - step_time_s(marlin, cal, decode_seqs=64) == \
        pytest.approx(extra, rel=0.01)
    assert step_time_s(exllama, cal, decode_seqs=50) == step_time_s(marlin, cal, decode_seqs=50)
    bf16 = _replica(quantization="gptq")  # a 16-bit checkpoint has nothing to rebuild
    assert bf16.dequant_bytes == 0.0


def test_meta_fp8_checkpoint_keeps_attention_and_edge_layers_in_bf16():
    """Meta's FP8 Llama-3.1-405B quantizes only the feed-forward layers of layers 2-125 (Llama 3 paper, section 6.2;
    ``FbgemmFp8Config(modules_to_not_convert=...)``): 124 layers' attention (16,384 x 128 x (2 x 128 + 2 x 8)
    weights each) and two whole layers ((405.85e9 - 2 x 128,256 x 16,384)/126 each) stay in BF16, one byte more
    per weight than FP8, split over 8 GPUs; those bytes leave less room for the KV cache."""
    m = get_model("llama-3.1-405b")
    p16 = 124 * 16384 * 128 * 272 + 2 * (405.85e9 - 2 * 128256 * 16384) / 126
    kw = dict(tp=8, weight_dtype="fp8", context_tokens=3000, input_tokens=2048, calibration=DERIVED)
    plain = build_replica(m, H100, **kw)
    meta = build_replica(m, H100, checkpoint_recipe="meta-fp8", **kw)
    assert meta.dense_bytes - plain.dense_bytes == pytest.approx(p16 / 8, rel=1e-6)
    assert meta.peak_flops_per_s < plain.peak_flops_per_s
    from planner.serving.api import performance

    runs = [performance("llama-3.1-405b", "h100-sxm", tp=8, weight_dtype="fp8", input_tokens=2048,
                        output_tokens=2048, checkpoint_recipe=r) for r in (None, "meta-fp8")]
    assert runs[1].max_running < runs[0].max_running
    assert runs[1].output_tokens_per_s < runs[0].output_tokens_per_s
    from planner.errors import ArgumentError

    with pytest.raises(ArgumentError):
        build_replica(m, H100, checkpoint_recipe="other", **kw)


def test_trtllm_pytorch_backend_prompt_steps_take_the_eager_layer_floor():
    """TensorRT-LLM's PyTorch backend replays a CUDA graph only for a generation-only batch
    (``PyTorchModelEngine._maybe_get_cuda_graph``, ``tensorrt_llm/_torch/pyexecutor/model_engine.py``), so with
    ``eager_prefill=True`` a step carrying a 128-token prompt of Qwen3-30B-A3B (48 MoE layers, counted twice) costs
    at least 48 x 2 x 1 ms = 96 ms at 1 ms per layer, where reading all 30.5 G parameters in NVFP4 (~15 GB) on a
    GB200 (8 TB/s) takes about 2 ms; decode-only steps keep the graphed floor, and ``engine="trtllm"`` without it
    (NIM's backend is not stated) is unchanged."""
    cal = DERIVED.replace(eager_layer_floor_s=1e-3)
    model, gb200 = get_model("qwen3-30b-a3b"), get_gpu("gb200")
    kw = dict(context_tokens=192, input_tokens=128, engine="trtllm", weight_dtype="nvfp4", calibration=cal)
    pyt = build_replica(model, gb200, eager_prefill=True, **kw)
    default = build_replica(model, gb200, **kw)
    assert step_parts(pyt, cal, decode_seqs=0, prefill_tokens=128, prefill_seqs=1)[1] == pytest.approx(0.096)
    assert step_parts(pyt, cal, decode_seqs=64)[1] < 0.096
    assert step_parts(default, cal, decode_seqs=0, prefill_tokens=128, prefill_seqs=1)[1] < 0.096


def test_w8a8_on_an_a100_runs_on_int8_tensor_cores():
    """NVIDIA A100 datasheet: INT8 Tensor Core 624 TOPS dense, BF16 312 TFLOPS; no FP8. vLLM's compressed-tensors
    W8A8-INT8 scheme runs ``cutlass_scaled_mm`` on INT8 (compute capability >= 7.5); FP8 on an A100 is weight-only
    (Marlin), so it keeps the 16-bit peak. A long prompt is compute-bound, so W8A8's prefill step is shorter."""
    from planner.serving.step import gemm_peak_flops

    a100 = get_gpu("a100-80gb-sxm")
    assert a100.int8_ops_per_s == 624e12  # the catalog's fact (planner/data/gpus.json), no longer a constant in code
    assert gemm_peak_flops(a100, weight_dtype="w8a8") == pytest.approx(624e12)
    assert gemm_peak_flops(a100, weight_dtype="int8") == pytest.approx(624e12)
    assert gemm_peak_flops(a100, weight_dtype="fp8") == pytest.approx(312e12)
    assert gemm_peak_flops(a100, weight_dtype="bf16") == pytest.approx(312e12)
    model = get_model("llama-3.1-8b")
    kw = dict(context_tokens=4096, input_tokens=4096, calibration=DERIVED)
    w8a8 = build_replica(model, a100, weight_dtype="w8a8", **kw)
    fp8 = build_replica(model, a100, weight_dtype="fp8", **kw)
    assert step_time_s(w8a8, DERIVED, decode_seqs=0, prefill_tokens=4096) < \
        0.75 * step_time_s(fp8, DERIVED, decode_seqs=0, prefill_tokens=4096)


def test_int8_peak_stays_on_the_a100_class():
    """The INT8 peak moved from planner/serving/step.py to the catalog (session 12) without moving a figure: only
    compute capability 8.0 GPUs without FP8 (the three A100 boards, where latency9's evidence is) run W8A8 at it. The
    A10 has a datasheet INT8 figure (250 TOPS, twice its 125 TFLOPS BF16) but keeps its BF16 peak; GPUs with FP8 keep
    their FP8 peak for W8A8 (the H100's INT8 and FP8 figures are both 1,979 TOPS dense)."""
    from dataclasses import replace

    from planner.catalog import gpus
    from planner.serving.step import gemm_peak_flops

    on_int8 = {g.name for g in gpus()
               if gemm_peak_flops(g, weight_dtype="w8a8") != gemm_peak_flops(g, weight_dtype="bf16")
               and not g.fp8_flops_per_s}
    assert on_int8 == {"a100-40gb-sxm", "a100-80gb-sxm", "a100-80gb-pcie"}
    a10 = get_gpu("a10")
    assert a10.int8_ops_per_s == 250e12 and gemm_peak_flops(a10, weight_dtype="w8a8") == 125e12
    a100 = get_gpu("a100-40gb-sxm")
    # an edited figure is used
    assert gemm_peak_flops(replace(a100, int8_ops_per_s=500e12), weight_dtype="int8") == 500e12
    assert gemm_peak_flops(replace(a100, int8_ops_per_s=0.0), weight_dtype="int8") == 312e12  # 0: the BF16 peak


def test_w8a16_is_weight_only_on_every_gpu():
    """W8A16 (INT8 weights, 16-bit activations; RedHatAI's W8A16 checkpoints, vLLM's Marlin / Machete weight-only
    kernels) dequantizes to 16 bits before the tensor-core math: the A100's 312 TFLOPS BF16 peak, not its 624 TOPS
    INT8 one, and the H100's 989 TFLOPS dense BF16, not its FP8 peak (datasheets); its weights are 1 byte each like
    INT8's. AccelMark's suite C W8A16 runs (recorded as ``int8``) are scored as ``w8a16``."""
    from planner.memory import weight_bytes_per_gpu
    from planner.serving.accuracy import predict
    from planner.serving.api import default_calibration
    from planner.serving.step import gemm_peak_flops

    h100 = get_gpu("h100-sxm")
    assert gemm_peak_flops(get_gpu("a100-80gb-sxm"), weight_dtype="w8a16") == pytest.approx(312e12)
    assert gemm_peak_flops(h100, weight_dtype="w8a16") == pytest.approx(h100.bf16_flops_per_s)
    assert gemm_peak_flops(h100, weight_dtype="w8a16") < gemm_peak_flops(h100, weight_dtype="int8")
    model = get_model("llama-3.1-8b")
    assert weight_bytes_per_gpu(model, weight_dtype="w8a16") == weight_bytes_per_gpu(model, weight_dtype="int8")
    data = json.loads((Path(__file__).parent / "data" / "serving" / "accelmark-verified.json").read_text())
    point = next(p for p in data["points"] if "a100_sxm4_80gbx1_suite_C_nvidia_vllm_47f5d58e" in p["id"]
                 and p["id"].endswith("/w8a16/offline"))
    assert point["weight_dtype"] == "int8"  # as the source records it
    cal = default_calibration()
    w8a16 = predict(point, calibration=cal)
    w8a8 = predict({**point, "id": point["id"].replace("/w8a16/", "/w8a8/")}, calibration=cal)  # same run, INT8 math
    assert w8a8 is not None and w8a16 is not None
    assert w8a16.error("otps") < w8a8.error("otps")  # offline batches are compute-bound: 16-bit math is slower
