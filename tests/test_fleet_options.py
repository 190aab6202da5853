"""What should we run this on: the Options sheet and ``planner size``'s "Fleet options" (issue #11 item 4).

Every case goes through the real CLI (``planner size --format json``), which reads the evaluated Options cells.
Expected values are worked out here by hand from catalog facts (``planner/data/models.json`` and ``gpus.json``
read as JSON: layers, KV heads, head size, prices) and the plan's own numbers, never from the search under test.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLANNER = Path(sys.executable).with_name("planner")
HOURS_PER_MONTH = 365.25 * 24 / 12  # an average month, as a price sheet bills an always-on GPU
DTYPE_BYTES = {"auto": 2, "bf16": 2, "fp8": 1}

QWEN = """
[plan]
name = "qwen3-235b"
utilization_threshold = 0.8

[[fleets]]
# sized the way the issue found it: 8-GPU replicas of the released bf16 checkpoint
name = "qwen-h200"
model = "qwen3-235b-a22b"
gpu = "h200-sxm"
tp = 8
replicas = 2
kv_dtype = "auto"
weight_dtype = "auto"

[[routes]]
name = "assistant"
kind = "interactive"
peak_qps = 4
avg_input_tokens = 2000
avg_output_tokens = 400
p95_context_tokens = 8000
ttft_slo_s = 2.0
tpot_slo_s = 0.05
backend = "qwen-h200"
"""


def _catalog(name: str) -> dict[str, dict]:
    data = json.loads((ROOT / "planner" / "data" / name).read_text(encoding="utf-8"))
    entries = next(v for v in data.values() if isinstance(v, list))
    return {e["id"]: e for e in entries}


def _size(path: Path) -> dict:
    proc = subprocess.run([str(PLANNER), "size", str(path), "--format", "json"], capture_output=True, text=True,
                          timeout=600, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    return json.loads(proc.stdout)


def _kv_per_token_per_replica(model: dict, tp: int, kv_dtype: str) -> float:
    """K and V of every layer, each GPU holding ceil(KV heads / TP) heads (replicated when TP > KV heads)."""
    c = model["config"]
    heads_per_gpu = -(-c["num_key_value_heads"] // tp)
    return 2 * c["num_hidden_layers"] * heads_per_gpu * tp * c["head_dim"] * DTYPE_BYTES[kv_dtype]


def test_qwen3_235b_on_8_gpu_replicas_gets_a_cheaper_smaller_replica_named(tmp_path: Path) -> None:
    """The issue's example: a Qwen3-235B route sized at 8-GPU H200 replicas. The options must name, on the same GPU,
    a fleet of smaller replicas that meets the SLOs for less; its cost and KV per token are checked by hand."""
    path = tmp_path / "qwen.toml"
    path.write_text(QWEN, encoding="utf-8")
    report = _size(path)
    qwen = _catalog("models.json")["qwen3-235b-a22b"]
    price = _catalog("gpus.json")["h200-sxm"]["usd_per_gpu_hour"]
    now_usd = 2 * 8 * price * HOURS_PER_MONTH  # the fleet as it is: 2 replicas x TP 8
    options = [o for o in report["fleet_options"] if o["fleet"] == "qwen-h200"]
    assert len(options) == 4
    own = next(o for o in options if o["only_gpu"] == "h200-sxm")
    assert own["gpu"] == "h200-sxm" and own["rank"] == 1
    per_replica = own["tp"] * own["pp"]
    assert per_replica < 8  # smaller replicas than the fleet's 8 GPUs
    assert own["gpus"] == own["replicas"] * per_replica or own["disaggregated"]
    assert own["monthly_cost_usd"] == pytest.approx(own["gpus"] * price * HOURS_PER_MONTH, rel=1e-12)
    assert own["monthly_cost_usd"] < now_usd
    assert own["saving_monthly_usd"] == pytest.approx(now_usd - own["monthly_cost_usd"], rel=1e-9)
    assert own["cells"]["cost_now_monthly_usd"] == pytest.approx(now_usd, rel=1e-12)
    # KV per token: TP 8 replicates Qwen3's 4 KV heads on 8 GPUs, so its replicas hold twice the KV per token
    kv_tp8 = _kv_per_token_per_replica(qwen, 8, "auto")
    assert kv_tp8 == 2 * 94 * 8 * 128 * 2  # 385,024 B
    kv_own = _kv_per_token_per_replica(qwen, int(own["tp"]), own["kv_cache_dtype"])
    assert own["kv_bytes_per_token"] == kv_own
    assert kv_own <= 0.5 * kv_tp8
    # the weights fit the smaller replica: params x bytes per param below its HBM
    hbm_bytes = _catalog("gpus.json")["h200-sxm"]["hbm_bytes"] * per_replica
    weight_bytes = qwen["params_total"] * DTYPE_BYTES[own["weight_dtype"]]
    assert weight_bytes < hbm_bytes
    # the cheapest over every GPU costs no more than the cheapest on H200
    best = next(o for o in options if o["rank"] == 1 and not o["only_gpu"])
    assert best["monthly_cost_usd"] <= own["monthly_cost_usd"]


def test_seed_options_are_ranked_priced_and_disaggregation_shows_its_kv_transfer(tmp_path: Path) -> None:
    """The seed: the completion fleet (400 req/s of 1,500 in / 40 out, prefill-heavy) and its standby (the routes
    that fail over to it). Ranks are cheapest first, each cost is GPUs x the catalog price x the hours of a month,
    a standby fleet is sized for the routes that fail over to it, and a disaggregated option's KV transfer is
    rate x input tokens x KV bytes per token."""
    report = _size(ROOT / "samples" / "seed.toml")
    gpus = _catalog("gpus.json")
    llama = _catalog("models.json")["llama-3.1-70b"]
    options = report["fleet_options"]
    assert {o["fleet"] for o in options} == {"llama70b-h100", "llama70b-h200"}
    for fleet in ("llama70b-h100", "llama70b-h200"):
        rows = [o for o in options if o["fleet"] == fleet]
        ranked = [o for o in rows if not o["only_gpu"]]
        assert [o["rank"] for o in ranked] == [1, 2, 3]
        costs = [o["monthly_cost_usd"] for o in ranked]
        assert costs == sorted(costs)
        for o in rows:
            assert o["monthly_cost_usd"] == pytest.approx(
                o["gpus"] * gpus[o["gpu"]]["usd_per_gpu_hour"] * HOURS_PER_MONTH, rel=1e-12)
            cells = o["cells"]
            # both fleets carry the completion route: 400 req/s (the standby in the H100 fleet's outage)
            assert cells["load_qps"] == 400 and cells["ttft_slo_s"] == 0.25 and cells["tpot_slo_s"] == 0.02
            assert cells["sized_qps"] == pytest.approx(400 / 0.8)
            if o["disaggregated"]:
                assert o["prefill_replicas"] + o["decode_replicas"] == o["replicas"]
                kv = _kv_per_token_per_replica(llama, 1, o["kv_cache_dtype"])  # the model's KV per token
                assert o["kv_transfer_gb_s"] == pytest.approx(400 / 0.8 * 1500 * kv / 1e9, rel=1e-9)
                assert o["binding"].startswith("TTFT/")
            else:
                assert o["binding"] in ("TTFT", "TPOT", "KV", "SEQS", "COMPUTE")
    own = [o for o in options if o["only_gpu"]]
    assert {o["gpu"] for o in own} == {"h100-sxm", "h200-sxm"}


BULK = """
[plan]
name = "bulk"
[[fleets]]
name = "batch"
model = "llama-3.1-8b"
gpu = "h100-sxm"
tp = 1
replicas = 4
[[routes]]
name = "summaries"
kind = "bulk"
peak_qps = 5
avg_input_tokens = 3000
avg_output_tokens = 300
p95_context_tokens = 4000
ttft_slo_s = 30
tpot_slo_s = 0.2
backend = "batch"
"""


def test_a_bulk_only_fleet_is_sized_at_throughput_without_pools(tmp_path: Path) -> None:
    """Bulk routes are sized at the offline maximum (the Results rule), so their fleet's options carry no latency
    SLO, bind on the engine's throughput and are never split into prefill and decode pools."""
    path = tmp_path / "bulk.toml"
    path.write_text(BULK, encoding="utf-8")
    options = _size(path)["fleet_options"]
    assert len(options) == 4
    for o in options:
        assert o["cells"]["ttft_slo_s"] == 0 and o["cells"]["tpot_slo_s"] == 0
        assert o["disaggregated"] is False and o["cells"]["disaggregated_gpus"] == 0
        assert o["binding"] in ("KV", "SEQS", "COMPUTE")


