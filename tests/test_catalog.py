"""The catalog data files and loader (planner.catalog).

Expected values are the reference's sourced figures (/work/shared/reference/facts.md and facts_catalog.json):
section 3 (GPUs, driver-reported memory), section 4 (model configs), section 1-2 (provider limits and prices).
The config files in tests/data/configs are Hugging Face config.json files written from those sourced values.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import FrozenInstanceError, fields
from pathlib import Path

import pytest

from planner import catalog
from planner.errors import ArgumentError, UnknownNameError
from planner.specs import (
    FULL_ATTENTION,
    LIMIT_MULTIPLIERS,
    LIMIT_SCOPES,
    SLIDING_ATTENTION,
    GpuSpec,
    ModelSpec,
    ProviderLimits,
)

CONFIGS = Path(__file__).parent / "data" / "configs"
DATA = Path(catalog.__file__).parent / "data"


def _raw(filename: str) -> dict:
    return json.loads((DATA / filename).read_text(encoding="utf-8"))


# --------------------------------------------------------------------------------------------- every entry sourced


@pytest.mark.parametrize(
    ("filename", "section"), [("gpus.json", "gpus"), ("models.json", "models"), ("providers.json", "limits")]
)
def test_every_entry_has_source_and_as_of(filename, section):
    entries = _raw(filename)[section]
    assert len(entries) >= 15
    for entry in entries:
        assert isinstance(entry.get("source"), str) and entry["source"].strip(), entry
        assert isinstance(entry.get("as_of"), str) and entry["as_of"].strip(), entry


def test_gpu_prices_carry_their_own_source():
    for entry in _raw("gpus.json")["gpus"]:
        if entry["usd_per_gpu_hour"] is not None:
            assert entry["price_source"] and entry["price_as_of"], entry["id"]
        for offer in entry.get("prices", []):
            assert offer["source"] and offer["as_of"], (entry["id"], offer)


def test_provider_level_rules_are_sourced():
    for provider, info in _raw("providers.json")["providers"].items():
        for group in ("rules", "tiers", "prompt_caching"):
            for item in info.get(group, []):
                assert item.get("source") and item.get("as_of"), (provider, group, item)


def test_uncertain_marks_are_kept():
    # facts.md 4.1 marks these UNCERTAIN (no official config.json confirmed).
    models = {m["id"]: m for m in _raw("models.json")["models"]}
    assert models["llama-3.3-70b"]["uncertain"] and models["qwen2.5-72b-instruct"]["uncertain"]
    assert "uncertain" not in models["llama-3.1-70b"]
    gpus = {g["id"]: g for g in _raw("gpus.json")["gpus"]}
    assert gpus["b300-hgx"]["uncertain"] and gpus["mi325x"]["uncertain"]


# --------------------------------------------------------------------------------------------- required coverage


def test_required_gpus_and_models_are_present():
    for name in ("A100 40GB", "A100 80GB", "H100 SXM", "H200", "B200", "L40S", "L4", "MI300X", "MI325X", "RTX 3090"):
        assert isinstance(catalog.get_gpu(name), GpuSpec)
    for name in (
        "llama-3.1-8b",
        "llama-3.1-70b",
        "llama-3.1-405b",
        "qwen2.5-32b",
        "qwen3-32b",
        "qwen3-30b-a3b",
        "qwen3-235b-a22b",
        "mixtral-8x7b",
        "deepseek-v3",
        "gpt-oss-120b",
        "gpt-oss-20b",
        "gemma-2-9b",
        "gemma-3-27b",
    ):
        assert isinstance(catalog.get_model(name), ModelSpec)
    assert len(catalog.models()) == 29
    assert len(catalog.gpus()) == 20


# --------------------------------------------------------------------------------------------- reference values


def test_llama_70b_reference_dims():
    m = catalog.get_model("llama-3.1-70b")
    assert (m.num_hidden_layers, m.num_key_value_heads, m.head_dim, m.hidden_size) == (80, 8, 128, 8192)
    assert m.attention == "gqa" and m.layer_types == () and m.sliding_window is None
    # facts.md 4.1: KV bytes/token (BF16) = 2 * layers * kv_heads * head_dim * 2 = 327,680.
    assert 2 * m.num_hidden_layers * m.num_key_value_heads * m.head_dim * 2 == 327_680


def test_deepseek_v3_mla_dims():
    m = catalog.get_model("DeepSeek-V3")
    assert m.attention == "mla" and m.architecture == "moe"
    assert (m.kv_lora_rank, m.qk_rope_head_dim, m.num_hidden_layers) == (512, 64, 61)
    assert (m.head_dim, m.v_head_dim) == (192, 128)
    assert (m.num_experts, m.num_experts_per_tok) == (256, 8)
    assert m.params_total == 671e9 and m.params_active == 37e9
    assert m.num_hidden_layers * (m.kv_lora_rank + m.qk_rope_head_dim) * 2 == 70_272  # facts.md 4.2


def test_kv_bytes_per_token_check_values_match_dims():
    """The reference's derived KV bytes/token (BF16) agree with the dims the catalog holds."""
    checked = 0
    for spec in catalog.models():
        entry = catalog.model_entry(spec.name)
        if spec.attention == "mla":
            per_token = spec.num_hidden_layers * (spec.kv_lora_rank + spec.qk_rope_head_dim) * 2
        else:
            per_token = 2 * spec.num_hidden_layers * spec.num_key_value_heads * spec.head_dim * 2
        if "kv_bytes_per_token_bf16" in entry:
            assert per_token == entry["kv_bytes_per_token_bf16"], spec.name
            checked += 1
        if "kv_bytes_per_token_bf16_full_layers" in entry:
            full = 2 * spec.full_attention_layers * spec.num_key_value_heads * spec.head_dim * 2
            assert full == entry["kv_bytes_per_token_bf16_full_layers"], spec.name
            checked += 1
    assert checked >= 24


