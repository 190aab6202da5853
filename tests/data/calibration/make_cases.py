# ruff: noqa: E501
"""Writes cases.json (run: python tests/data/calibration/make_cases.py). The log lines are copied verbatim from the
sources named in each case."""
import json
from pathlib import Path

LLMD = "llm-d-incubation/llm-d-planner"
LLMD_COMMIT = "d3121e059da88662db39a926a3ead964be97359b"
def llmd(path):
    return {"repo": LLMD, "path": f"accuracy/results/v0.19.0/logs/{path}", "commit": LLMD_COMMIT,
            "url": f"https://github.com/{LLMD}/blob/{LLMD_COMMIT}/accuracy/results/v0.19.0/logs/{path}"}
def issue(repo, n, kind="issues"):
    return {"repo": repo, "ref": f"#{n}", "url": f"https://github.com/{repo}/{kind}/{n}"}
H100_TOTAL = 79.19  # what torch/vLLM report for an H100 80GB SXM in the llm-d logs (the log of the case does not say)
RTX3090 = {"display_name": "NVIDIA GeForce RTX 3090", "mem_bw_bytes_per_s": 936e9, "bf16_flops_per_s": 71e12,
           "source": "NVIDIA Ampere GA102 GPU Architecture whitepaper (936 GB/s; 71 TFLOPS dense FP16/BF16 tensor, FP32 accumulate)",
           "as_of": "2020-09"}