def test_the_text_report_has_a_fleet_options_section(tmp_path: Path) -> None:
    path = tmp_path / "qwen.toml"
    path.write_text(QWEN, encoding="utf-8")
    proc = subprocess.run([str(PLANNER), "size", str(path)], capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    section = proc.stdout[proc.stdout.index("Fleet options for qwen-h200"):]
    assert "on h200-sxm" in section and "Options!D4" in section and "/Mtok" in section


@pytest.mark.parametrize("model,rate,i,o,ttft,tpot,own", [
    ("llama-3.1-8b", 40.0, 1000, 200, 1.0, 0.04, "h100-sxm"),
    ("llama-3.1-70b", 500.0, 1500, 40, 0.25, 0.02, "h200-sxm"),
    ("qwen3-235b-a22b", 5.0, 2000, 400, 2.0, 0.05, "h200-sxm"),
    ("mixtral-8x7b", 6.0, 4800, 670, 0.0, 0.0, "a100-80gb-sxm"),
])
def test_skipping_candidates_never_changes_the_cheapest(model, rate, i, o, ttft, tpot, own) -> None:
    """The search skips candidates whose lower bound cannot beat the third cheapest (or the cheapest on the fleet's
    own GPU); sizing every candidate must give the same three cheapest and the same cheapest on that GPU."""
    from planner.serving.options import fleet_choices

    args = dict(request_rate=rate, ttft_slo_s=ttft, tpot_slo_s=tpot, input_tokens=i, output_tokens=o)
    every = fleet_choices(model, **args)
    pruned = fleet_choices(model, **args, top=3, keep_gpu=own)
    assert len(pruned) < len(every)  # it does skip some
    assert pruned[:3] == every[:3]
    assert next(c for c in pruned if c.gpu == own) == next(c for c in every if c.gpu == own)