def test_hybrid_layer_types():
    oss = catalog.get_model("gpt-oss-120b")
    assert oss.sliding_window == 128 and len(oss.layer_types) == 36
    assert (oss.sliding_window_layers, oss.full_attention_layers) == (18, 18)
    assert oss.layer_types[:2] == (SLIDING_ATTENTION, FULL_ATTENTION)
    assert oss.weight_dtype == "mxfp4"
    g2 = catalog.get_model("gemma-2-27b")
    assert (g2.sliding_window, g2.sliding_window_layers, g2.full_attention_layers) == (4096, 23, 23)
    g3 = catalog.get_model("gemma-3-27b")
    assert g3.sliding_window == 1024 and len(g3.layer_types) == 62
    assert [i for i, t in enumerate(g3.layer_types) if t == FULL_ATTENTION] == list(range(5, 62, 6))
    mistral = catalog.get_model("mistral-7b-v0.1")
    assert (mistral.sliding_window, mistral.sliding_window_layers) == (4096, 32)
    # Qwen2.5 has sliding_window set but use_sliding_window false; Phi-3.5's window exceeds its context.
    assert catalog.get_model("qwen2.5-32b").sliding_window is None
    assert catalog.get_model("phi-3.5-mini").sliding_window_layers == 0


def test_gpu_reference_values():
    h100 = catalog.get_gpu("H100 SXM")
    assert h100.hbm_bytes == 81_559 * 2**20
    assert h100.hbm_bytes_basis.startswith("driver-reported")
    assert round(h100.hbm_gib, 2) == 79.65
    assert h100.mem_bw_bytes_per_s == 3.35e12
    assert h100.bf16_flops_per_s == 989e12 and h100.fp8_flops_per_s == 1979e12  # dense, not the 2:4 figures
    assert catalog.get_gpu("h200").hbm_bytes == 143_771 * 2**20
    assert catalog.get_gpu("b200").hbm_bytes == 183_359 * 2**20
    assert catalog.get_gpu("a100-80gb").hbm_bytes == 80 * 2**30
    assert catalog.get_gpu("L4").hbm_bytes == 23_034 * 2**20
    mi300x = catalog.get_gpu("MI300X")
    assert mi300x.vendor == "AMD" and mi300x.hbm_bytes == 192 * 2**30  # datasheet 192 GB read as GiB
    assert mi300x.usd_per_gpu_hour is None  # facts.md 3.3: no price source identified
    assert catalog.get_gpu("a100-40gb").fp8_flops_per_s is None


def test_gpu_memory_basis_is_stated_when_not_driver_reported():
    for gpu in catalog.gpus():
        if gpu.hbm_bytes_basis.startswith("vendor binary"):  # GDDR cards: 24 GB = 24 x 2^30 B
            assert gpu.hbm_bytes % 2**30 == 0
        elif not gpu.hbm_bytes_basis.startswith("driver-reported"):
            assert "vendor decimal" in gpu.hbm_bytes_basis
            assert gpu.hbm_bytes % 10**9 == 0


