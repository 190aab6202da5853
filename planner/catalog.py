"""The catalog: model, GPU and provider facts by name, and models from Hugging Face ``config.json`` files.

The facts live in the package data files ``planner/data/models.json``, ``gpus.json`` and ``providers.json`` (every
entry carries ``source`` and ``as_of`` copied from the project reference; see ``docs/catalog.md``). They are read
once, on first use, and cached. Reading those files, and a ``config.json`` the caller names, is the only I/O here;
:func:`model_from_config` and :func:`estimate_params` are pure.

Names are case-insensitive; spaces and underscores count as dashes. A model is found by catalog id
(``llama-3.1-70b``), alias, or Hugging Face id (``meta-llama/Meta-Llama-3.1-70B``), or given as the path of a
``config.json`` (or of a directory holding one). Unknown names raise :class:`planner.errors.UnknownNameError`,
whose one-line message lists what is known.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timezone
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from planner import catalog_sheet
from planner.errors import ArgumentError, UnknownNameError
from planner.specs import (
    ATTENTION_GQA,
    ATTENTION_MLA,
    FULL_ATTENTION,
    LIMIT_MULTIPLIERS,
    LIMIT_SCOPES,
    SLIDING_ATTENTION,
    GpuSpec,
    ModelSpec,
    ProviderLimits,
)

__all__ = [
    "estimate_params",
    "get_gpu",
    "get_model",
    "get_provider_limits",
    "gpus",
    "model_from_config",
    "models",
    "provider_limits",
    "provider_rules",
    "normalize_name",
]

# Model types whose Hugging Face config class ties the LM head to the input embedding by default.
_TIED_BY_DEFAULT = ("gemma", "gemma2", "gemma3", "gemma3_text")
# Model types with q/k/v projection biases (and no o bias) whatever ``attention_bias`` says.
_QKV_BIAS_TYPES = ("qwen2", "qwen2_moe")
# Model types with per-head RMSNorm on q and k (``head_dim`` weights each).
_QK_NORM_TYPES = ("qwen3", "qwen3_moe", "gemma3", "gemma3_text")
# Model types with four RMSNorms per decoder layer (pre/post attention, pre/post MLP).
_FOUR_NORM_TYPES = ("gemma2", "gemma3", "gemma3_text")
_GEMMA3_TYPES = ("gemma3", "gemma3_text")
_LAYER_TYPES = (FULL_ATTENTION, SLIDING_ATTENTION)


def normalize_name(name: str) -> str:
    """Catalog key of a name: lower case, trimmed, runs of spaces/underscores turned into one dash.

    >>> normalize_name("  H100_SXM ")
    'h100-sxm'
    >>> normalize_name("meta-llama/Meta-Llama-3.1-8B")
    'meta-llama/meta-llama-3.1-8b'
    """
    return re.sub(r"[\s_]+", "-", name.strip().lower())


# ----------------------------------------------------------------------------------------------- config parsing


def _flatten_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Merge a multimodal config's ``text_config`` over its top level (Gemma-3, Llama-4 nest the LM there)."""
    text = config.get("text_config")
    if isinstance(text, Mapping):
        merged = {k: v for k, v in config.items() if k != "text_config"}
        top_type = merged.get("model_type")
        merged.update(text)
        if "model_type" not in text and top_type:
            merged["model_type"] = top_type
        return merged
    return dict(config)


def _req_int(cfg: Mapping[str, Any], key: str, *, minimum: int = 1) -> int:
    value = cfg.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) or value < minimum:
        raise ArgumentError(f"config.{key}", value, f"a whole number >= {minimum}")
    return int(value)


def _opt_int(cfg: Mapping[str, Any], key: str, *, minimum: int = 0) -> int | None:
    if cfg.get(key) is None:
        return None
    return _req_int(cfg, key, minimum=minimum)


def _num_experts(cfg: Mapping[str, Any]) -> int | None:
    for key in ("num_local_experts", "n_routed_experts", "num_experts"):
        if cfg.get(key):
            return _req_int(cfg, key)
    return None


def _top_k(cfg: Mapping[str, Any]) -> int | None:
    """Experts per token (gpt-oss also spells it ``experts_per_token``)."""
    return _opt_int(cfg, "num_experts_per_tok", minimum=1) or _opt_int(cfg, "experts_per_token", minimum=1)


