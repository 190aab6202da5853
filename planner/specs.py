"""Frozen, keyword-only value objects for catalog facts: models, GPUs and provider limits.

The sizing core takes these objects (never names); :mod:`planner.catalog` turns names, Hugging Face ids and
``config.json`` files into them. Every object carries the ``source`` and ``as_of`` of the facts it holds.
Counts are plain counts (``params_total`` is 70.6e9, not 70.6); memory is in bytes; rates carry their unit in the name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

GIB = 1024**3
MIB = 1024**2

# Attention kinds. "gqa" covers MHA (kv_heads == heads) and MQA (kv_heads == 1).
ATTENTION_GQA = "gqa"
ATTENTION_MLA = "mla"

# Per-layer attention types, spelled as Hugging Face ``layer_types`` spells them.
FULL_ATTENTION = "full_attention"
SLIDING_ATTENTION = "sliding_attention"


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """Architecture facts of one model, as its ``config.json`` gives them.

    ``layer_types`` has one entry per layer (``full_attention`` or ``sliding_attention``); empty means every layer
    is full attention. ``checkpoint_bytes`` is the exact size of the released weights where a source gives it (it
    covers mixed-precision checkpoints such as gpt-oss's MXFP4 experts); ``weight_dtype`` is the dtype the released
    checkpoint stores most weights in.
    """

    name: str
    hf_id: str | None = None
    aliases: tuple[str, ...] = ()
    architecture: str = "dense"  # "dense" | "moe"
    attention: str = ATTENTION_GQA  # "gqa" | "mla"
    num_hidden_layers: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    v_head_dim: int | None = None  # None: same as head_dim
    hidden_size: int
    intermediate_size: int | None = None
    vocab_size: int | None = None
    max_position_embeddings: int | None = None
    kv_lora_rank: int | None = None  # MLA
    qk_rope_head_dim: int | None = None  # MLA
    sliding_window: int | None = None
    layer_types: tuple[str, ...] = ()
    num_experts: int | None = None
    num_experts_per_tok: int | None = None
    params_total: float
    params_active: float
    params_basis: str = "config"  # where the parameter counts come from: "model card", "derived from config", ...
    weight_dtype: str = "bf16"
    checkpoint_bytes: int | None = None
    family: str = ""
    source: str
    as_of: str

    @property
    def full_attention_layers(self) -> int:
        """Layers that cache every token."""
        if not self.layer_types:
            return self.num_hidden_layers
        return sum(1 for t in self.layer_types if t != SLIDING_ATTENTION)

    @property
    def sliding_window_layers(self) -> int:
        """Layers whose cache is capped at ``sliding_window`` tokens."""
        if not self.layer_types or not self.sliding_window:
            return 0
        return sum(1 for t in self.layer_types if t == SLIDING_ATTENTION)


@dataclass(frozen=True, kw_only=True)
class GpuSpec:
    """One accelerator. ``hbm_bytes`` is the total the driver reports (nvidia-smi / rocm-smi), not the marketing GB."""

    name: str
    display_name: str
    aliases: tuple[str, ...] = ()
    vendor: str = "NVIDIA"
    hbm_bytes: int
    hbm_bytes_basis: str = "driver-reported"
    mem_bw_bytes_per_s: float
    bf16_flops_per_s: float
    fp8_flops_per_s: float | None = None
    fp4_flops_per_s: float | None = None
    nvlink_bytes_per_s_bidir: float | None = None  # GPU-to-GPU NVLink, both directions
    interconnect: str | None = None  # the link when there is no NVLink: "pcie-gen4-x16", "infinity-fabric", ...
    interconnect_bytes_per_s_bidir: float | None = None
    usd_per_gpu_hour: float | None = None
    price_source: str | None = None
    price_as_of: str | None = None
    source: str
    as_of: str

    @property
    def hbm_gib(self) -> float:
        return self.hbm_bytes / GIB


@dataclass(frozen=True, kw_only=True)
class ProviderLimits:
    """Rate limits, counting rules and prices of one provider tier for one model (class).

    Limits are per minute unless the name says otherwise; ``None`` means the provider sets no such limit.
    Counting rules:
    - ``cached_reads_count_itpm``: cached (prefix-cache read) input tokens count toward ITPM/TPM;
    - ``reserves_max_tokens``: admission counts input + ``max_tokens`` rather than actual output;
    - ``window_s``: the enforcement window behind a per-minute limit (60, 10 or 1 second);
    - ``output_token_weight``: quota tokens one output token consumes toward TPM (AWS Bedrock, Claude 3.7+: 5).
    Prices are USD per million tokens.
    """

    provider: str
    tier: str
    model: str
    rpm: float | None = None
    tpm: float | None = None
    itpm: float | None = None
    otpm: float | None = None
    rpd: float | None = None
    tpd: float | None = None
    cached_reads_count_itpm: bool = True
    reserves_max_tokens: bool = False
    window_s: float = 60.0
    output_token_weight: float = 1.0
    usd_per_mtok_input: float | None = None
    usd_per_mtok_cached_input: float | None = None
    usd_per_mtok_cache_write: float | None = None
    usd_per_mtok_output: float | None = None
    notes: tuple[str, ...] = field(default=())
    source: str
    as_of: str

    @property
    def key(self) -> str:
        return f"{self.provider}/{self.tier}/{self.model}"