def test_torch_visible_totals_are_sourced_and_below_the_driver_total():
    """Engines budget from torch's total (CUDA runtime), which sits below nvidia-smi's by the driver reservation."""
    for entry in _raw("gpus.json")["gpus"]:
        if entry.get("torch_total_bytes") is None:
            continue
        assert entry["torch_total_basis"] and entry["torch_total_as_of"], entry["id"]
        assert 0.95 * entry["hbm_bytes"] < entry["torch_total_bytes"] < entry["hbm_bytes"], entry["id"]
    h100 = catalog.get_gpu("h100-sxm")
    assert h100.torch_total_bytes == 85_017_624_576  # facts.md 3.2: 79.18 GiB
    assert round(h100.engine_total_bytes / 2**30, 2) == 79.18
    mi300x = catalog.get_gpu("mi300x")
    assert round(mi300x.engine_total_bytes / 2**30, 2) == 191.98  # vLLM #53961: 'MI300X (191.98 GiB)'
    assert catalog.get_gpu("mi325x").torch_total_bytes is None  # no public log gives it


def test_session9_totals_match_their_sources():
    """The totals session 9 corrected, against the figures their sources print (not against the engine model)."""
    pcie = catalog.get_gpu("a100-80gb-pcie")
    assert pcie.hbm_bytes == 81920 * 2**20  # nvidia-smi memory.total 81920 MiB
    assert pcie.hbm_bytes_basis.startswith("driver-reported")
    assert pcie.torch_total_bytes == 81049 * 2**20  # ekondis/mixbench #47: 'Total global mem: 81049 MB' (MiB)
    assert catalog.get_gpu("h100-nvl").hbm_bytes == 95830 * 2**20  # NVIDIA/gpu-admin-tools #4: '95830MiB'
    # PyTorch OOM messages print the total to two decimals of a GiB
    assert round(catalog.get_gpu("l40s").engine_total_bytes / 2**30, 2) == 44.42  # Step-Video-T2V #8
    assert round(catalog.get_gpu("rtx-4090").engine_total_bytes / 2**30, 2) == 23.64  # median of 5 OOM messages
    assert sorted([23.68, 23.65, 23.64, 23.61, 23.64])[2] == 23.64


def test_rtx_3090_and_mi300_series_are_in_the_catalog():
    rtx = catalog.get_gpu("RTX 3090")
    assert rtx.name == "rtx-3090" and rtx.hbm_bytes == 24 * 2**30 and rtx.fp8_flops_per_s is None
    assert rtx.mem_bw_bytes_per_s == 936e9 and rtx.bf16_flops_per_s == 71e12  # GA102 whitepaper
    assert round(rtx.engine_total_bytes / 2**30, 2) == 23.58  # vLLM #10517 log
    for name, gib in (("mi300x", 192.0), ("mi325x", 238.4)):
        gpu = catalog.get_gpu(name)
        assert gpu.vendor == "AMD" and round(gpu.hbm_gib, 1) == gib


def test_int8_peaks_are_datasheet_figures_with_their_source():
    """Dense INT8 tensor-core peaks (ops/s): every one filled carries its source and date; the figures are the
    datasheets' dense ones (A100: 624 TOPS, 1,248 with 2:4 sparsity; A10: 250 TOPS; H100/H200 SXM 3,958 and H100 PCIe
    3,026 TOPS with sparsity, halved; NVIDIA's aiconfigurator specs: B200 4,500, GB200 5,000, B300 307 sparse halved,
    GB300 165, L40S 733, L4 242), not 2:4-sparse ones."""
    filled = {}
    for entry in _raw("gpus.json")["gpus"]:
        assert "int8_ops_per_s" in entry, entry["id"]  # null where no datasheet figure was read: said, not omitted
        if entry["int8_ops_per_s"] is None:
            assert "int8_source" not in entry, entry["id"]
            continue
        assert entry["int8_source"] and entry["int8_as_of"], entry["id"]
        filled[entry["id"]] = entry["int8_ops_per_s"]
    assert filled == {"a100-40gb-sxm": 624e12, "a100-80gb-sxm": 624e12, "a100-80gb-pcie": 624e12, "a10": 250e12,
                      "h100-sxm": 3958e12 / 2, "h100-pcie": 3026e12 / 2, "h200-sxm": 3958e12 / 2,
                      "b200-hgx": 4500e12, "gb200": 5000e12, "b300-hgx": 307e12 / 2, "gb300": 165e12,
                      "l40s": 733e12, "l4": 242e12}  # L4: aiconfigurator's 242 for NVIDIA's 485 sparse, as its FP8
    assert catalog.get_gpu("a100-80gb").int8_ops_per_s == 624e12
    assert catalog.get_gpu("rtx-3090").int8_ops_per_s is None  # no datasheet figure read (GA102 whitepaper)