def _tied(cfg: Mapping[str, Any]) -> bool:
    if "tie_word_embeddings" in cfg and cfg["tie_word_embeddings"] is not None:
        return bool(cfg["tie_word_embeddings"])
    return str(cfg.get("model_type", "")).lower() in _TIED_BY_DEFAULT


def _layer_types(cfg: Mapping[str, Any], layers: int) -> tuple[tuple[str, ...], int | None]:
    """Per-layer attention types and the window, from ``layer_types``, ``sliding_window_pattern`` or the family rule.

    Returns ``((), None)`` when every layer attends to the full context (including a window no shorter than
    ``max_position_embeddings``, which caps nothing).
    """
    model_type = str(cfg.get("model_type", "")).lower()
    window = _opt_int(cfg, "sliding_window", minimum=1)
    given = cfg.get("layer_types")
    if given is not None:
        if not isinstance(given, (list, tuple)) or len(given) != layers:
            raise ArgumentError("config.layer_types", given, f"a list of {layers} layer types (one per layer)")
        bad = [t for t in given if t not in _LAYER_TYPES]
        if bad:
            raise ArgumentError("config.layer_types", bad[0], "full_attention or sliding_attention")
        types = tuple(given)
    elif cfg.get("sliding_window_pattern") or (model_type in _GEMMA3_TYPES and window):
        pattern = _req_int(cfg, "sliding_window_pattern") if cfg.get("sliding_window_pattern") else 6
        types = tuple(FULL_ATTENTION if (i + 1) % pattern == 0 else SLIDING_ATTENTION for i in range(layers))
    elif model_type == "gemma2" and window:
        types = tuple(SLIDING_ATTENTION if i % 2 == 0 else FULL_ATTENTION for i in range(layers))
    elif window and cfg.get("use_sliding_window") is False:
        types = ()
    elif window and model_type in _QKV_BIAS_TYPES:
        # Qwen2 with use_sliding_window true: layers from max_window_layers on use the window.
        first = _opt_int(cfg, "max_window_layers") or 0
        types = tuple(SLIDING_ATTENTION if i >= first else FULL_ATTENTION for i in range(layers))
    elif window:
        types = (SLIDING_ATTENTION,) * layers  # Mistral, Mixtral, Phi-3: every layer uses the window
    else:
        types = ()
    max_pos = cfg.get("max_position_embeddings")
    if window is not None and isinstance(max_pos, (int, float)) and window >= max_pos:
        types = ()
    if SLIDING_ATTENTION not in types:
        return (), None
    if window is None:
        raise ArgumentError("config.sliding_window", None, "a window in tokens when layer_types has sliding layers")
    return types, window


def estimate_params(config: Mapping[str, Any]) -> tuple[float, float]:
    """Total and active parameter counts estimated from a Hugging Face ``config.json`` dict.

    Formula (all counts; ``d`` = hidden_size, ``H``/``K`` = attention/KV heads, ``h`` = head_dim, ``V`` = vocab)::

        total  = V*d*(1 if tied else 2) + d                        # embedding, LM head, final norm
               + sum over layers( attention + norms + mlp )
        attention (GQA)  = d*H*h + 2*d*K*h + H*h*d  (+ q/k/v(/o) biases, q/k norms, sinks where the family has them)
        attention (MLA)  = d*q_lora + q_lora + q_lora*H*(nope+rope) + d*(kv_lora+rope) + kv_lora
                           + kv_lora*H*(nope+v) + H*v*d             # DeepSeek-V3
        mlp (dense)      = 3*d*intermediate                        # gated: gate, up, down
        mlp (MoE layer)  = E*3*d*f + d*E (router) + shared experts; active uses k of the E experts
        norms            = 2*d per layer (4*d for Gemma-2/3)

    ``active`` counts the input embedding and the LM head (the convention of the reference's derived counts);
    model cards that quote "active" without the input embedding (gpt-oss) are lower by ``V*d``. Multi-token-
    prediction layers (DeepSeek ``num_nextn_predict_layers``) and vision towers are not counted.
    Ref: facts.md section 4 ("Parameter counts marked [derived] are computed from the config ...").

    Example (Llama-3.1-8B, published [derived] 8.03e9)::

        >>> cfg = {"model_type": "llama", "num_hidden_layers": 32, "num_attention_heads": 32,
        ...        "num_key_value_heads": 8, "hidden_size": 4096, "intermediate_size": 14336, "vocab_size": 128256}
        >>> total, active = estimate_params(cfg)
        >>> round(total / 1e9, 2), total == active
        (8.03, True)
    """
    layout = _param_layout(config)
    return layout["total"], layout["active"]


