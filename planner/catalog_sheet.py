"""The editable catalog sheets (Models, GPUs) as the functions see them: one definition of their columns, and the
*spec token* that carries a sheet row into every function that takes a model or a GPU.

A workbook's Models and GPUs sheets are facts a planner may edit. So that what the sheet shows is what is computed,
the template turns each fleet's model row and GPU row into a token (``MODEL_SPEC`` / ``GPU_SPEC``), shown on the
Specs sheet, and passes that token wherever a function takes a model or a GPU name. :func:`planner.catalog.get_model`
and :func:`planner.catalog.get_gpu` accept a token: the bundled catalog entry of that name (if any) with every
non-blank sheet cell applied over it. A row for a model or GPU that is not bundled must fill every required column.

Token grammar: ``name|key=value|key=value`` with the sheet's column keys (:data:`MODEL_COLUMNS`,
:data:`GPU_COLUMNS`); text values escape ``%``, ``|`` and ``=`` as ``%25``, ``%7C`` and ``%3D``.

>>> model_token(["llama-x", None, "gqa", 32, 32, 8, 128, 4096], MODEL_HEADERS[:8])
'llama-x|attention=gqa|layers=32|attention_heads=32|kv_heads=8|head_dim=128|hidden_size=4096'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from planner.errors import ArgumentError
from planner.specs import FULL_ATTENTION, GIB, SLIDING_ATTENTION, GpuSpec, ModelSpec


@dataclass(frozen=True, kw_only=True)
class SheetColumn:
    """One catalog-sheet column: its key, its header (with unit), the spec field it sets and how."""

    key: str
    header: str
    help: str
    kind: str = "number"  # number | integer | text
    field: str | None = None  # the spec field; None: not passed to the functions (display only)
    scale: float = 1.0  # sheet value x scale = spec value (1e9 params, GiB bytes, ...)
    required: bool = False  # required for a row that is not in the bundled catalog
    width: float = 14.0
    number_format: str = "General"


def _c(key: str, header: str, help: str, **kw: Any) -> SheetColumn:
    return SheetColumn(key=key, header=header, help=help, **kw)


MODEL_COLUMNS: tuple[SheetColumn, ...] = (
    _c("name", "Model [name]", "Catalog name used by Fleet", kind="text", width=20),
    _c("hf_id", "Hugging Face id", "Repository id", kind="text", field="hf_id", width=30),
    _c("attention", "Attention [gqa/mla]", "Attention kind", kind="text", field="attention", width=10),
    _c("layers", "Layers [count]", "num_hidden_layers", kind="integer", field="num_hidden_layers", required=True),
    _c("attention_heads", "Attention heads [count]", "num_attention_heads (TP must divide it)", kind="integer",
       field="num_attention_heads", required=True),
    _c("kv_heads", "KV heads [count]", "num_key_value_heads", kind="integer", field="num_key_value_heads",
       required=True),
    _c("head_dim", "Head dim [elements]", "head_dim", kind="integer", field="head_dim", required=True),
    _c("hidden_size", "Hidden size [elements]", "hidden_size", kind="integer", field="hidden_size", required=True),
    _c("intermediate_size", "Intermediate size [elements]", "intermediate_size as config.json gives it (the "
       "MLP's; Mixtral, gpt-oss and Llama-4: also each expert's)", kind="integer", field="intermediate_size"),
    _c("moe_intermediate_size", "Expert FFN [elements]", "One routed expert's FFN width (moe_intermediate_size; "
       "blank: the intermediate size)", kind="integer", field="moe_intermediate_size"),
    _c("vocab_size", "Vocabulary [tokens]", "vocab_size", kind="integer", field="vocab_size"),
    _c("sliding_window", "Sliding window [tokens]", "Blank: none", kind="integer", field="sliding_window"),
    _c("sliding_layers", "Sliding layers [count]", "Layers using the sliding window (blank: none)",
       kind="integer", field="layer_types"),
    _c("experts", "Experts [count]", "num_experts (MoE; blank: dense)", kind="integer", field="num_experts"),
    _c("experts_per_token", "Experts per token [count]", "num_experts_per_tok (MoE)", kind="integer",
       field="num_experts_per_tok"),
    _c("kv_lora_rank", "MLA latent [elements]", "kv_lora_rank (MLA only)", kind="integer", field="kv_lora_rank"),
    _c("qk_rope_head_dim", "MLA RoPE dim [elements]", "qk_rope_head_dim (MLA only)", kind="integer",
       field="qk_rope_head_dim"),
    _c("params_total_b", "Params total [1e9]", "All parameters (all experts)", field="params_total", scale=1e9,
       required=True, number_format="0.00"),
    _c("params_active_b", "Params active [1e9]", "Active per token", field="params_active", scale=1e9,
       required=True, number_format="0.00"),
    _c("checkpoint_gb", "Checkpoint [GB]", "Size of the released weights (blank: params x dtype)",
       field="checkpoint_bytes", scale=1e9, number_format="0.00"),
    _c("weight_dtype", "Checkpoint dtype", "dtype most released weights are stored in", kind="text",
       field="weight_dtype", width=10),
    _c("max_context", "Max context [tokens]", "max_position_embeddings", kind="integer",
       field="max_position_embeddings", number_format="#,##0"),
    _c("source", "Source", "Where the facts come from", kind="text", width=40),
    _c("as_of", "As of [date]", "Date of the facts", kind="text", width=14),
)

GPU_COLUMNS: tuple[SheetColumn, ...] = (
    _c("name", "GPU [name]", "Catalog name used by Fleet", kind="text", width=16),
    _c("display_name", "Display name", "Marketing name", kind="text", field="display_name", width=26),
    _c("hbm_gib", "HBM [GiB]", "Memory the driver reports (nvidia-smi)", field="hbm_bytes", scale=GIB,
       required=True, number_format="0.00"),
    _c("torch_total_gib", "Engine-visible [GiB]", "Total PyTorch sees, which engines budget from (blank: HBM)",
       field="torch_total_bytes", scale=GIB, number_format="0.00"),
    _c("mem_bw_gb_s", "Bandwidth [GB/s]", "Peak HBM bandwidth", field="mem_bw_bytes_per_s", scale=1e9,
       required=True, number_format="#,##0"),
    _c("bf16_tflops", "BF16 dense [TFLOP/s]", "Peak dense BF16", field="bf16_flops_per_s", scale=1e12,
       required=True, number_format="#,##0"),
    _c("fp8_tflops", "FP8 dense [TFLOP/s]", "Peak dense FP8 (blank: none)", field="fp8_flops_per_s", scale=1e12,
       number_format="#,##0"),
    _c("int8_tops", "INT8 dense [TOPS]", "Peak dense INT8 tensor-core ops (blank: the bundled figure, or none); "
       "W8A8/INT8 GEMMs run at it on a GPU with no FP8 and compute capability 8.0 (the A100's), 0: the BF16 peak",
       field="int8_ops_per_s", scale=1e12, number_format="#,##0"),
    _c("usd_per_gpu_hour", "Price [USD/GPU-h]", "On-demand price", field="usd_per_gpu_hour",
       number_format="0.00"),
    _c("compute_capability", "Compute capability [x.y]", "NVIDIA's CUDA compute capability (below 9.0: "
       "FlashAttention-2 class attention kernels); blank: not NVIDIA", field="compute_capability",
       number_format="0.0", width=11),
    _c("source", "Source", "Where the facts come from", kind="text", width=40),
    _c("as_of", "As of [date]", "Date of the facts", kind="text", width=14),
)

MODEL_HEADERS = tuple(c.header for c in MODEL_COLUMNS)
GPU_HEADERS = tuple(c.header for c in GPU_COLUMNS)


def _escape(text: str) -> str:
    return text.replace("%", "%25").replace("|", "%7C").replace("=", "%3D")


def _unescape(text: str) -> str:
    return text.replace("%7C", "|").replace("%3D", "=").replace("%25", "%")


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def _columns_for(headers: Sequence[Any], columns: Sequence[SheetColumn], what: str) -> list[SheetColumn | None]:
    by_header = {c.header.lower(): c for c in columns}
    out = []
    for h in headers:
        out.append(by_header.get(str(h).strip().lower()) if not _blank(h) else None)
    if not out or out[0] is None or out[0].key != "name":
        raise ArgumentError(f"{what} headers", headers[0] if headers else None,
                            f"the {what} sheet's header row, starting with {columns[0].header!r}")
    return out


def _format_number(value: Any, column: SheetColumn, name: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(str(value).strip())
        except ValueError:
            raise ArgumentError(f"{name}: {column.header}", value, "a number") from None
    if value != value or value < 0:
        raise ArgumentError(f"{name}: {column.header}", value, "a number >= 0")
    if column.kind == "integer":
        if float(value) != int(value):
            raise ArgumentError(f"{name}: {column.header}", value, "a whole number")
        return str(int(value))
    # 15 significant digits: what every client stores of a double (openpyxl writes 16, Excel 17), so the token
    # reads the same from a file written by any of them as from the evaluator
    return format(float(value), ".15g")


def _token(row: Sequence[Any], headers: Sequence[Any], columns: Sequence[SheetColumn], what: str) -> str:
    cols = _columns_for(headers, columns, what)
    name = row[0] if row else None
    if _blank(name):
        raise ArgumentError(what, name, f"a {what} name in the first column")
    name = str(name).strip()
    parts = [_escape(name)]
    for col, value in zip(cols, row):
        if col is None or col.field is None or _blank(value):
            continue
        text = _escape(str(value).strip()) if col.kind == "text" else _format_number(value, col, name)
        parts.append(f"{col.key}={text}")
    return "|".join(parts)


def model_token(row: Sequence[Any], headers: Sequence[Any] = MODEL_HEADERS) -> str:
    """The spec token of one Models-sheet row (blank cells are left out: they fall back to the bundled catalog)."""
    return _token(row, headers, MODEL_COLUMNS, "model")


def gpu_token(row: Sequence[Any], headers: Sequence[Any] = GPU_HEADERS) -> str:
    """The spec token of one GPUs-sheet row."""
    return _token(row, headers, GPU_COLUMNS, "gpu")


def find_row(name: Any, table: Sequence[Sequence[Any]], what: str) -> tuple[list[Any], list[Any]]:
    """``(headers, row)`` of the row named ``name`` (case-insensitive) in a sheet range whose first row is the
    header row. An unknown name is an error listing the names the sheet has."""
    if not table:
        raise ArgumentError(f"{what}s", None, f"the {what} sheet's range with its header row")
    headers, rows = list(table[0]), [list(r) for r in table[1:]]
    key = str(name).strip().lower() if not _blank(name) else ""
    for r in rows:
        if r and not _blank(r[0]) and str(r[0]).strip().lower() == key:
            return headers, r
    canonical = _bundled_name(name, what)  # an alias of a bundled entry ("h200" for h200-sxm) finds its row
    if canonical is not None and canonical.lower() != key:
        for r in rows:
            if r and not _blank(r[0]) and str(r[0]).strip().lower() == canonical.lower():
                return headers, r
    names = [str(r[0]) for r in rows if r and not _blank(r[0])]
    more = " ..." if len(names) > 12 else ""
    raise ArgumentError(what, name, f"a name on the {what} sheet ({', '.join(names[:12])}{more})")


def _bundled_name(name: Any, what: str) -> str | None:
    from planner import catalog

    try:
        return (catalog.get_model if what == "model" else catalog.get_gpu)(str(name)).name
    except (ArgumentError, OSError):
        return None


def is_token(text: Any) -> bool:
    return isinstance(text, str) and "|" in text


def parse_token(token: str) -> tuple[str, dict[str, str]]:
    """``(name, {key: raw value})`` of a spec token."""
    head, *rest = token.split("|")
    values: dict[str, str] = {}
    for part in rest:
        key, sep, value = part.partition("=")
        if not sep or not key:
            raise ArgumentError("spec", token, "name|key=value|... as MODEL_SPEC or GPU_SPEC writes it")
        values[key] = _unescape(value)
    return _unescape(head), values


def _apply(token: str, columns: Sequence[SheetColumn], bundled: Any, what: str) -> tuple[dict[str, Any], str]:
    name, values = parse_token(token)
    by_key = {c.key: c for c in columns}
    fields: dict[str, Any] = {}
    for key, raw in values.items():
        col = by_key.get(key)
        if col is None or col.field is None:
            raise ArgumentError(f"{what} {name}", key, f"one of {', '.join(c.key for c in columns if c.field)}")
        if col.kind == "text":
            fields[col.field] = raw
        else:
            try:  # decimal product: "8.03" x 1e9 is 8,030,000,000 exactly, as the catalog holds it
                number = float(Decimal(raw) * Decimal(repr(col.scale)))
            except (InvalidOperation, ValueError):
                raise ArgumentError(f"{what} {name}: {col.header}", raw, "a number") from None
            if bundled is not None and isinstance(getattr(bundled, col.field, None), (int, float)):
                exact = getattr(bundled, col.field)
                if math.isclose(number, exact, rel_tol=1e-12):  # the bundled value as the sheet shows it
                    number = exact
            fields[col.field] = int(round(number)) if col.kind == "integer" or col.field.endswith("_bytes") else number
    if bundled is None:
        missing = [c.header for c in columns if c.required and c.field not in fields]
        if missing:
            raise ArgumentError(f"{what} {name}", "not in the bundled catalog",
                                f"every required column filled on the {what} sheet (missing: {', '.join(missing)})")
    return fields, name


@lru_cache(maxsize=512)
def model_from_token(token: str) -> ModelSpec:
    """The model a Models-sheet token describes: the bundled entry of that name with the sheet's values over it.

    >>> model_from_token("llama-3.1-8b|kv_heads=1").num_key_value_heads
    1
    """
    from dataclasses import replace

    from planner import catalog

    name, _ = parse_token(token)
    try:
        bundled = catalog.get_model(name)
    except ArgumentError:
        bundled = None
    fields, name = _apply(token, MODEL_COLUMNS, bundled, "model")
    sliding = fields.pop("layer_types", None)
    layers = int(fields.get("num_hidden_layers", bundled.num_hidden_layers if bundled else 0))
    if sliding is not None and bundled is not None and int(sliding) == bundled.sliding_window_layers:
        sliding = None  # the bundled interleaving (which layers slide) stands: only the count is on the sheet
    if sliding is not None:
        if sliding > layers:
            raise ArgumentError(f"model {name}: Sliding layers [count]", sliding, f"at most the {layers} layers")
        fields["layer_types"] = (SLIDING_ATTENTION,) * int(sliding) + (FULL_ATTENTION,) * (layers - int(sliding))
    if bundled is not None:
        shape = ("num_hidden_layers", "hidden_size", "intermediate_size", "moe_intermediate_size", "num_experts",
                 "num_attention_heads", "num_key_value_heads", "head_dim", "vocab_size", "kv_lora_rank")
        if any(k in fields and fields[k] != getattr(bundled, k) for k in shape):
            # the bundled per-layer parameter breakdown was estimated from the bundled shapes: with a shape edited
            # on the sheet, pipeline stages take the even split of the weights (memory.stage_weight_bytes)
            fields.update(layer_params=(), embedding_params=None)
        return replace(bundled, **fields)
    return ModelSpec(name=name, source="the workbook's Models sheet", as_of="as entered", **fields)


@lru_cache(maxsize=256)
def gpu_from_token(token: str) -> GpuSpec:
    """The GPU a GPUs-sheet token describes (the bundled entry of that name with the sheet's values over it).

    >>> gpu_from_token("h100-sxm|hbm_gib=141").hbm_bytes == 141 * 2**30
    True
    """
    from dataclasses import replace

    from planner import catalog

    name, _ = parse_token(token)
    try:
        bundled = catalog.get_gpu(name)
    except ArgumentError:
        bundled = None
    fields, name = _apply(token, GPU_COLUMNS, bundled, "gpu")
    if bundled is not None:
        if "hbm_bytes" in fields and fields["hbm_bytes"] != bundled.hbm_bytes and "torch_total_bytes" not in fields:
            fields["torch_total_bytes"] = None  # an edited HBM with no engine-visible total: engines budget from it
        return replace(bundled, **fields)
    return GpuSpec(name=name, display_name=fields.pop("display_name", name), source="the workbook's GPUs sheet",
                   as_of="as entered", **fields)


def bundled_fallback(token: str, what: str) -> str:
    """Which spec fields a token leaves to the bundled catalog ("none" when the sheet gives all of them)."""
    from planner import catalog

    name, values = parse_token(token)
    columns = MODEL_COLUMNS if what == "model" else GPU_COLUMNS
    try:
        (catalog.get_model if what == "model" else catalog.get_gpu)(name)
    except ArgumentError:
        return "none (not in the bundled catalog)"
    left = [c.key for c in columns if c.field is not None and c.key not in values]
    return "bundled: " + ", ".join(left) if left else "none"


def catalog_row(spec: ModelSpec | GpuSpec) -> Mapping[str, Any]:
    """A bundled spec as its catalog-sheet row ``{column key: value}`` (what the template writes)."""
    columns = MODEL_COLUMNS if isinstance(spec, ModelSpec) else GPU_COLUMNS
    row: dict[str, Any] = {}
    for c in columns:
        if c.key == "name":
            row[c.key] = spec.name
        elif c.key in ("source", "as_of"):
            row[c.key] = getattr(spec, c.key)
        elif c.field == "layer_types":
            n = spec.sliding_window_layers if isinstance(spec, ModelSpec) else 0
            row[c.key] = n or None
        elif c.field is not None:
            v = getattr(spec, c.field)
            row[c.key] = v / c.scale if isinstance(v, (int, float)) and c.scale != 1.0 else v
    return row