def test_gpu_default_price_is_a_listed_offer():
    for entry in _raw("gpus.json")["gpus"]:
        if entry["usd_per_gpu_hour"] is None:
            continue
        offers = [o["usd_per_gpu_hour"] for o in entry["prices"]]
        assert entry["usd_per_gpu_hour"] in offers
    assert catalog.get_gpu("h100").usd_per_gpu_hour == 3.2  # Hyperstack, facts.md 3.3


# --------------------------------------------------------------------------------------------- parameter estimate


def test_estimate_matches_published_counts():
    """The config-based estimate is within 3% of every count the reference publishes (total and active)."""
    compared = 0
    for spec in catalog.models():
        entry = catalog.model_entry(spec.name)
        if entry.get("params_total") is None:
            continue
        total, active = catalog.estimate_params(entry["config"])
        assert abs(total / entry["params_total"] - 1) < 0.03, (spec.name, total)
        published_active = entry["params_active"]
        if spec.family == "gpt-oss":
            # The model card's "active" leaves out the input embedding (vocab x hidden).
            active -= entry["config"]["vocab_size"] * entry["config"]["hidden_size"]
        assert abs(active / published_active - 1) < 0.03, (spec.name, active)
        compared += 1
    assert compared >= 24


def test_estimate_mla_and_moe_structure():
    cfg = catalog.model_entry("deepseek-v3")["config"]
    total, active = catalog.estimate_params(cfg)
    no_shared = dict(cfg, n_shared_experts=0)
    total2, active2 = catalog.estimate_params(no_shared)
    shared = 58 * 3 * 7168 * 2048  # one shared expert on each of the 58 MoE layers
    assert total - total2 == shared and active - active2 == shared
    all_moe = dict(cfg, first_k_dense_replace=0)
    assert catalog.estimate_params(all_moe)[0] > total
    tied = dict(catalog.model_entry("llama-3.1-8b")["config"], tie_word_embeddings=True)
    assert catalog.estimate_params(tied)[0] == pytest.approx(8.03e9 - 128256 * 4096, rel=1e-3)


# --------------------------------------------------------------------------------------------- lookups


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("LLAMA-3.1-70B", "llama-3.1-70b"),
        ("meta-llama/Meta-Llama-3.1-70B", "llama-3.1-70b"),
        ("Meta-Llama/Llama-3.1-70B-Instruct", "llama-3.1-70b"),
        ("  qwen3-30b-a3b  ", "qwen3-30b-a3b"),
        ("Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b"),
        ("openai/GPT-OSS-120B", "gpt-oss-120b"),
        ("google/gemma-3-27b-it", "gemma-3-27b"),
        ("Mixtral-8x7B-Instruct", "mixtral-8x7b"),
    ],
)
def test_model_lookup_is_case_insensitive(given, expected):
    assert catalog.get_model(given).name == expected


@pytest.mark.parametrize(
    ("given", "expected"),
    [("H100", "h100-sxm"), ("h100_sxm", "h100-sxm"), ("NVIDIA H100 SXM 80GB", "h100-sxm"), ("b200", "b200-hgx")],
)
def test_gpu_lookup_is_case_insensitive(given, expected):
    assert catalog.get_gpu(given).name == expected


def test_lookups_are_cached_objects():
    assert catalog.get_model("llama-3.1-8b") is catalog.get_model("LLAMA-3.1-8B")
    assert catalog.get_gpu("l40s") is catalog.get_gpu("L40S")
    spec = catalog.get_model("llama-3.1-8b")
    assert catalog.get_model(spec) is spec


def test_no_name_is_used_twice():
    seen: dict[str, str] = {}
    for spec in catalog.models():
        for key in {catalog.normalize_name(k) for k in (spec.name, spec.hf_id, *spec.aliases) if k}:
            assert key not in seen, (key, seen.get(key), spec.name)
            seen[key] = spec.name


def test_unknown_names_give_one_line_errors():
    with pytest.raises(UnknownNameError) as err:
        catalog.get_model("llama-9")
    message = str(err.value)
    assert "\n" not in message and message.startswith("model: got 'llama-9', expected one of ")
    assert "deepseek-r1" in message and "more)" in message
    assert "llama-3.1-70b" in err.value.known
    with pytest.raises(UnknownNameError, match=r"^gpu: got 'H900', expected one of a10, a100-40gb-sxm"):
        catalog.get_gpu("H900")
    with pytest.raises(UnknownNameError, match=r"^model: got 'Qwen/Qwen9-1B', expected one of deepseek-r1"):
        catalog.get_model("Qwen/Qwen9-1B")  # an unknown Hugging Face id is a name, not a path
    with pytest.raises(ArgumentError, match=r"^model: got '/nonexistent/config.json', expected a catalog model"):
        catalog.get_model("/nonexistent/config.json")
    with pytest.raises(ArgumentError, match=r"^gpu: got 3, expected a catalog GPU name"):
        catalog.get_gpu(3)