def _param_layout(config: Mapping[str, Any]) -> dict[str, Any]:
    """The parameter breakdown behind :func:`estimate_params`: ``embed`` (input embedding), ``head`` (LM head, 0 when
    tied), ``norm`` (final norm), ``layers`` (each decoder layer's parameters, in order), ``moe_layers`` (indices of the
    MoE layers), ``expert_ffn`` / ``shared_ffn`` / ``dense_ffn`` (one routed expert's, the shared experts' and the
    dense layers' FFN widths; 0 where absent), ``shared_experts``, ``total`` and ``active``."""
    cfg = _flatten_config(config)
    model_type = str(cfg.get("model_type", "")).lower()
    layers = _req_int(cfg, "num_hidden_layers")
    d = _req_int(cfg, "hidden_size")
    heads = _req_int(cfg, "num_attention_heads")
    kv = _opt_int(cfg, "num_key_value_heads", minimum=1) or heads
    vocab = _req_int(cfg, "vocab_size")
    head_dim = _opt_int(cfg, "head_dim", minimum=1) or d // heads

    # Attention per layer.
    kv_lora = _opt_int(cfg, "kv_lora_rank", minimum=1)
    if kv_lora:
        rope = _req_int(cfg, "qk_rope_head_dim")
        nope = _req_int(cfg, "qk_nope_head_dim")
        v_dim = _opt_int(cfg, "v_head_dim", minimum=1) or nope
        q_lora = _opt_int(cfg, "q_lora_rank", minimum=1)
        q = (d * q_lora + q_lora + q_lora * heads * (nope + rope)) if q_lora else d * heads * (nope + rope)
        attn = q + d * (kv_lora + rope) + kv_lora + kv_lora * heads * (nope + v_dim) + heads * v_dim * d
    else:
        attn = d * heads * head_dim + 2 * d * kv * head_dim + heads * head_dim * d
        if model_type in _QKV_BIAS_TYPES:
            attn += heads * head_dim + 2 * kv * head_dim
        elif cfg.get("attention_bias"):
            attn += heads * head_dim + 2 * kv * head_dim + d
        if model_type in _QK_NORM_TYPES:
            attn += 2 * head_dim
        if model_type == "gpt_oss":
            attn += heads  # attention sinks
    norms = (4 if model_type in _FOUR_NORM_TYPES else 2) * d

    # MLP per layer: dense, MoE, or a mix.
    experts = _num_experts(cfg)
    inter = _opt_int(cfg, "intermediate_size", minimum=1) or 0
    dense_mlp = 3 * d * inter
    moe_layers: set[int] = set()
    moe_total = moe_active = 0
    expert_ffn = shared_ffn = shared_experts = 0
    dense_ffn = inter
    if experts and experts > 1:
        top_k = _top_k(cfg) or 1
        ffn = _opt_int(cfg, "moe_intermediate_size", minimum=1) or inter
        expert_ffn = ffn
        expert = 3 * d * ffn
        if model_type == "gpt_oss":
            expert += 2 * ffn + d  # gate_up and down biases
        router = d * experts + (experts if model_type in ("gpt_oss", "deepseek_v3") else 0)
        shared = 0
        if cfg.get("n_shared_experts"):
            shared_experts = _req_int(cfg, "n_shared_experts")
            shared = shared_experts * 3 * d * ffn
            shared_ffn = shared_experts * ffn
        if cfg.get("shared_expert_intermediate_size"):
            shared += 3 * d * _req_int(cfg, "shared_expert_intermediate_size") + d  # Qwen2-MoE shared expert + gate
            shared_ffn += _req_int(cfg, "shared_expert_intermediate_size")
            shared_experts = shared_experts or 1
        if model_type in ("llama4", "llama4_text"):
            shared += 3 * d * ffn  # Llama-4: one shared expert of the routed experts' size
            shared_experts, shared_ffn = 1, ffn
            dense_ffn = _opt_int(cfg, "intermediate_size_mlp", minimum=1) or inter
            dense_mlp = 3 * d * dense_ffn
            step = _opt_int(cfg, "interleave_moe_layer_step", minimum=1) or 1
            moe_layers = set(range(step - 1, layers, step))
        else:
            first_dense = _opt_int(cfg, "first_k_dense_replace") or 0
            step = _opt_int(cfg, "moe_layer_freq", minimum=1) or _opt_int(cfg, "decoder_sparse_step", minimum=1) or 1
            mlp_only = set(cfg.get("mlp_only_layers") or ())
            moe_layers = {i for i in range(first_dense, layers) if (i - first_dense) % step == 0 and i not in mlp_only}
        moe_total = experts * expert + router + shared
        moe_active = top_k * expert + router + shared
    dense_count = layers - len(moe_layers)

    embed = vocab * d
    head = 0 if _tied(cfg) else vocab * d
    common = embed + head + d + layers * (attn + norms) + dense_count * dense_mlp
    total = common + len(moe_layers) * moe_total
    active = common + len(moe_layers) * moe_active
    per_layer = tuple(float(attn + norms + (moe_total if i in moe_layers else dense_mlp)) for i in range(layers))
    return {"embed": float(embed), "head": float(head), "norm": float(d), "layers": per_layer,
            "moe_layers": tuple(sorted(moe_layers)), "expert_ffn": expert_ffn, "shared_ffn": shared_ffn,
            "dense_ffn": dense_ffn, "shared_experts": shared_experts, "total": float(total), "active": float(active)}


