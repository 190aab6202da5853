"""Read what a serving engine allocated from its startup log, and back-solve the overhead it measured.

Pure functions on log text (the CLI reads the file). vLLM V1 lines::

    Model loading took 14.99 GiB and 5.1 seconds
    Available KV cache memory: 51.31 GiB
    GPU KV cache size: 420,288 tokens
    Maximum concurrency for 8,192 tokens per request: 51.30x

vLLM V0 lines (``Loading model weights took 14.96 GB``, ``# GPU blocks: 5691, # CPU blocks: 2048``,
``the rest of the memory reserved for KV Cache is 11.12GiB`` / ``kv_cache_size=3.81GiB``), and SGLang lines::

    Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.70 GB, mem usage=14.99 GB.
    KV Cache is allocated. #tokens: 413827, K size: 25.26 GB, V size: 25.26 GB
    max_total_num_tokens=413827, chunked_prefill_size=8192, ...

vLLM and SGLang print GiB (they divide by 2**30) even where the label says "GB".

The back-solved overhead (:func:`calibrate`) is what :func:`planner.engines.kv_capacity` takes as ``reserve_gib`` and
``weights_gib``: with them, a prediction for the same setup reproduces the logged allocation (§2.1, M9).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from planner.defaults import DEFAULT_BLOCK_SIZE
from planner.errors import ArgumentError
from planner.specs import GIB

LOG_FIELDS = (
    "engine",
    "weights_gib",
    "available_kv_gib",
    "kv_cache_tokens",
    "num_gpu_blocks",
    "max_concurrency",
    "max_model_len",
    "k_size_gib",
    "v_size_gib",
    "avail_mem_gib",
    "kv_bytes_per_token",
    "activation_gib",
    "non_torch_gib",
    "total_gpu_gib",
    "request_kv_gib",
)
"""The fields :func:`parse_log` can report (the ``field`` argument of ``CALIBRATE_LOG``)."""


@dataclass(frozen=True, kw_only=True)
class EngineLog:
    """What a startup log says the engine allocated (``None`` where the log does not say).

    ``kv_bytes_per_token`` is derived: K+V size / tokens (SGLang), or available KV / tokens (vLLM).
    """

    engine: str
    weights_gib: float | None = None
    available_kv_gib: float | None = None
    kv_cache_tokens: int | None = None
    num_gpu_blocks: int | None = None
    max_concurrency: float | None = None
    max_model_len: int | None = None
    k_size_gib: float | None = None
    v_size_gib: float | None = None
    avail_mem_gib: float | None = None
    kv_bytes_per_token: float | None = None
    activation_gib: float | None = None
    non_torch_gib: float | None = None
    total_gpu_gib: float | None = None
    request_kv_gib: float | None = None
    tokens_from_concurrency: bool = False
    """Whether ``kv_cache_tokens`` is ``concurrency × max_model_len`` from a lone concurrency line."""

    def get(self, field: str) -> float | str | None:
        """One field by name (case-insensitive), as ``CALIBRATE_LOG`` returns it."""
        name = str(field).strip().lower()
        if name not in LOG_FIELDS:
            raise ArgumentError("field", field, "one of " + ", ".join(LOG_FIELDS))
        return getattr(self, name)


_NUM = r"([0-9][0-9,]*(?:\.[0-9]+)?)"
_NUM_SIGNED = r"(-?[0-9][0-9,]*(?:\.[0-9]+)?)"

_PATTERNS = {
    "vllm_weights": re.compile(
        r"(?:Model loading took|Loading model weights took|model weights take|weights memory:)\s*" + _NUM + r"\s*Gi?B"
    ),
    "vllm_avail": re.compile(r"Available KV cache memory:\s*" + _NUM_SIGNED + r"\s*GiB"),
    "vllm_v0_avail": re.compile(
        r"(?:reserved for KV Cache is|kv_cache_size=|available_kv_cache_memory)\s*" + _NUM + r"\s*GiB", re.IGNORECASE
    ),
    "vllm_tokens": re.compile(r"GPU KV cache size:\s*" + _NUM + r"\s*tokens"),
    "vllm_v0_tokens": re.compile(r"maximum number of tokens that can be stored in KV cache \(" + _NUM + r"\)"),
    "vllm_blocks": re.compile(r"#?\s*GPU blocks:\s*" + _NUM),
    "vllm_concurrency": re.compile(r"Maximum concurrency for\s*" + _NUM + r"\s*tokens per request:\s*" + _NUM + "x"),
    "activation": re.compile(
        r"(?:torch peak memory increase:|PyTorch activation peak memory(?: takes)?)\s*" + _NUM + r"\s*GiB"
    ),
    "non_torch": re.compile(
        r"(?:non-torch forward increase memory:|non_torch_memory takes|Memory profiling results:.*?non_torch_memory="
        r"|INFO .*\] non_torch_memory)\s*" + _NUM + r"\s*GiB"
    ),
    "total": re.compile(r"total_gpu_memory\s*[=(]?\s*" + _NUM + r"\s*GiB|total_memory=" + _NUM + r"\s*GiB"),
    "request_kv": re.compile(
        r"max seq len \(" + _NUM + r"\), \(" + _NUM + r"\s*GiB KV cache is needed"
    ),
    "sgl_alloc": re.compile(
        r"KV Cache is allocated\..*?#tokens:\s*" + _NUM + r",\s*K size:\s*" + _NUM + r"\s*GB,\s*V size:\s*" + _NUM
    ),
    "sgl_total": re.compile(r"max_total_num_tokens=\s*" + _NUM),
    "sgl_weights": re.compile(r"Load weight end\..*?avail mem=\s*" + _NUM + r"\s*GB,\s*mem usage=\s*" + _NUM),
    "sgl_context": re.compile(r"context_len=\s*" + _NUM),
}


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def _last(name: str, text: str) -> re.Match | None:
    found = list(_PATTERNS[name].finditer(text))
    return found[-1] if found else None


def _value(name: str, text: str, group: int = 1) -> float | None:
    match = _last(name, text)
    if match is None:
        return None
    picked = match.group(group) or next((g for g in match.groups() if g), None)
    return _num(picked) if picked else None


def parse_log(text: str) -> EngineLog:
    """Parse a vLLM or SGLang startup log (pasted text); the last occurrence of each line wins.

    >>> log = parse_log('''Model loading took 14.99 GiB and 4.2 seconds
    ... Available KV cache memory: 51.31 GiB
    ... GPU KV cache size: 420,288 tokens
    ... Maximum concurrency for 8,192 tokens per request: 51.30x''')
    >>> log.engine, log.kv_cache_tokens, log.max_model_len, round(log.kv_bytes_per_token)
    ('vllm', 420288, 8192, 131086)
    >>> parse_log("KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB").kv_cache_tokens
    367404

    A log that keeps only the concurrency line gives its tokens as concurrency x max_model_len (V0 and
    full-attention V1: ``tokens / max_model_len``, printed to 2 decimals, so to within ±0.005·max_model_len; for
    hybrid sliding-window models it is not the logged count, and :func:`run_case` compares the concurrency instead):

    >>> parse_log("Maximum concurrency for 40000 tokens per request: 52.89x").kv_cache_tokens
    2115600
    """
    if not isinstance(text, str) or not text.strip():
        raise ArgumentError("log_text", text, "the text of a vLLM or SGLang startup log")
    alloc, total = _last("sgl_alloc", text), _last("sgl_total", text)
    sgl_weights = _last("sgl_weights", text)
    if alloc or total or sgl_weights:
        tokens = int(_num(alloc.group(1))) if alloc else int(_num(total.group(1))) if total else None
        if total:
            tokens = int(_num(total.group(1)))
        k = _num(alloc.group(2)) if alloc else None
        v = _num(alloc.group(3)) if alloc else None
        context = _last("sgl_context", text)
        per_token = None
        if alloc and k is not None and v is not None and int(_num(alloc.group(1))):
            per_token = (k + v) * GIB / int(_num(alloc.group(1)))
        return EngineLog(
            engine="sglang",
            weights_gib=_num(sgl_weights.group(2)) if sgl_weights else None,
            avail_mem_gib=_num(sgl_weights.group(1)) if sgl_weights else None,
            available_kv_gib=(k + v) if k is not None and v is not None else None,
            kv_cache_tokens=tokens,
            k_size_gib=k,
            v_size_gib=v,
            max_model_len=int(_num(context.group(1))) if context else None,
            kv_bytes_per_token=per_token,
        )
    weights = _value("vllm_weights", text)
    avail_gib = _value("vllm_avail", text)
    v1 = avail_gib is not None or _last("vllm_tokens", text) is not None or _last("request_kv", text) is not None
    if avail_gib is None:
        avail_gib = _value("vllm_v0_avail", text)
    blocks = _value("vllm_blocks", text)
    conc = _last("vllm_concurrency", text)
    tokens_v = _value("vllm_tokens", text)
    if tokens_v is None:
        tokens_v = _value("vllm_v0_tokens", text)
    if tokens_v is None and blocks is not None:
        tokens_v = blocks * DEFAULT_BLOCK_SIZE  # V0 logs "# GPU blocks" in its default 16-token blocks
    from_concurrency = tokens_v is None and conc is not None
    if from_concurrency and conc is not None:  # only "Maximum concurrency for L tokens per request: Cx"
        tokens_v = round(_num(conc.group(1)) * _num(conc.group(2)))  # C·L, to ±0.005·L (C has 2 decimals)
    request = _last("request_kv", text)
    if weights is None and avail_gib is None and tokens_v is None and conc is None and request is None:
        raise ArgumentError(
            "log_text", text[:60] + ("..." if len(text) > 60 else ""),
            "a vLLM or SGLang startup log (no 'GPU KV cache size', 'Available KV cache memory', "
            "'max_total_num_tokens' or 'KV Cache is allocated' line found)",
        )
    tokens = int(tokens_v) if tokens_v is not None else None
    per_token = (avail_gib * GIB / tokens) if avail_gib is not None and avail_gib > 0 and tokens else None
    max_len = int(_num(conc.group(1))) if conc else None
    request_gib = None
    if request is not None:
        max_len = max_len or int(_num(request.group(1)))
        request_gib = _num(request.group(2))
        if per_token is None:  # "(X GiB KV cache is needed" for one request of max_model_len tokens
            per_token = request_gib * GIB / int(_num(request.group(1)))
    return EngineLog(
        engine="vllm" if v1 else "vllm-v0",
        weights_gib=weights,
        available_kv_gib=avail_gib,
        kv_cache_tokens=tokens,
        num_gpu_blocks=int(blocks) if blocks is not None else None,
        max_concurrency=_num(conc.group(2)) if conc else None,
        tokens_from_concurrency=tokens is not None and conc is not None and from_concurrency,
        max_model_len=max_len,
        kv_bytes_per_token=per_token,
        request_kv_gib=request_gib,
        activation_gib=_value("activation", text),
        non_torch_gib=_value("non_torch", text),
        total_gpu_gib=_value("total", text),
    )


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """The measured overheads of one setup, back-solved from its log.

    ``reserve_gib``: vLLM/TRT-LLM activation + non-torch memory; SGLang: memory gone between the driver total and
    the post-load free memory besides the weights (CUDA context, NCCL). Pass ``reserve_gib`` and ``weights_gib`` to
    :func:`planner.engines.kv_capacity` to reproduce the log.
    """

    engine: str
    weights_gib: float
    reserve_gib: float
    available_kv_gib: float
    kv_cache_tokens: int | None
    predicted_reserve_gib: float
    predicted_weights_gib: float


def calibrate(log: EngineLog, model, gpu, **setup) -> Calibration:
    """Back-solve the overhead of the setup that produced ``log`` (M9, inverted).

    - vLLM: ``reserve = HBM·util − weights − available_kv``.
    - SGLang: ``reserve = HBM − weights − (KV + HBM·(1 − mem_fraction_static))``.
    - TRT-LLM: ``reserve = HBM − weights − KV/free_gpu_memory_fraction``.

    Missing log values are derived (available KV from tokens × KV bytes per token; weights from the model).

    >>> log = parse_log("Model loading took 14.99 GiB\\nAvailable KV cache memory: 51.31 GiB\\n"
    ...                 "GPU KV cache size: 420,288 tokens")
    >>> round(calibrate(log, "llama-3.1-8b", "h100-sxm").reserve_gib, 2)
    4.96
    """
    from planner.engines import kv_capacity

    engine = setup.pop("engine", None) or ("vllm-v0" if log.engine == "vllm-v0" else log.engine)
    base = kv_capacity(model, gpu, engine=engine, **setup)
    weights = log.weights_gib if log.weights_gib is not None else base.weights_gib
    if log.available_kv_gib is not None:
        avail = log.available_kv_gib
    elif log.kv_cache_tokens is not None:
        avail = log.kv_cache_tokens * base.kv_bytes_per_token / GIB
    else:
        raise ArgumentError("log", "no KV size", "a log with an available-KV or KV-tokens line")
    from planner.catalog import get_gpu
    from planner.specs import GpuSpec

    card = gpu if isinstance(gpu, GpuSpec) else get_gpu(gpu)
    hbm = card.engine_total_bytes / GIB
    fraction = base.memory_fraction
    if base.engine == "sglang":
        reserve = hbm - weights - (avail + hbm * (1 - fraction))
    elif base.engine == "trtllm":
        reserve = hbm - weights - avail / fraction
    else:
        reserve = hbm * fraction - weights - avail
    return Calibration(
        engine=base.engine,
        weights_gib=weights,
        reserve_gib=reserve,
        available_kv_gib=avail,
        kv_cache_tokens=log.kv_cache_tokens,
        predicted_reserve_gib=base.reserve_gib,
        predicted_weights_gib=base.weights_gib,
    )


# ---------------------------------------------------------------------------------------------------------------
# Calibration cases: predicted against reported

SETUP_KEYS = (
    "tp", "pp", "gpu_memory_utilization", "kv_cache_dtype", "weight_dtype", "engine", "engine_version",
    "max_model_len", "max_num_batched_tokens", "max_num_seqs", "block_size", "sampler",
)


@dataclass(frozen=True, kw_only=True)
class CaseResult:
    """One calibration case: what the log reports, what :func:`planner.engines.kv_capacity` predicts without the
    measured overheads, and the prediction after :func:`calibrate` (with them). Errors are ``predicted/reported − 1``.
    """

    case_id: str
    engine: str
    reported: EngineLog
    split: str = ""
    predicted_weights_gib: float | None
    predicted_available_kv_gib: float | None
    predicted_kv_cache_tokens: int | None
    predicted_kv_bytes_per_token: float
    calibrated_kv_cache_tokens: int | None

    @staticmethod
    def _err(predicted: float | None, reported: float | None) -> float | None:
        if predicted is None or reported is None or reported == 0:
            return None
        return predicted / reported - 1

    @property
    def weights_error(self) -> float | None:
        return self._err(self.predicted_weights_gib, self.reported.weights_gib)

    @property
    def available_kv_error(self) -> float | None:
        return self._err(self.predicted_available_kv_gib, self.reported.available_kv_gib)

    @property
    def kv_tokens_error(self) -> float | None:
        return self._err(self.predicted_kv_cache_tokens, self.reported.kv_cache_tokens)

    @property
    def kv_bytes_per_token_error(self) -> float | None:
        return self._err(self.predicted_kv_bytes_per_token, self.reported.kv_bytes_per_token)

    @property
    def calibrated_tokens_error(self) -> float | None:
        return self._err(self.calibrated_kv_cache_tokens, self.reported.kv_cache_tokens)

    @property
    def capacity_error(self) -> float | None:
        """The KV capacity error: logged tokens where the log has them, else the available KV memory (GiB) where it
        is positive (a log with no token line still states the capacity in bytes)."""
        if self.kv_tokens_error is not None:
            return self.kv_tokens_error
        if self.reported.available_kv_gib is not None and self.reported.available_kv_gib > 0:
            return self.available_kv_error
        return None


def run_case(case: dict, model, gpu) -> CaseResult:
    """Predict one case (``model`` and ``gpu`` resolved by the caller; ``gpu`` may be ``None`` when the source does not
    say) and compare with its log. ``case`` holds the setup keys of :data:`SETUP_KEYS` and ``log``.

    >>> r = run_case({"engine": "vllm", "engine_version": "0.19.0", "gpu_memory_utilization": 0.95,
    ...               "max_model_len": 8192, "log": "Available KV cache memory: 58.11 GiB\\n"
    ...               "GPU KV cache size: 476,000 tokens"}, "llama-3.1-8b", "h100-sxm")
    >>> round(r.kv_bytes_per_token_error, 4), round(r.calibrated_tokens_error, 3)
    (-0.0001, 0.0)

    A log that keeps only the concurrency line states ``C = num_blocks / Σ_groups blocks_per_request``
    (``kv_cache_utils.get_max_concurrency_for_kv_cache_config``, vLLM 0.10.1.1). With one KV group ``C·L`` is the
    logged token count; with several (sliding + full attention) it is not, so the prediction is compared in the same
    unit: predicted ``C·L`` (no calibration: the log gives no token count in the engine's own unit). gpt-oss-20b on
    an L4 (Ray Serve LLM's tutorial, 5.22x at 32,768 tokens): 10,941 blocks / (2,048 + 137) blocks = 5.01x.

    >>> r = run_case({"engine": "vllm", "engine_version": "0.10.1.1", "max_model_len": 32768,
    ...               "max_num_batched_tokens": 2048, "max_num_seqs": 256,
    ...               "log": "Maximum concurrency for 32,768 tokens per request: 5.22x"}, "gpt-oss-20b", "l4")
    >>> r.reported.kv_cache_tokens, r.predicted_kv_cache_tokens, r.calibrated_kv_cache_tokens
    (171049, 164080, None)
    """
    from planner.engines import kv_capacity

    log = parse_log(case["log"])
    setup = {k: case[k] for k in SETUP_KEYS if case.get(k) is not None}
    setup.setdefault("engine", log.engine)
    if gpu is None:
        from planner.catalog import get_gpu

        probe = kv_capacity(model, get_gpu("h100-sxm"), **setup)
        return CaseResult(
            case_id=str(case.get("id", "")), engine=probe.engine, reported=log, split=str(case.get("split", "")),
            predicted_weights_gib=probe.weights_gib, predicted_available_kv_gib=None,
            predicted_kv_cache_tokens=None, predicted_kv_bytes_per_token=probe.kv_bytes_per_logged_token,
            calibrated_kv_cache_tokens=None,
        )
    cap = kv_capacity(model, gpu, **setup)
    calibrated = None
    predicted_tokens = cap.kv_cache_tokens
    if log.tokens_from_concurrency and cap.kv_groups > 1 and log.max_model_len:
        # A lone concurrency line of a hybrid (sliding + full attention) model: vLLM divides its blocks by the blocks
        # one request needs over all groups, which a token count does not carry; compare the concurrency.
        predicted_tokens = round(cap.max_concurrency * log.max_model_len)
    elif log.available_kv_gib is not None or log.kv_cache_tokens is not None:
        cal = calibrate(log, model, gpu, **setup)
        again = kv_capacity(model, gpu, reserve_gib=cal.reserve_gib, weights_gib=cal.weights_gib, **setup)
        calibrated = again.kv_cache_tokens
    return CaseResult(
        case_id=str(case.get("id", "")), engine=cap.engine, reported=log, split=str(case.get("split", "")),
        predicted_weights_gib=cap.weights_gib, predicted_available_kv_gib=cap.available_kv_gib,
        predicted_kv_cache_tokens=predicted_tokens, predicted_kv_bytes_per_token=cap.kv_bytes_per_logged_token,
        calibrated_kv_cache_tokens=calibrated,
    )


def _fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:,.{digits}f}"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:+.1f}%"


def _median(values: list[float]) -> float | None:
    v = sorted(values)
    n = len(v)
    return None if not n else (v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2)


def accuracy_summary(results: list[CaseResult], *, split: str | None = None) -> dict[str, float | int | None]:
    """Counts and error statistics over the cases (absolute relative errors), optionally of one split.

    ``capacity``: the KV capacity (:attr:`CaseResult.capacity_error`: tokens, else available GiB); ``tokens``: the
    cases whose log has a token line.

    >>> accuracy_summary([])["token_cases"]
    0
    """
    if split is not None:
        results = [r for r in results if r.split == split]
    tokens = [abs(r.kv_tokens_error) for r in results if r.kv_tokens_error is not None]
    capacity = [abs(r.capacity_error) for r in results if r.capacity_error is not None]
    per_token = [abs(r.kv_bytes_per_token_error) for r in results if r.kv_bytes_per_token_error is not None]
    calibrated = [abs(r.calibrated_tokens_error) for r in results if r.calibrated_tokens_error is not None]
    return {
        "cases": len(results),
        "token_cases": len(tokens),
        "tokens_within_10pct": sum(1 for e in tokens if e <= 0.10),
        "tokens_median_abs_error": _median(tokens),
        "capacity_cases": len(capacity),
        "capacity_within_10pct": sum(1 for e in capacity if e <= 0.10),
        "capacity_median_abs_error": _median(capacity),
        "per_token_cases": len(per_token),
        "per_token_within_0p5pct": sum(1 for e in per_token if e <= 0.005),
        "calibrated_max_abs_error": max(calibrated) if calibrated else None,
    }


def accuracy_markdown(results: list[CaseResult], cases: list[dict]) -> str:
    """The table of ``docs/accuracy.md``: predicted against reported per case, then the summary."""
    notes = {str(c.get("id")): c for c in cases}
    lines = [
        "| Case | Split | Engine | Weights GiB pred / log (err) | Available KV GiB pred / log (err) "
        "| KV tokens pred / log (err) | KV bytes/token err | Calibrated tokens err | Source |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        c = notes.get(r.case_id, {})
        src = c.get("source", {})
        ref = src.get("ref") or src.get("path", "").rsplit("/", 1)[-1]
        link = f"[{src.get('repo', '')} {ref}]({src.get('url', '')})" if src else ""
        rep = r.reported
        per_token = _pct(r.kv_bytes_per_token_error)
        if "kv_bytes_per_token" in c.get("expect", {}):  # the memory line and the token count are different ranks'
            per_token = f"n/d: ranks differ (raw {per_token})"
        lines.append(
            f"| {r.case_id} | {r.split} | {r.engine} {c.get('engine_version', '')} "
            f"| {_fmt(r.predicted_weights_gib)} / {_fmt(rep.weights_gib)} ({_pct(r.weights_error)}) "
            f"| {_fmt(r.predicted_available_kv_gib)} / {_fmt(rep.available_kv_gib)} ({_pct(r.available_kv_error)}) "
            f"| {_fmt(r.predicted_kv_cache_tokens, 0)} / {_fmt(rep.kv_cache_tokens, 0)} ({_pct(r.kv_tokens_error)}) "
            f"| {per_token} | {_pct(r.calibrated_tokens_error)} | {link} |"
        )
    return "\n".join(lines) + "\n"


def report(log_text: str, model=None, gpu=None, **setup) -> dict[str, float | int | str | None]:
    """What the log says the engine allocated and, given the model and GPU, the back-solved overhead with the
    prediction before and after calibration (the ``planner calibrate`` output). When the log states the GPU's total
    memory (``total_gpu_memory``, ``total_memory=``), that total replaces the catalog's. The calibrated tokens match
    the log to the rounding of its two-decimal GiB figures.

    >>> out = report("Model loading took 14.99 GiB\\nAvailable KV cache memory: 51.31 GiB\\n"
    ...              "GPU KV cache size: 420,288 tokens", "llama-3.1-8b", "h100-sxm")
    >>> out["kv_cache_tokens"], round(out["reserve_gib"], 2), out["calibrated_kv_cache_tokens"]
    (420288, 4.96, 420320)
    """
    from planner.engines import kv_capacity

    log = parse_log(log_text)
    out: dict[str, float | int | str | None] = {name: log.get(name) for name in LOG_FIELDS}
    if model is None or gpu is None:
        return out
    setup = {k: v for k, v in setup.items() if v is not None}
    setup.setdefault("engine", log.engine)
    if log.total_gpu_gib:
        import dataclasses

        from planner.catalog import get_gpu

        gpu = dataclasses.replace(get_gpu(gpu), torch_total_bytes=int(log.total_gpu_gib * GIB),
                                  torch_total_basis="engine log")
    before = kv_capacity(model, gpu, **setup)
    cal = calibrate(log, model, gpu, **setup)
    after = kv_capacity(model, gpu, reserve_gib=cal.reserve_gib, weights_gib=cal.weights_gib, **setup)
    out.update(
        engine=before.engine,
        engine_version=before.engine_version,
        reserve_gib=cal.reserve_gib,
        predicted_reserve_gib=before.reserve_gib,
        predicted_weights_gib=before.weights_gib,
        predicted_available_kv_gib=before.available_kv_gib,
        predicted_kv_cache_tokens=before.kv_cache_tokens,
        predicted_kv_bytes_per_token=before.kv_bytes_per_logged_token,
        calibrated_kv_cache_tokens=after.kv_cache_tokens,
        calibrated_max_concurrency=after.max_concurrency,
    )
    return out