# --------------------------------------------------------------------------------------------- config.json files

MATCH_FIELDS = (
    "architecture",
    "attention",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "v_head_dim",
    "hidden_size",
    "vocab_size",
    "max_position_embeddings",
    "kv_lora_rank",
    "qk_rope_head_dim",
    "sliding_window",
    "layer_types",
    "num_experts",
    "num_experts_per_tok",
)


@pytest.mark.parametrize(
    ("filename", "catalog_name"),
    [
        ("llama-3.1-8b.json", "llama-3.1-8b"),
        ("qwen3-30b-a3b.json", "qwen3-30b-a3b"),
        ("deepseek-v3.json", "deepseek-v3"),
        ("gemma-3-27b-it.json", "gemma-3-27b"),
        ("gpt-oss-20b.json", "gpt-oss-20b"),
        ("gemma-2-9b.json", "gemma-2-9b"),
        ("mixtral-8x7b.json", "mixtral-8x7b"),
    ],
)
def test_config_files_match_catalog(filename, catalog_name):
    from_file = catalog.get_model(str(CONFIGS / filename))
    entry = catalog.get_model(catalog_name)
    for name in MATCH_FIELDS:
        assert getattr(from_file, name) == getattr(entry, name), name
    assert abs(from_file.params_total / entry.params_total - 1) < 0.03
    assert from_file.params_basis.startswith("estimated")
    assert from_file.source == f"config.json at {CONFIGS / filename}"
    assert from_file.name == Path(filename).stem


def test_config_weight_dtype_from_quantization_config():
    assert catalog.get_model(str(CONFIGS / "deepseek-v3.json")).weight_dtype == "fp8"
    assert catalog.get_model(str(CONFIGS / "gpt-oss-20b.json")).weight_dtype == "mxfp4"
    assert catalog.get_model(str(CONFIGS / "llama-3.1-8b.json")).weight_dtype == "bf16"


def test_config_directory_and_pure_parser(tmp_path):
    folder = tmp_path / "Llama-3.1-8B"
    folder.mkdir()
    shutil.copy(CONFIGS / "llama-3.1-8b.json", folder / "config.json")
    spec = catalog.get_model(str(folder))
    assert spec.name == "Llama-3.1-8B" and spec.hf_id == "meta-llama/Meta-Llama-3.1-8B"
    config = json.loads((CONFIGS / "llama-3.1-8b.json").read_text())
    pure = catalog.model_from_config(config, name="x", source="unit test")
    assert pure.source == "unit test" and pure.num_key_value_heads == 8 and pure.head_dim == 128
    # head_dim absent -> hidden / heads; num_key_value_heads absent -> MHA.
    mha = catalog.model_from_config(
        {"num_hidden_layers": 2, "num_attention_heads": 8, "hidden_size": 512, "vocab_size": 1000},
        name="tiny",
        source="unit test",
    )
    assert (mha.head_dim, mha.num_key_value_heads) == (64, 8)


def test_bad_config_files(tmp_path):
    bad_json = tmp_path / "config.json"
    bad_json.write_text("{not json")
    with pytest.raises(ArgumentError, match="expected a readable JSON config.json"):
        catalog.get_model(str(bad_json))
    missing = tmp_path / "missing.json"
    missing.write_text(json.dumps({"num_attention_heads": 8, "hidden_size": 512}))
    with pytest.raises(ArgumentError, match=r"^config.num_hidden_layers: got None, expected a whole number >= 1$"):
        catalog.get_model(str(missing))
    wrong_layers = {
        "num_hidden_layers": 4,
        "num_attention_heads": 8,
        "hidden_size": 512,
        "vocab_size": 10,
        "sliding_window": 64,
        "layer_types": ["full_attention"] * 3,
    }
    with pytest.raises(ArgumentError, match="a list of 4 layer types"):
        catalog.model_from_config(wrong_layers, name="x", source="t")
    with pytest.raises(ArgumentError, match="full_attention or sliding_attention"):
        catalog.model_from_config(dict(wrong_layers, layer_types=["linear_attention"] * 4), name="x", source="t")


# --------------------------------------------------------------------------------------------- providers


