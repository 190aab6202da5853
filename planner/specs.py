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

# What a provider limit is metered per (the closed vocabulary of ``ProviderLimits.scope``; docs/catalog.md).
LIMIT_SCOPES = ("organization", "project", "key", "deployment", "account-region")
"""- ``organization``: one pool for the whole organization (Anthropic; OpenAI, whose project limits are caps inside
  the organization's); more API keys or projects add nothing;
- ``project``: one pool per project (Gemini: "applied per project, not per API key");
- ``key``: one pool per API key;
- ``deployment``: one pool per deployment (Azure OpenAI: the TPM quota of a subscription, region and model is split
  among its deployments, so only deployments that draw on different quota pools add capacity);
- ``account-region``: one pool per AWS account and Region (Amazon Bedrock service quotas)."""

LIMIT_MULTIPLIERS = ("project", "key", "deployment", "region", "account")
"""What a planner can add to get another full copy of a limit (``ProviderLimits.multiplied_by``), or ``None``."""

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

    MoE shapes (all ``None``/empty for dense models and for specs built without them, which keep the older
    approximations): ``moe_intermediate_size`` is one routed expert's FFN width (Hugging Face
    ``moe_intermediate_size``; Mixtral, gpt-oss and Llama-4 experts use ``intermediate_size``, which is then copied
    here), while ``intermediate_size`` stays the config's own field (DeepSeek: the dense MLP's 18,432, not the
    experts' 2,048). ``moe_layers`` lists the decoder layers whose MLP is MoE (DeepSeek's ``first_k_dense_replace``
    dense layers, Llama-4's ``interleave_moe_layer_step``); ``dense_intermediate_size`` is the MLP width of the other
    layers. ``layer_params`` (one estimate per decoder layer, :func:`planner.catalog.estimate_params`'s breakdown),
    ``embedding_params`` and ``tie_word_embeddings`` let the memory model give each pipeline stage its own weights
    (:func:`planner.memory.stage_weight_bytes`).
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
    moe_intermediate_size: int | None = None  # one routed expert's FFN width (MoE)
    num_shared_experts: int | None = None  # always-on experts beside the routed ones (DeepSeek, Llama-4)
    shared_expert_intermediate_size: int | None = None  # the shared experts' FFN width in all
    first_k_dense_replace: int | None = None  # DeepSeek: the first k layers keep a dense MLP
    moe_layers: tuple[int, ...] = ()  # indices of the MoE decoder layers (empty: every layer of an MoE model)
    dense_intermediate_size: int | None = None  # the dense layers' MLP width in an MoE model
    layer_params: tuple[float, ...] = ()  # estimated parameters of each decoder layer, from the config
    embedding_params: float | None = None  # the input embedding, vocab x hidden
    tie_word_embeddings: bool = False
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

    @property
    def expert_intermediate_size(self) -> int | None:
        """One routed expert's FFN width: ``moe_intermediate_size``, else ``intermediate_size`` for an MoE model
        (specs built without the field, where the experts use it); ``None`` for dense models."""
        if self.architecture != "moe":
            return None
        return self.moe_intermediate_size or self.intermediate_size

    def is_moe_layer(self, index: int) -> bool:
        """Whether decoder layer ``index`` has an MoE MLP (every layer of an MoE model without ``moe_layers``)."""
        if self.architecture != "moe":
            return False
        return not self.moe_layers or index in self.moe_layers


@dataclass(frozen=True, kw_only=True)
class GpuSpec:
    """One accelerator. ``hbm_bytes`` is the total the driver reports (nvidia-smi / rocm-smi), not the marketing GB.

    ``torch_total_bytes`` is the total the CUDA runtime reports to PyTorch (``torch.cuda.mem_get_info()[1]``), which
    vLLM, SGLang and TensorRT-LLM budget from; it is below ``hbm_bytes`` by what the driver reserves (an H100 80GB:
    79.18 GiB against nvidia-smi's 79.65). ``None`` where no source gives it (engines then use ``hbm_bytes``).
    """

    name: str
    display_name: str
    aliases: tuple[str, ...] = ()
    vendor: str = "NVIDIA"
    compute_capability: float | None = None  # NVIDIA's CUDA compute capability (8.0 A100, 9.0 H100); None: not NVIDIA
    hbm_bytes: int
    hbm_bytes_basis: str = "driver-reported"
    torch_total_bytes: int | None = None
    torch_total_basis: str | None = None
    mem_bw_bytes_per_s: float
    bf16_flops_per_s: float
    fp8_flops_per_s: float | None = None
    fp4_flops_per_s: float | None = None
    int8_ops_per_s: float | None = None  # dense INT8 tensor-core ops/s (the datasheet's, not 2:4 sparse)
    l2_cache_bytes: int | None = None  # the L2 cache (None: not sourced; planner/data/gpus.json l2_source)
    infinity_cache_bytes: int | None = None  # AMD's memory-side Infinity Cache shared by all XCDs (AMD only)
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

    @property
    def engine_total_bytes(self) -> int:
        """The total a serving engine budgets from: the PyTorch-visible total where known, else ``hbm_bytes``."""
        return self.torch_total_bytes if self.torch_total_bytes else self.hbm_bytes


@dataclass(frozen=True, kw_only=True)
class ProviderLimits:
    """Rate limits, counting rules and prices of one provider tier for one model (class).

    Limits are per minute unless the name says otherwise; ``None`` means the provider sets no such limit.
    Counting rules:
    - ``cached_reads_count_itpm``: cached (prefix-cache read) input tokens count toward ITPM/TPM;
    - ``reserves_max_tokens``: admission counts input + ``max_tokens`` rather than actual output;
    - ``window_s``: the enforcement window behind a per-minute limit (60, 10 or 1 second);
    - ``output_token_weight``: quota tokens one output token consumes toward TPM (AWS Bedrock, Claude 3.7+: 5).
    Scope (see :data:`LIMIT_SCOPES`):
    - ``scope``: what the limit is metered per (``organization``, ``project``, ``key``, ``deployment``,
      ``account-region``); the default ``organization`` is the conservative reading (more keys add nothing);
    - ``multiplied_by``: what, added, brings another full copy of the limit (``region``, ``deployment``, ...), or
      ``None`` when nothing a planner controls does;
    - ``raise_by``: what else raises it (a higher tier, provisioned throughput, a quota request, ...);
    - ``verified``: ``False`` where the figures could not be confirmed on a current public page.
    Prices are USD per million tokens; a ``None`` cache-write price means the provider charges no separate write
    price, so writes are billed as uncached input (:func:`planner.cost.api_cost_per_request_usd`).
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
    scope: str = "organization"
    multiplied_by: str | None = None
    raise_by: tuple[str, ...] = ()
    verified: bool = True
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