cases = [
 dict(id="llmd-llama31-8b-h100-16k", source=llmd("meta-llama-llama-3-1-8b--h100-80gb--tp1pp1dp1--16384.log"),
      engine="vllm", engine_version="0.19.0", model="llama-3.1-8b", gpu="h100-sxm", gpu_total_gib=79.19, tp=1,
      gpu_memory_utilization=0.95, max_model_len=16384, max_num_batched_tokens=8192,
      log="""(EngineCore pid=243) DEBUG 04-22 01:47:26 [v1/worker/gpu_worker.py:284] worker init memory snapshot: torch_peak=0.0GiB, free_memory=78.68GiB, total_memory=79.19GiB, cuda_memory=0.51GiB, torch_memory=0.0GiB, non_torch_memory=0.51GiB, timestamp=1776822446.960836, auto_measure=True
(EngineCore pid=243) DEBUG 04-22 01:47:55 [v1/worker/gpu_worker.py:435] Memory profiling takes 18.17 seconds. Total non KV cache memory: 17.12GiB; torch peak memory increase: 1.89GiB; non-torch forward increase memory: 0.25GiB; weights memory: 14.99GiB.
(EngineCore pid=243) INFO 04-22 01:47:55 [v1/worker/gpu_worker.py:436] Available KV cache memory: 58.11 GiB
(EngineCore pid=243) INFO 04-22 01:47:55 [v1/core/kv_cache_utils.py:1319] GPU KV cache size: 476,016 tokens
(EngineCore pid=243) INFO 04-22 01:47:55 [v1/core/kv_cache_utils.py:1324] Maximum concurrency for 16,384 tokens per request: 29.05x""",
      notes="Dense GQA, TP=1, --gpu-memory-utilization 0.95, vLLM 0.19.0 on H100 (llm-d accuracy sweep)."),
 dict(id="llmd-gemma2-9b-h100", source=llmd("google-gemma-2-9b-it--h100-80gb--tp1pp1dp1--8192.log"),
      engine="vllm", engine_version="0.19.0", model="gemma-2-9b", gpu="h100-sxm", gpu_total_gib=79.19, tp=1,
      gpu_memory_utilization=0.95, max_model_len=8192, max_num_batched_tokens=8192,
      log="""(EngineCore pid=285) DEBUG 04-22 15:57:45 [v1/worker/gpu_worker.py:435] Memory profiling takes 21.51 seconds. Total non KV cache memory: 21.11GiB; torch peak memory increase: 3.65GiB; non-torch forward increase memory: 0.25GiB; weights memory: 17.22GiB.
(EngineCore pid=285) INFO 04-22 15:57:45 [v1/worker/gpu_worker.py:436] Available KV cache memory: 54.12 GiB
(EngineCore pid=285) INFO 04-22 15:57:45 [v1/core/kv_cache_utils.py:1319] GPU KV cache size: 168,880 tokens
(EngineCore pid=285) INFO 04-22 15:57:45 [v1/core/kv_cache_utils.py:1324] Maximum concurrency for 8,192 tokens per request: 20.60x""",
      notes="Sliding window (4096) on every other layer: vLLM makes 2 KV groups of 21 layers; logged tokens = num_blocks // 2 x 16."),
 dict(id="llmd-gemma3-27b-h100", source=llmd("google-gemma-3-27b-it--h100-80gb--tp1pp1dp1--8192.log"),
      engine="vllm", engine_version="0.19.0", model="gemma-3-27b", gpu="h100-sxm", gpu_total_gib=79.19, tp=1,
      gpu_memory_utilization=0.95, max_model_len=8192, max_num_batched_tokens=8192,
      log="""(EngineCore pid=509) DEBUG 04-22 16:10:11 [v1/worker/gpu_worker.py:435] Memory profiling takes 35.21 seconds. Total non KV cache memory: 55.7GiB; torch peak memory increase: 3.99GiB; non-torch forward increase memory: 0.26GiB; weights memory: 51.45GiB.
(EngineCore pid=509) INFO 04-22 16:10:11 [v1/worker/gpu_worker.py:436] Available KV cache memory: 19.53 GiB
(EngineCore pid=509) WARNING 04-22 16:10:11 [v1/core/kv_cache_utils.py:1059] Add 8 padding layers, may waste at most 15.38% KV cache memory
(EngineCore pid=509) INFO 04-22 16:10:11 [v1/core/kv_cache_utils.py:1319] GPU KV cache size: 36,560 tokens
(EngineCore pid=509) INFO 04-22 16:10:11 [v1/core/kv_cache_utils.py:1324] Maximum concurrency for 8,192 tokens per request: 4.46x""",
      notes="Hybrid 52 sliding (1024) + 10 full layers: 7 groups of 10 (8 padding layers); logged tokens are num_blocks // 7 x 16, not a per-token capacity. Weights include the vision tower (not in the catalog's text parameter count)."),
 dict(id="llmd-llama31-8b-h100-fp32", source=llmd("meta-llama-llama-3--h100-80gb--tp1pp1dp1--8192-dtf32.log"),
      engine="vllm", engine_version="0.19.0", model="llama-3.1-8b", gpu="h100-sxm", gpu_total_gib=79.19, tp=1,
      gpu_memory_utilization=0.95, max_model_len=8192, max_num_batched_tokens=8192, weight_dtype="fp32",
      log="""(EngineCore pid=244) DEBUG 04-22 00:09:01 [v1/worker/gpu_worker.py:435] Memory profiling takes 21.36 seconds. Total non KV cache memory: 32.43GiB; torch peak memory increase: 2.21GiB; non-torch forward increase memory: 0.25GiB; weights memory: 29.98GiB.
(EngineCore pid=244) INFO 04-22 00:09:01 [v1/worker/gpu_worker.py:436] Available KV cache memory: 42.8 GiB
(EngineCore pid=244) INFO 04-22 00:09:01 [v1/core/kv_cache_utils.py:1319] GPU KV cache size: 175,296 tokens
(EngineCore pid=244) INFO 04-22 00:09:01 [v1/core/kv_cache_utils.py:1324] Maximum concurrency for 8,192 tokens per request: 21.40x""",
      notes="--dtype float32: fp32 weights and an fp32 KV cache (4 bytes per element)."),
 dict(id="llmd-llama33-70b-fp8-h100-tp2", source=llmd("fp8dyn-llama-3-3-70b--h100-80gb--tp2pp1dp1--8192.log"),
      engine="vllm", engine_version="0.19.0", model="llama-3.3-70b", gpu="h100-sxm", gpu_total_gib=79.19, tp=2,
      gpu_memory_utilization=0.95, max_model_len=8192, max_num_batched_tokens=8192, weight_dtype="fp8",
      log="""(Worker_TP0 pid=444) INFO 04-22 00:17:32 [v1/worker/gpu_model_runner.py:4820] Model loading took 33.88 GiB memory and 54.254199 seconds
(Worker_TP0 pid=444) DEBUG 04-22 00:18:23 [v1/worker/gpu_worker.py:435] Memory profiling takes 50.74 seconds. Total non KV cache memory: 37.95GiB; torch peak memory increase: 1.96GiB; non-torch forward increase memory: 2.1GiB; weights memory: 33.88GiB.
(Worker_TP0 pid=444) INFO 04-22 00:18:23 [v1/worker/gpu_worker.py:436] Available KV cache memory: 37.28 GiB
(EngineCore pid=245) INFO 04-22 00:18:23 [v1/core/kv_cache_utils.py:1319] GPU KV cache size: 244,304 tokens
(EngineCore pid=245) INFO 04-22 00:18:23 [v1/core/kv_cache_utils.py:1324] Maximum concurrency for 8,192 tokens per request: 29.82x""",
      notes="RedHatAI FP8-dynamic checkpoint (compressed-tensors W8A8 FP8; embeddings and LM head stay bf16), TP=2."),
 dict(id="vllm21348-qwen3-235b-fp8-h100-tp4-vllm", expect={'kv_bytes_per_token': "rank 0's available memory over the minimum token count of 4 ranks (another rank had ~1% less free memory)", 'calibrated': "the log's available memory belongs to rank 0, the token count to the smallest rank"}, source=issue("vllm-project/vllm", 21348),
      engine="vllm", engine_version="0.9.2", model="qwen3-235b-a22b", gpu="h100-sxm", gpu_total_gib=H100_TOTAL, tp=4,
      gpu_memory_utilization=None, max_model_len=40960, weight_dtype="fp8",
      log="""Available KV cache memory: 8.11 GiB
GPU KV cache size: 178,880 tokens""",
      notes="Qwen3-235B-A22B-FP8, 4xH100, defaults (util 0.9, max_model_len 40960 from the config), LMCache connector; version not stated (July 2025: 0.9.2 assumed). Available memory is rank 0's; the token count is the minimum over the 4 ranks."),
 dict(id="vllm21348-qwen3-235b-fp8-h100-tp4-sglang", source=issue("vllm-project/vllm", 21348),
      engine="sglang", engine_version="0.4.9", model="qwen3-235b-a22b", gpu="h100-sxm", gpu_total_gib=H100_TOTAL, tp=4,
      gpu_memory_utilization=0.93, max_model_len=40960, weight_dtype="fp8",
      log="""KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB""",
      notes="Same model and GPUs on SGLang with --mem-fraction-static 0.93 --tp 4."),
 dict(id="lmcache1739-qwen3-14b", source=issue("LMCache/LMCache", 1739),
      engine="vllm", engine_version="0.11.0", model="configs/qwen3-14b.json", gpu=None, tp=1,
      gpu_memory_utilization=None, max_model_len=32768,
      log="""(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [gpu_worker.py:298] Available KV cache memory: 6.51 GiB
(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [kv_cache_utils.py:864] GPU KV cache size: 42,656 tokens
(EngineCore_DP0 pid=1133552) INFO 10-03 16:22:17 [kv_cache_utils.py:868] Maximum concurrency for 32,768 tokens per request: 1.30x""",
      notes="GPU and utilization not stated: checks KV bytes per token and concurrency only."),
 dict(id="vllm12330-llama3-8b-a100-40g", expect={'kv_cache_tokens': 'V0 logged a 9.37 GiB activation peak; the shape-derived V0 peak for the default 256 dummy prompts is 1.22 GiB (PR #10511 logs 1.26 GiB for the same model at 8192 tokens on H100). The stored text has no command line; the sampler term reaches 9.37 GiB only with ~2048 dummy prompts (e.g. --max-num-seqs 2048: 2048 x 128,256 x 38 B + 64 MiB = 9.36 GiB), which the source does not confirm'}, source=issue("vllm-project/vllm", 12330),
      engine="vllm-v0", engine_version="0.6.6", model="llama-3.1-8b", gpu="a100-40gb-sxm", gpu_total_gib=39.50, tp=1,
      gpu_memory_utilization=0.90, max_model_len=8192,
      log="""INFO 01-13 11:35:21 model_runner.py:1099] Loading model weights took 14.9595 GB
INFO 01-13 11:35:23 worker.py:241] the current vLLM instance can use total_gpu_memory (39.50GiB) x gpu_memory_utilization (0.90) = 35.55GiB
INFO 01-13 11:35:23 worker.py:241] model weights take 14.96GiB; non_torch_memory takes 0.10GiB; PyTorch activation peak memory takes 9.37GiB; the rest of the memory reserved for KV Cache is 11.12GiB.
INFO 01-13 11:35:23 gpu_executor.py:76] # GPU blocks: 5691, # CPU blocks: 2048
INFO 01-13 11:35:23 gpu_executor.py:80] Maximum concurrency for 8192 tokens per request: 11.12x""",
      notes="Meta-Llama-3-8B (same shapes as Llama-3.1-8B), V0 engine (Jan 2025, 0.6.6 assumed)."),
 dict(id="vllm10517-llama31-8b-3090-20k", source=issue("vllm-project/vllm", 10517),
      engine="vllm-v0", engine_version="0.6.4", model="llama-3.1-8b", gpu="rtx-3090", gpu_total_gib=23.58, gpu_spec=RTX3090, tp=1,
      gpu_memory_utilization=0.90, max_model_len=20000,
      log="""Loading model weights took 14.9888 GB
Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.06GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=3.81GiB gpu_memory_utilization=0.90
# GPU blocks: 1952, # CPU blocks: 2048
Maximum concurrency for 20000 tokens per request: 1.56x""",
      notes="RTX 3090 (not in the GPU catalog: total from the log), V0 engine (Dec 2024)."),
 dict(id="vllm10517-llama31-8b-3090-29k", source=issue("vllm-project/vllm", 10517),
      engine="vllm-v0", engine_version="0.6.4", model="llama-3.1-8b", gpu="rtx-3090", gpu_total_gib=23.58, gpu_spec=RTX3090, tp=1,
      gpu_memory_utilization=0.90, max_model_len=29000,
      log="""Loading model weights took 14.9888 GB
Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB gpu_memory_utilization=0.90
# GPU blocks: 1478, # CPU blocks: 2048
Maximum concurrency for 29000 tokens per request: 0.82x""",
      notes="Same setup at --max-model-len 29000 (the engine then refuses to start: 23648 < 29000)."),
 dict(id="vllm13061-r1-qwen14b-4090-tp2", expect={'kv_bytes_per_token': "the memory line is a non-driver rank's (0.19 GiB activation: no sampler), the token count the minimum over both ranks, set by the driver rank, which also samples 256 x 152,064 logits; the driver's line is not in the stored text, so available / tokens is not the per-token size", 'calibrated': "the log's available memory belongs to a different rank than the token count"}, source=issue("vllm-project/vllm", 13061),
      engine="vllm-v0", engine_version="0.7.2", model="configs/deepseek-r1-distill-qwen-14b.json", gpu="rtx-4090", tp=2,
      gpu_memory_utilization=0.98, max_model_len=131072,
      log="""(VllmWorkerProcess pid=1786) INFO 02-11 07:40:45 model_runner.py:1115] Loading model weights took 13.9476 GB
model weights take 13.95GiB; non_torch_memory takes 0.25GiB; PyTorch activation peak memory takes 0.19GiB; the rest of the memory reserved for KV Cache is 8.69GiB.
ValueError: The model's max seq len (131072) is larger than the maximum number of tokens that can be stored in KV cache (81536).""",
      notes="2x RTX 4090, TP=2, util 0.98. The token count is the minimum over both ranks; the log's available memory is a non-driver rank's (its 0.19 GiB activation has no sampler), so available/tokens is not the per-token size. The binding driver rank samples: its derived extra peak (1.40 - 0.19 GiB) leaves 8.69 - 1.21 = 7.48 GiB, and 81,536 x 98,304 B = 7.47 GiB (a model-derived reconciliation, not a logged value). max_num_batched_tokens not stated (V0 0.7 turns chunked prefill on above 32K: 2048 assumed)."),
 dict(id="vllm10511-llama3-8b-h100-v0", source=issue("vllm-project/vllm", 10511, "pull"),
      engine="vllm-v0", engine_version="0.6.5", model="llama-3.1-8b", gpu="h100-sxm", gpu_total_gib=79.22, tp=1,
      gpu_memory_utilization=0.90, max_model_len=8192,
      log="""INFO 12-13 19:54:18 worker.py:243] total_gpu_memory     79.22GiB
INFO 12-13 19:54:18 worker.py:243] model weights take   14.96GiB
INFO 12-13 19:54:18 worker.py:243] non_torch_memory     1.79GiB
INFO 12-13 19:54:18 worker.py:243] PyTorch activation peak memory       1.26GiB
INFO 12-13 19:54:18 worker.py:243] available_kv_cache_memory    53.29GiB""",
      notes="Meta-Llama-3-8B, maintainer sanity check of the overhauled V0 profiler (PR #10511); no token line."),
 dict(id="vllm23278-gpt-oss-120b-h100", source=issue("vllm-project/vllm", 23278),
      engine="vllm", engine_version="0.10.1", model="gpt-oss-120b", gpu="h100-sxm", gpu_total_gib=H100_TOTAL, tp=1,
      gpu_memory_utilization=None, max_model_len=131072,
      log="""(EngineCore_0 pid=5839) INFO 08-20 18:04:10 [gpu_model_runner.py:2007] Model loading took 65.9651 GiB and 12.799889 seconds
(EngineCore_0 pid=5839) INFO 08-20 18:04:22 [gpu_worker.py:276] Available KV cache memory: -2.14 GiB""",
      notes="MXFP4 MoE on one H100 (Marlin FP4 fallback); default utilization assumed (command not in the excerpt). No KV cache: the engine fails."),
 dict(id="vllm27508-gpt-oss-120b-h100-095", source=issue("vllm-project/vllm", 27508),
      engine="vllm", engine_version="0.11.0", model="gpt-oss-120b", gpu="h100-sxm", gpu_total_gib=H100_TOTAL, tp=1,
      gpu_memory_utilization=0.95, max_model_len=131072, max_num_batched_tokens=1024,
      log="""(EngineCore_DP0 pid=6880) INFO 10-31 15:07:49 [gpu_worker.py:298] Available KV cache memory: 1.71 GiB""",
      notes="vllm serve openai/gpt-oss-120b --gpu-memory-utilization 0.95 --max-num-batched-tokens 1024; too little KV for 131072 tokens."),
 dict(id="vllm33155-gpt-oss-120b-h100-weights", source=issue("vllm-project/vllm", 33155),
      engine="vllm", engine_version="0.14.1", model="gpt-oss-120b", gpu="h100-sxm", gpu_total_gib=H100_TOTAL, tp=1,
      gpu_memory_utilization=None, max_model_len=131072,
      log="""^[[0;36m(EngineCore_DP0 pid=70073)^[[0;0m INFO 01-27 00:31:59 [gpu_model_runner.py:3905] Model loading took 64.38 GiB memory and 14.380607 seconds""",
      notes="Weights only (the KV lines are not in the excerpt)."),
 dict(id="vllm17469-qwen3-30b-a3b-tp4-weights", source=issue("vllm-project/vllm", 17469),
      engine="vllm", engine_version="0.8.5", model="qwen3-30b-a3b", gpu=None, tp=4,
      gpu_memory_utilization=None, max_model_len=40960,
      log="""qwen3-1  | (VllmWorker rank=0 pid=105) INFO 04-29 01:07:41 [gpu_model_runner.py:1347] Model loading took 14.2474 GiB and 558.868858 seconds""",
      notes="Weights only; model inferred from 4 x 14.25 GiB = bf16 Qwen3-30B-A3B."),
 dict(id="vllm18446-qwen3-235b-tp8-weights", source=issue("vllm-project/vllm", 18446),
      engine="vllm-v0", engine_version="0.8.5", model="qwen3-235b-a22b", gpu=None, tp=8,
      gpu_memory_utilization=None, max_model_len=40960,
      log="""INFO 05-21 09:32:42 [model_runner.py:1140] Model loading took 54.9206 GiB and 19.302626 seconds""",
      notes="Weights only, bf16 Qwen3-235B-A22B on 8 GPUs (V0)."),
 dict(id="vllm6746-llama31-405b-fp8-tp8-weights", source=issue("vllm-project/vllm", 6746),
      engine="vllm-v0", engine_version="0.5.3", model="llama-3.1-405b", gpu="h100-sxm", tp=8,
      gpu_memory_utilization=None, max_model_len=131072, weight_dtype="fp8",
      log="""INFO 07-24 14:07:31 model_runner.py:692] Loading model weights took 57.7520 GB""",
      notes="Meta-Llama-3.1-405B-Instruct-FP8: Meta's FP8 release quantizes only the MLP weights (attention, first and last layers stay bf16), so 'every linear layer in fp8' under-counts."),
 dict(id="vllm15676-gemma3-27b-tp4-weights", source=issue("vllm-project/vllm", 15676),
      engine="vllm", engine_version="0.8.2", model="gemma-3-27b", gpu=None, tp=4,
      gpu_memory_utilization=None, max_model_len=131072,
      log="""(VllmWorker rank=0 pid=7482) INFO 03-28 12:57:37 [gpu_model_runner.py:1186] Model loading took 13.1665 GB and 5.346817 seconds""",
      notes="Weights only; the vision tower is replicated on every rank and not in the catalog's text parameter count."),
 dict(id="vllm24577-qwen3-0.6b-a100", source=issue("vllm-project/vllm", 24577, "pull"),
      engine="vllm", engine_version="0.10.2", model="configs/qwen3-0.6b.json", gpu="a100-80gb-sxm", tp=1,
      gpu_memory_utilization=None, max_model_len=4096,
      log="""(EngineCore_DP0 pid=643458) INFO 09-10 13:29:14 [gpu_model_runner.py:2235] Model loading took 1.1201 GiB and 0.596228 seconds
(EngineCore_DP0 pid=643458) INFO 09-10 13:29:24 [gpu_worker.py:276] Available KV cache memory: 69.66 GiB
(EngineCore_DP0 pid=643458) INFO 09-10 13:29:25 [kv_cache_utils.py:864] GPU KV cache size: 652,144 tokens
(EngineCore_DP0 pid=643458) INFO 09-10 13:29:25 [kv_cache_utils.py:868] Maximum concurrency for 4,096 tokens per request: 159.21x""",
      notes="Maintainer run (lm_eval, FlashInfer backend, bf16 KV) on an A100 (80 GB assumed from the 69.66 GiB of KV), defaults otherwise; vLLM 0.10.2 dev assumed from the date and log line numbers. V1 profiles 256 dummy sequences on an A100 (EngineArgs.get_batch_defaults excludes A100s from the 1024-sequence default) and 8192 tokens (LLM class, assumed). The log excerpt does not show which top-k/top-p path ran; with FlashInfer installed 0.10 would use its sampler (14 B per logit, 0.52 GiB) rather than the native sort (38 B, 1.39 GiB) the 5.6 GiB constant reflects."),
 dict(id="vllm15871-deepseek-v2-lite-mla", source=issue("vllm-project/vllm", 15871),
      engine="vllm", engine_version="0.8.3", model="configs/deepseek-v2-lite-chat.json", gpu=None, tp=1,
      gpu_memory_utilization=None, max_model_len=32768,
      log="""ERROR 04-02 12:33:23 [core.py:380] ValueError: To serve at least one request with the models's max seq len (32768), (0.95 GiB KV cache is needed, which is larger than the available KV cache memory (0.93 GiB). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.""",
      notes="MLA: one request of 32768 tokens needs 27 layers x (512 + 64) x 2 bytes per token, the same on every rank; CPU offload in use, so only the per-token size is compared."),
 dict(id="vllm25350-qwen3-30b-a3b-fp8-kv", source=issue("vllm-project/vllm", 25350),
      engine="vllm", engine_version="0.10.2", model="qwen3-30b-a3b", gpu=None, tp=1,
      gpu_memory_utilization=None, max_model_len=100000, weight_dtype="fp8", kv_cache_dtype="fp8",
      log="""Available KV cache memory: 10.55 GiB
GPU KV cache size: 230,528 tokens
[kv_cache_utils.py:868] Maximum concurrency for 100,000 tokens per request: 2.31x""",
      notes="--kv-cache-dtype fp8. The issue does not name the model or GPU: 29.09 GiB of weights and 10.55 GiB / 230,528 = 48 KiB per token match Qwen3-30B-A3B-FP8 (48 layers x 4 KV heads x 128 x 2 x 1 byte), assumed; only the per-token size is compared."),
]
out = {"about": "Calibration cases from public vLLM/SGLang startup logs. Each case: where the log is published (source), "
       "the setup as stated there (or as assumed, see notes), and the log lines verbatim. Reported values are parsed "
       "from 'log' by planner.calibrate.parse_log; nothing is typed twice.", "cases": cases}

(Path(__file__).parent / "cases.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
print(len(cases))