def test_provider_limits_reference_values():
    sonnet = catalog.get_provider_limits("Anthropic", "Tier 1", "claude-sonnet-4.5")
    assert (sonnet.rpm, sonnet.itpm, sonnet.otpm) == (50, 30_000, 8_000)
    assert sonnet.cached_reads_count_itpm is False and sonnet.reserves_max_tokens is False
    assert (sonnet.usd_per_mtok_input, sonnet.usd_per_mtok_cached_input) == (3, 0.3)
    assert (sonnet.usd_per_mtok_cache_write, sonnet.usd_per_mtok_output) == (3.75, 15)
    haiku3 = catalog.get_provider_limits("anthropic", 1, "claude-haiku-3")
    assert haiku3.cached_reads_count_itpm is True  # Haiku 3/3.5 count cache reads (dagger in the docs)
    gpt = catalog.get_provider_limits("OpenAI", "tier-5", "gpt-4.1")
    assert (gpt.rpm, gpt.tpm) == (10_000, 30_000_000)
    assert gpt.reserves_max_tokens and gpt.cached_reads_count_itpm and gpt.window_s == 1
    assert (gpt.usd_per_mtok_input, gpt.usd_per_mtok_cached_input, gpt.usd_per_mtok_output) == (2.0, 0.5, 8.0)
    assert catalog.get_provider_limits("openai", "1", "gpt-4o-mini").rpd == 10_000
    flash = catalog.get_provider_limits("Gemini", "Tier 1", "gemini-2.5-flash")
    assert catalog.get_provider_limits("google", 1.0, "GEMINI-2.5-FLASH") is flash  # Excel hands tiers as floats
    assert (flash.rpm, flash.itpm, flash.tpm, flash.rpd) == (1000, 1_000_000, None, 10_000)
    bedrock = catalog.get_provider_limits("bedrock", "default-cross-region", "claude-sonnet-4.6")
    assert bedrock.output_token_weight == 5 and bedrock.reserves_max_tokens and bedrock.tpm == 6_000_000


def test_provider_entries_are_complete():
    assert {p.provider for p in catalog.provider_limits()} >= {"openai", "anthropic", "gemini"}
    for lim in catalog.provider_limits():
        assert isinstance(lim, ProviderLimits)
        assert lim.rpm is not None and (lim.tpm or lim.itpm), lim.key
        assert lim.usd_per_mtok_input is not None and lim.usd_per_mtok_output is not None, lim.key
        assert lim.usd_per_mtok_cached_input is not None and lim.usd_per_mtok_cached_input <= lim.usd_per_mtok_input
        assert lim.window_s in (1.0, 10.0, 60.0)
    assert catalog.provider_rules("azure")["rpm_per_1000_tpm"] == 6


def test_provider_errors():
    with pytest.raises(UnknownNameError, match=r"^provider: got 'acme', expected one of anthropic, bedrock"):
        catalog.get_provider_limits("acme", 1, "x")
    with pytest.raises(UnknownNameError, match=r"^tier: got 'tier 9', expected one of tier-1, tier-2"):
        catalog.get_provider_limits("openai", "tier 9", "gpt-4o")
    with pytest.raises(UnknownNameError, match=r"^model: got 'gpt-9', expected one of gpt-4.1"):
        catalog.get_provider_limits("openai", "tier-1", "gpt-9")
    with pytest.raises(ArgumentError, match="a provider with tier limits in the catalog"):
        catalog.get_provider_limits("Azure", 1, "gpt-4o")


def test_spec_fields_are_filled_from_data():
    """Every ModelSpec field the data file can give is given (no silent defaults for the core dims)."""
    names = {f.name for f in fields(ModelSpec)}
    assert {"kv_lora_rank", "qk_rope_head_dim", "layer_types", "checkpoint_bytes"} <= names
    for spec in catalog.models():
        assert spec.source and spec.as_of and spec.params_total >= spec.params_active > 0
        assert spec.num_attention_heads % spec.num_key_value_heads == 0, spec.name


@pytest.mark.parametrize("name", ["gpt-oss-120b", "gpt-oss-20b"])
def test_gpt_oss_checkpoint_bytes_agree_with_mxfp4_estimate(name):
    """checkpoint_bytes (model card) ~ experts x 4.25 bits (MXFP4, docs/method.md M1) + the rest in BF16."""
    spec = catalog.get_model(name)
    cfg = catalog.model_entry(name)["config"]
    d, f = cfg["hidden_size"], cfg["intermediate_size"]
    expert_params = cfg["num_hidden_layers"] * cfg["num_local_experts"] * (3 * d * f + 2 * f + d)
    total, _ = catalog.estimate_params(cfg)
    estimate_bytes = expert_params * 4.25 / 8 + (total - expert_params) * 2
    assert spec.checkpoint_bytes is not None
    assert abs(spec.checkpoint_bytes / estimate_bytes - 1) < 0.03
    assert catalog.get_model("llama-3.1-8b").checkpoint_bytes is None