def _weight_dtype(cfg: Mapping[str, Any]) -> str:
    quant = cfg.get("quantization_config")
    if isinstance(quant, Mapping):
        method = str(quant.get("quant_method", "")).lower()
        if method == "mxfp4":
            return "mxfp4"
        if method in ("fp8", "fbgemm_fp8", "compressed-tensors") or "e4m3" in str(quant.get("fmt", "")):
            return "fp8"
        bits = quant.get("bits")
        if bits in (4, 8):
            return f"int{bits}"
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16").lower()
    return {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32", "float": "fp32"}.get(dtype, dtype)


def model_from_config(config: Mapping[str, Any], *, name: str, source: str, as_of: str = "undated") -> ModelSpec:
    """A :class:`ModelSpec` from a Hugging Face ``config.json`` dict (pure; no file access).

    Handles Llama, Qwen2/2.5, Qwen3, Mistral, Mixtral, Qwen3-MoE, DeepSeek-V3 (MLA: ``kv_lora_rank``,
    ``qk_rope_head_dim``; ``first_k_dense_replace``, ``n_routed_experts``, ``moe_intermediate_size``, shared
    experts, all carried in the spec: ``moe_intermediate_size``, ``num_shared_experts``,
    ``shared_expert_intermediate_size``, ``first_k_dense_replace``, ``moe_layers``, ``dense_intermediate_size``),
    gpt-oss, Gemma-2/3 (``text_config`` nesting, ``layer_types``, ``sliding_window_pattern``), Phi-3/4 and
    Llama-4. ``head_dim`` absent means ``hidden_size / num_attention_heads``; for MLA ``head_dim`` is the query/key
    head size ``qk_nope_head_dim + qk_rope_head_dim`` and ``v_head_dim`` the value head size. Parameter counts are
    estimated by :func:`estimate_params` (the catalog replaces them with published counts where it has them).

    >>> spec = model_from_config({"model_type": "mistral", "num_hidden_layers": 32, "num_attention_heads": 32,
    ...     "num_key_value_heads": 8, "hidden_size": 4096, "intermediate_size": 14336, "vocab_size": 32000,
    ...     "max_position_embeddings": 32768, "sliding_window": 4096}, name="mistral-7b", source="example")
    >>> spec.head_dim, spec.sliding_window_layers, round(spec.params_total / 1e9, 2)
    (128, 32, 7.24)

    DeepSeek-V3's experts are 2,048 wide, its first three layers dense at 18,432 (``intermediate_size``):

    >>> r1 = get_model("deepseek-r1")
    >>> r1.intermediate_size, r1.moe_intermediate_size, r1.first_k_dense_replace, r1.moe_layers[:2], len(r1.moe_layers)
    (18432, 2048, 3, (3, 4), 58)
    >>> r1.num_shared_experts, r1.shared_expert_intermediate_size, r1.dense_intermediate_size
    (1, 2048, 18432)
    """
    if not isinstance(config, Mapping):
        raise ArgumentError("config", type(config).__name__, "a JSON object (Hugging Face config.json)")
    cfg = _flatten_config(config)
    layers = _req_int(cfg, "num_hidden_layers")
    hidden = _req_int(cfg, "hidden_size")
    heads = _req_int(cfg, "num_attention_heads")
    kv_heads = _opt_int(cfg, "num_key_value_heads", minimum=1) or heads
    kv_lora = _opt_int(cfg, "kv_lora_rank", minimum=1)
    if kv_lora:
        attention = ATTENTION_MLA
        rope = _req_int(cfg, "qk_rope_head_dim")
        nope = _req_int(cfg, "qk_nope_head_dim")
        head_dim = nope + rope
        v_head_dim: int | None = _opt_int(cfg, "v_head_dim", minimum=1) or nope
    else:
        attention = ATTENTION_GQA
        rope = None
        head_dim = _opt_int(cfg, "head_dim", minimum=1) or hidden // heads
        v_head_dim = None
    layer_types, window = _layer_types(cfg, layers)
    experts = _num_experts(cfg)
    moe = bool(experts and experts > 1)
    layout = _param_layout(cfg)
    total, active = layout["total"], layout["active"]
    moe_layers = layout["moe_layers"] if moe and len(layout["moe_layers"]) < layers else ()
    return ModelSpec(
        name=name,
        hf_id=cfg.get("_name_or_path") or None,
        architecture="moe" if moe else "dense",
        attention=attention,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=kv_heads,
        head_dim=head_dim,
        v_head_dim=v_head_dim,
        hidden_size=hidden,
        intermediate_size=_opt_int(cfg, "intermediate_size", minimum=1),
        vocab_size=_opt_int(cfg, "vocab_size", minimum=1),
        max_position_embeddings=_opt_int(cfg, "max_position_embeddings", minimum=1),
        kv_lora_rank=kv_lora,
        qk_rope_head_dim=rope,
        sliding_window=window,
        layer_types=layer_types,
        num_experts=experts if moe else None,
        num_experts_per_tok=_top_k(cfg) if moe else None,
        moe_intermediate_size=(layout["expert_ffn"] or None) if moe else None,
        num_shared_experts=(layout["shared_experts"] or None) if moe else None,
        shared_expert_intermediate_size=(layout["shared_ffn"] or None) if moe else None,
        first_k_dense_replace=_opt_int(cfg, "first_k_dense_replace") if moe else None,
        moe_layers=moe_layers,
        dense_intermediate_size=(layout["dense_ffn"] or None) if moe and moe_layers else None,
        layer_params=layout["layers"],
        embedding_params=layout["embed"],
        tie_word_embeddings=_tied(cfg),
        params_total=total,
        params_active=active,
        params_basis="estimated from config by planner.catalog.estimate_params",
        weight_dtype=_weight_dtype(cfg),
        family=str(cfg.get("model_type", "")),
        source=source,
        as_of=as_of,
    )


# ----------------------------------------------------------------------------------------------- data files


def _read_data(filename: str) -> dict[str, Any]:
    with resources.files("planner").joinpath("data").joinpath(filename).open("r", encoding="utf-8") as handle:
        return json.load(handle)


def _add_key(index: dict[str, Any], key: str, value: Any, what: str) -> None:
    norm = normalize_name(key)
    if norm in index and index[norm] is not value:
        raise RuntimeError(f"{what} catalog: name {key!r} is used by two entries")
    index[norm] = value


def _model_entry(entry: Mapping[str, Any]) -> ModelSpec:
    spec = model_from_config(entry["config"], name=entry["id"], source=entry["source"], as_of=entry["as_of"])
    changes: dict[str, Any] = {
        "hf_id": entry.get("hf_id"),
        "aliases": tuple(entry.get("aliases", ())),
        "family": entry.get("family", spec.family),
        "weight_dtype": entry.get("weight_dtype", spec.weight_dtype),
        "checkpoint_bytes": entry.get("checkpoint_bytes"),
    }
    if entry.get("params_total") is not None:
        changes["params_total"] = float(entry["params_total"])
        changes["params_active"] = float(entry.get("params_active", entry["params_total"]))
        changes["params_basis"] = entry.get("params_basis", "catalog")
    else:
        changes["params_basis"] = entry.get("params_basis", spec.params_basis)
    return replace(spec, **changes)


@lru_cache(maxsize=1)
def _models() -> tuple[tuple[ModelSpec, ...], dict[str, ModelSpec], dict[str, dict[str, Any]]]:
    data = _read_data("models.json")
    specs: list[ModelSpec] = []
    index: dict[str, ModelSpec] = {}
    raw: dict[str, dict[str, Any]] = {}
    for entry in data["models"]:
        spec = _model_entry(entry)
        specs.append(spec)
        raw[spec.name] = entry
        for key in (spec.name, spec.hf_id, *spec.aliases):
            if key:
                _add_key(index, key, spec, "model")
    return tuple(specs), index, raw


@lru_cache(maxsize=1)
def _gpus() -> tuple[tuple[GpuSpec, ...], dict[str, GpuSpec]]:
    data = _read_data("gpus.json")
    specs: list[GpuSpec] = []
    index: dict[str, GpuSpec] = {}
    for entry in data["gpus"]:
        spec = GpuSpec(
            name=entry["id"],
            display_name=entry["display_name"],
            aliases=tuple(entry.get("aliases", ())),
            vendor=entry.get("vendor", "NVIDIA"),
            compute_capability=_opt_float(entry.get("compute_capability")),
            hbm_bytes=int(entry["hbm_bytes"]),
            hbm_bytes_basis=entry["hbm_bytes_basis"],
            torch_total_bytes=None if entry.get("torch_total_bytes") is None else int(entry["torch_total_bytes"]),
            torch_total_basis=entry.get("torch_total_basis"),
            mem_bw_bytes_per_s=float(entry["mem_bw_bytes_per_s"]),
            bf16_flops_per_s=float(entry["bf16_flops_per_s"]),
            fp8_flops_per_s=None if entry.get("fp8_flops_per_s") is None else float(entry["fp8_flops_per_s"]),
            fp4_flops_per_s=_opt_float(entry.get("fp4_flops_per_s")),
            int8_ops_per_s=_opt_float(entry.get("int8_ops_per_s")),
            l2_cache_bytes=None if entry.get("l2_cache_bytes") is None else int(entry["l2_cache_bytes"]),
            infinity_cache_bytes=(None if entry.get("infinity_cache_bytes") is None
                                  else int(entry["infinity_cache_bytes"])),
            nvlink_bytes_per_s_bidir=_opt_float(entry.get("nvlink_bytes_per_s_bidir")),
            interconnect=entry.get("interconnect"),
            interconnect_bytes_per_s_bidir=_opt_float(entry.get("interconnect_bytes_per_s_bidir")),
            usd_per_gpu_hour=entry.get("usd_per_gpu_hour"),
            price_source=entry.get("price_source"),
            price_as_of=entry.get("price_as_of"),
            source=entry["source"],
            as_of=entry["as_of"],
        )
        specs.append(spec)
        for key in (spec.name, spec.display_name, *spec.aliases):
            _add_key(index, key, spec, "GPU")
    return tuple(specs), index


def _looks_like_path(text: str) -> bool:
    """A file-system path rather than a name (a Hugging Face id ``org/name`` is a name unless it exists on disk)."""
    return text.lower().endswith(".json") or os.path.isabs(text) or text.startswith((".", "~", "\\"))


def _model_from_path(text: str) -> ModelSpec:
    path = Path(text).expanduser()
    if path.is_dir():
        path = path / "config.json"
    if not path.is_file():
        raise ArgumentError("model", text, "a catalog model name or an existing config.json (or its directory)")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ArgumentError("model", text, f"a readable JSON config.json ({type(exc).__name__})") from None
    name = path.parent.name if path.name == "config.json" else path.stem
    as_of = datetime.fromtimestamp(path.stat().st_mtime, tz=timezone.utc).date().isoformat()
    return model_from_config(config, name=name, source=f"config.json at {path}", as_of=f"{as_of} (file date)")


def get_model(name_or_path: str | ModelSpec) -> ModelSpec:
    """The model named ``name_or_path``: catalog id, alias, Hugging Face id, or path of a ``config.json``/its folder.

    >>> get_model("Llama-3.1-70B").num_key_value_heads
    8
    >>> get_model("deepseek-ai/DeepSeek-V3").kv_lora_rank
    512
    """
    if isinstance(name_or_path, ModelSpec):
        return name_or_path
    if not isinstance(name_or_path, str) or not name_or_path.strip():
        raise ArgumentError("model", name_or_path, "a catalog model name or the path of a config.json")
    if catalog_sheet.is_token(name_or_path):  # a Models-sheet row (MODEL_SPEC): the sheet's facts over the catalog's
        return catalog_sheet.model_from_token(name_or_path)
    specs, index, _ = _models()
    found = index.get(normalize_name(name_or_path))
    if found is not None:
        return found
    text = name_or_path.strip()
    if Path(text).expanduser().exists() or _looks_like_path(text):
        return _model_from_path(text)
    raise UnknownNameError("model", name_or_path, (s.name for s in specs))


def model_entry(name: str) -> dict[str, Any]:
    """The raw catalog entry (with ``uncertain``, ``notes`` and the reference's check values) of a catalog model."""
    spec = get_model(name)
    raw = _models()[2].get(spec.name)
    if raw is None:
        raise UnknownNameError("model", name, (s.name for s in _models()[0]))
    return raw


def models() -> tuple[ModelSpec, ...]:
    """Every catalog model, in catalog order."""
    return _models()[0]


def get_gpu(name: str | GpuSpec) -> GpuSpec:
    """The GPU named ``name`` (id, alias or display name; case-insensitive).

    >>> get_gpu("H100").hbm_bytes == 81559 * 2**20
    True
    """
    if isinstance(name, GpuSpec):
        return name
    if not isinstance(name, str) or not name.strip():
        raise ArgumentError("gpu", name, "a catalog GPU name")
    if catalog_sheet.is_token(name):  # a GPUs-sheet row (GPU_SPEC)
        return catalog_sheet.gpu_from_token(name)
    specs, index = _gpus()
    found = index.get(normalize_name(name))
    if found is None:
        raise UnknownNameError("gpu", name, (s.name for s in specs))
    return found


def gpus() -> tuple[GpuSpec, ...]:
    """Every catalog GPU, in catalog order."""
    return _gpus()[0]


# ----------------------------------------------------------------------------------------------- providers


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _normalize_tier(tier: object) -> str:
    if isinstance(tier, bool):
        return str(tier)
    if isinstance(tier, (int, float)) and not math.isnan(tier) and tier == int(tier):
        return f"tier-{int(tier)}"
    text = normalize_name(str(tier))
    match = re.fullmatch(r"(?:tier-?|t)?(\d+)", text)
    return f"tier-{match.group(1)}" if match else text


def _scope_fields(entry: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``scope``, ``multiplied_by``, ``raise_by`` and ``verified`` of a limit entry, checked against the closed
    vocabularies :data:`~planner.specs.LIMIT_SCOPES` and :data:`~planner.specs.LIMIT_MULTIPLIERS`.

    A bad value is a bug in the data file: the error names the file, the entry and the field.
    """
    scope = entry.get("scope")
    if scope not in LIMIT_SCOPES:
        raise RuntimeError(f"providers.json {where}: scope {scope!r} is not one of {', '.join(LIMIT_SCOPES)}")
    multiplied_by = entry.get("multiplied_by")
    if multiplied_by is not None and multiplied_by not in LIMIT_MULTIPLIERS:
        raise RuntimeError(
            f"providers.json {where}: multiplied_by {multiplied_by!r} is not null or one of "
            + ", ".join(LIMIT_MULTIPLIERS)
        )
    raise_by = entry.get("raise_by")
    if not isinstance(raise_by, list) or not raise_by or not all(isinstance(r, str) and r.strip() for r in raise_by):
        raise RuntimeError(f"providers.json {where}: raise_by must be a non-empty list of texts")
    if not str(entry.get("scope_source") or "").strip():
        raise RuntimeError(f"providers.json {where}: scope_source (where the scope is stated) is missing")
    verified = entry.get("verified", True)
    if not isinstance(verified, bool):
        raise RuntimeError(f"providers.json {where}: verified must be true or false")
    return {"scope": scope, "multiplied_by": multiplied_by, "raise_by": tuple(raise_by), "verified": verified}


@lru_cache(maxsize=1)
def _providers() -> tuple[tuple[ProviderLimits, ...], dict[str, str], dict[tuple[str, str, str], ProviderLimits], dict]:
    data = _read_data("providers.json")
    provider_index: dict[str, str] = {}
    for provider, info in data["providers"].items():
        for key in (provider, *info.get("aliases", ())):
            _add_key(provider_index, key, provider, "provider")
        if "limit_scope" in info:
            _scope_fields(info["limit_scope"], provider)
    specs: list[ProviderLimits] = []
    index: dict[tuple[str, str, str], ProviderLimits] = {}
    for entry in data["limits"]:
        fields: dict[str, Any] = {k: _opt_float(entry.get(k)) for k in ("rpm", "tpm", "itpm", "otpm", "rpd", "tpd")}
        prices: dict[str, Any] = {
            k: _opt_float(entry.get(k))
            for k in (
                "usd_per_mtok_input",
                "usd_per_mtok_cached_input",
                "usd_per_mtok_cache_write",
                "usd_per_mtok_output",
            )
        }
        spec = ProviderLimits(
            provider=entry["provider"],
            tier=entry["tier"],
            model=entry["model"],
            **fields,
            cached_reads_count_itpm=bool(entry["cached_reads_count_itpm"]),
            reserves_max_tokens=bool(entry["reserves_max_tokens"]),
            window_s=float(entry["window_s"]),
            output_token_weight=float(entry.get("output_token_weight", 1.0)),
            **_scope_fields(entry, f"{entry['provider']}/{entry['tier']}/{entry['model']}"),
            **prices,
            notes=tuple(entry.get("notes", ())),
            source=entry["source"],
            as_of=entry["as_of"],
        )
        specs.append(spec)
        for model_key in (entry["model"], *entry.get("aliases", ())):
            key = (spec.provider, _normalize_tier(spec.tier), normalize_name(model_key))
            if key in index and index[key] is not spec:
                raise RuntimeError(f"provider catalog: {key} is used by two entries")
            index[key] = spec
    return tuple(specs), provider_index, index, data["providers"]


def get_provider_limits(provider: str, tier: str | int, model: str) -> ProviderLimits:
    """Rate limits, counting rules and prices of ``provider`` at ``tier`` for ``model`` (all case-insensitive).

    ``tier`` may be written ``"Tier 1"``, ``"tier-1"``, ``"1"`` or ``1``; named tiers (``free``, ``start``) as is.

    >>> lim = get_provider_limits("Anthropic", "Tier 4", "claude-sonnet-4.5")
    >>> lim.itpm, lim.cached_reads_count_itpm
    (2000000.0, False)
    """
    specs, provider_index, index, _ = _providers()
    if not isinstance(provider, str) or normalize_name(provider) not in provider_index:
        raise UnknownNameError("provider", provider, {s.provider for s in specs})
    prov = provider_index[normalize_name(provider)]
    tier_key = _normalize_tier(tier)
    tiers = {_normalize_tier(s.tier) for s in specs if s.provider == prov}
    if not tiers:
        with_limits = sorted({s.provider for s in specs})
        raise ArgumentError(
            "provider", provider, "a provider with tier limits in the catalog: " + ", ".join(with_limits)
        )
    if tier_key not in tiers:
        raise UnknownNameError("tier", tier, tiers)
    if not isinstance(model, str):
        raise ArgumentError("model", model, "a provider model name")
    found = index.get((prov, tier_key, normalize_name(model)))
    if found is None:
        known = {m for (p, t, m) in index if p == prov and t == tier_key}
        raise UnknownNameError("model", model, known)
    return found


def provider_limits() -> tuple[ProviderLimits, ...]:
    """Every catalog provider/tier/model entry, in catalog order."""
    return _providers()[0]


def provider_rules(provider: str) -> dict[str, Any]:
    """The provider-level facts (counting rules, tiers, caching) of ``provider``, each with source and as_of."""
    specs, provider_index, _, info = _providers()
    if not isinstance(provider, str) or normalize_name(provider) not in provider_index:
        raise UnknownNameError("provider", provider, provider_index.values())
    return info[provider_index[normalize_name(provider)]]


# ----------------------------------------------------------------------------------------------- serving constants

@lru_cache(maxsize=1)
def serving_calibration_data() -> dict[str, Any]:
    """The fitted constants of the serving model (``planner/data/serving_calibration.json``, the JSON form of
    :class:`planner.serving.calibration.Calibration`)."""
    return _read_data("serving_calibration.json")


@lru_cache(maxsize=1)
def benchmark_harness_data() -> dict[str, Any]:
    """How public benchmark harnesses generate their load (``planner/data/benchmark_harnesses.json``): AccelMark's
    online scenario (seed, qps levels and runs per suite, the request dataset's per-request prompt lengths), with its
    source and as-of date; :func:`planner.serving.accuracy.harness_trace` turns it into arrival times."""
    return _read_data("benchmark_harnesses.json")