def test_docstring_examples_hold():
    import doctest

    result = doctest.testmod(catalog)
    assert result.failed == 0 and result.attempted >= 10


# --------------------------------------------------------------------------------------------- limit scope (issue 10)

SCOPES_STATED = {
    # provider: (scope, multiplied_by) as the provider's own pages state it (docs/catalog.md "Limit scope")
    "openai": ("organization", None),  # rate-limits guide: organization and project level, not user level
    "anthropic": ("organization", None),  # support article 8243635: "set at the organization level"
    "gemini": ("project", None),  # rate-limits page: "applied per project, not per API key"
    "bedrock": ("account-region", "region"),  # quotas page: per account, per model and Region
}


def test_every_limit_entry_carries_its_scope():
    for entry in _raw("providers.json")["limits"]:
        assert entry["scope"] in LIMIT_SCOPES, entry["model"]
        assert entry["multiplied_by"] is None or entry["multiplied_by"] in LIMIT_MULTIPLIERS
        assert entry["raise_by"] and all(isinstance(r, str) and r for r in entry["raise_by"])
        assert entry["scope_source"].startswith("https://"), entry["model"]


@pytest.mark.parametrize("provider", sorted(SCOPES_STATED))
def test_provider_scopes_match_the_stated_ones(provider):
    scope, multiplied_by = SCOPES_STATED[provider]
    entries = [lim for lim in catalog.provider_limits() if lim.provider == provider]
    assert entries
    for lim in entries:
        assert (lim.scope, lim.multiplied_by) == (scope, multiplied_by), lim.key
        assert lim.raise_by


def test_azure_scope_is_per_deployment_and_multiplied_by_region():
    """Azure has no tier figures, but its scope is stated: TPM per subscription x Region x model, on deployments."""
    block = catalog.provider_rules("azure")["limit_scope"]
    assert (block["scope"], block["multiplied_by"]) == ("deployment", "region")
    assert "provisioned throughput units (PTU)" in block["raise_by"]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("scope", "team", "scope 'team' is not one of organization, project, key, deployment, account-region"),
        ("multiplied_by", "planet", "multiplied_by 'planet' is not null or one of"),
        ("raise_by", [], "raise_by must be a non-empty list of texts"),
        ("scope_source", " ", "scope_source (where the scope is stated) is missing"),
        ("verified", "yes", "verified must be true or false"),
    ],
)
def test_scope_vocabulary_is_closed(field, value, message):
    """A bad scope field is a bug in the data file: the error names the file, the entry and the field."""
    good = {"scope": "organization", "multiplied_by": None, "raise_by": ["a higher tier"], "scope_source": "https://x"}
    with pytest.raises(RuntimeError, match=f"^providers.json openai/tier-1/gpt-4o: {re.escape(message)}"):
        catalog._scope_fields({**good, field: value}, "openai/tier-1/gpt-4o")


def test_provider_limits_is_frozen_and_keyword_only():
    lim = catalog.get_provider_limits("openai", 1, "gpt-4o")
    with pytest.raises(FrozenInstanceError):
        lim.scope = "key"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ProviderLimits("p", "t", "m", source="s", as_of="a")  # type: ignore[misc]
    assert ProviderLimits(provider="p", tier="t", model="m", source="s", as_of="a").scope == "organization"


# ------------------------------------------------------------------------------------------- facts refreshed (issue 10)


def test_bedrock_cached_reads_do_not_count_toward_tpm():
    """AWS: at the end of a request TPM burns InputTokenCount + CacheWriteInputTokens + OutputTokenCount x burndown;
    CacheReadInputTokens is not in the formula (re:Post quota-dashboard article; quotas-token-burndown page)."""
    bedrock = catalog.get_provider_limits("bedrock", "default-cross-region", "claude-sonnet-4.6")
    assert bedrock.cached_reads_count_itpm is False
    assert bedrock.output_token_weight == 5  # "1 output token consumes 5 tokens from your quotas"


def test_gemini_free_tier_cut():
    """Since 2025-12-06 Gemini 2.5 Pro is off the free tier and 2.5 Flash / Flash-Lite allow 20 requests a day."""
    with pytest.raises(UnknownNameError, match="^model: got 'gemini-2.5-pro'"):
        catalog.get_provider_limits("gemini", "free", "gemini-2.5-pro")
    assert catalog.get_provider_limits("gemini", "free", "gemini-2.5-flash").rpd == 20
    assert catalog.get_provider_limits("gemini", "free", "gemini-2.5-flash-lite").rpd == 20
    removed = catalog.provider_rules("gemini")["removed_limits"]
    assert removed[0]["model"] == "gemini-2.5-pro" and removed[0]["source"] and removed[0]["as_of"]
    # Google no longer publishes per-model limits (AI Studio only): none of them is marked verified.
    assert not any(lim.verified for lim in catalog.provider_limits() if lim.provider == "gemini")


def test_anthropic_tier_structure():
    """platform.claude.com rate limits: Start, Build and Scale carry monthly spend caps of $500, $1,000, $200,000;
    Custom has none. Tier 1-4 are kept but marked superseded; no Anthropic figure is marked verified."""
    tiers = {t["tier"]: t for t in catalog.provider_rules("anthropic")["tiers"]}
    caps = [tiers[name]["monthly_spend_cap_usd"] for name in ("Start", "Build", "Scale", "Custom")]
    assert caps == [500, 1000, 200_000, None]
    assert all(tiers[f"Tier {n}"]["superseded"] for n in range(1, 5))
    assert tiers["Tier 4"]["uncertain"]
    assert not any(lim.verified for lim in catalog.provider_limits() if lim.provider == "anthropic")


def test_gpu_prices_follow_the_cheapest_on_demand_rule():
    """Every headline price is the cheapest listed offer that is not a Community listing, a reservation or a
    legacy list price. Hyperstack's rate card (2026-08-26) lists 'NVIDIA A100' 80 GB at 1.35 and 'NVIDIA H100' at
    2.50 on demand, below the offers the catalog used before (3.673, 2.89)."""
    excluded = ("community", "capacity blocks", "legacy")
    for entry in _raw("gpus.json")["gpus"]:
        if entry["usd_per_gpu_hour"] is None:
            continue
        eligible = [o["usd_per_gpu_hour"] for o in entry["prices"]
                    if not any(word in o["provider"].lower() for word in excluded)]
        assert entry["usd_per_gpu_hour"] == min(eligible), entry["id"]
    assert catalog.get_gpu("a100-80gb-pcie").usd_per_gpu_hour == 1.35
    assert catalog.get_gpu("h100-pcie").usd_per_gpu_hour == 2.5


def test_b300_memory_gb_matches_its_bytes():
    """B300: 288 GB (Hyperstack lists vram_gb 288; the driver-reported total is 288.4e9 bytes)."""
    b300 = _raw_gpu("b300-hgx")
    assert b300["memory_gb"] == 288 and round(b300["hbm_bytes"] / 1e9) == 288


def _raw_gpu(gpu_id: str) -> dict:
    return next(g for g in _raw("gpus.json")["gpus"] if g["id"] == gpu_id)


def test_moe_specs_carry_the_expert_size_from_the_config():
    """The MoE fields come from each entry's config.json fields (planner/data/models.json, with its source): the
    routed experts' FFN width, not DeepSeek's dense intermediate_size; the dense-first layers; shared experts."""
    r1 = catalog.get_model("deepseek-r1")
    assert (r1.intermediate_size, r1.moe_intermediate_size, r1.expert_intermediate_size) == (18432, 2048, 2048)
    assert r1.first_k_dense_replace == 3 and r1.moe_layers == tuple(range(3, 61))
    assert (r1.num_shared_experts, r1.shared_expert_intermediate_size, r1.num_experts) == (1, 2048, 256)
    assert not r1.is_moe_layer(2) and r1.is_moe_layer(3)
    qwen = catalog.get_model("qwen3-235b-a22b")
    assert (qwen.intermediate_size, qwen.expert_intermediate_size, qwen.moe_layers) == (None, 1536, ())
    # Mixtral's experts use intermediate_size
    assert catalog.get_model("mixtral-8x7b").expert_intermediate_size == 14336
    maverick = catalog.get_model("llama-4-maverick")  # interleave_moe_layer_step 2: odd layers MoE, dense MLP 16,384
    assert maverick.moe_layers == tuple(range(1, 48, 2)) and maverick.dense_intermediate_size == 16384
    assert catalog.get_model("llama-3.1-8b").expert_intermediate_size is None
    # the per-layer breakdown adds up to the estimate (embedding + head + final norm + layers)
    llama = catalog.get_model("llama-3.1-8b")
    assert len(llama.layer_params) == 32 and llama.embedding_params == 128256 * 4096
    assert sum(llama.layer_params) + 2 * 128256 * 4096 + 4096 == pytest.approx(8.03e9, rel=0.001)
