"""Rule H (docs/serving.md, session 17, latency41): GPUs without peer access that share one PCIe uplink stage every
collective through host memory, so each rank gets 1/(tp·pp) of the link. Values worked by hand."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.catalog import get_gpu, get_model
from planner.serving import accuracy
from planner.serving.api import default_calibration
from planner.serving.step import build_replica, host_staged_link_bytes_per_s, step_parts


def test_share_of_the_uplink() -> None:
    # 32 GB/s a direction over 8 ranks: 4 GB/s each; one rank keeps the whole link
    assert host_staged_link_bytes_per_s(32e9, ranks=8) == pytest.approx(4e9)
    assert host_staged_link_bytes_per_s(32e9, ranks=2) == pytest.approx(16e9)
    assert host_staged_link_bytes_per_s(32e9, ranks=1) == pytest.approx(32e9)


def _replica(*, host_staged: bool):
    cal = default_calibration()
    r = build_replica(get_model("llama-3.1-70b"), get_gpu("rtx-4090"), tp=8, context_tokens=435, input_tokens=280,
                      engine="vllm-v0", calibration=cal, host_staged=host_staged)
    return r, cal


def test_replica_link() -> None:
    # the RTX 4090's PCIe Gen4 x16: 64 GB/s both directions, 32 GB/s one; staged over 8 ranks, 4 GB/s
    off, _ = _replica(host_staged=False)
    on, _ = _replica(host_staged=True)
    assert off.link_bytes_per_s == pytest.approx(32e9)
    assert on.link_bytes_per_s == pytest.approx(4e9)
    assert on.link_is_pcie and off.link_is_pcie


def test_decode_step_collectives_by_hand() -> None:
    # Llama-3.1-70B (80 layers, hidden 8,192) at TP 8, 100 decoding sequences: M·h·2 B = 1,638,400 B a message,
    # two all-reduces a layer (attention, MLP). Ring over each link: 2·7/8·1,638,400/32e9 = 89.6 us of bandwidth;
    # staged over the shared uplink: 2·7·1,638,400/32e9 = 716.8 us. Each plus alpha (pcie_allreduce_latency_s).
    off, cal = _replica(host_staged=False)
    on, _ = _replica(host_staged=True)
    alpha = cal.pcie_allreduce_latency_s
    fixed_off, body_off, comm_off = step_parts(off, cal, decode_seqs=100)
    fixed_on, body_on, comm_on = step_parts(on, cal, decode_seqs=100)
    assert comm_off == pytest.approx(160 * (alpha + 89.6e-6), rel=1e-9)
    assert comm_on == pytest.approx(160 * (alpha + 716.8e-6), rel=1e-9)
    assert (fixed_on, body_on) == (fixed_off, body_off)  # only the collectives move


def test_one_gpu_unchanged() -> None:
    cal = default_calibration()
    kw = dict(tp=1, context_tokens=435, input_tokens=280, engine="vllm-v0", calibration=cal)
    a = build_replica(get_model("llama-3.1-8b"), get_gpu("rtx-4090"), host_staged=True, **kw)  # type: ignore[arg-type]
    b = build_replica(get_model("llama-3.1-8b"), get_gpu("rtx-4090"), **kw)  # type: ignore[arg-type]
    assert step_parts(a, cal, decode_seqs=50) == step_parts(b, cal, decode_seqs=50)


RUN_E = "accelmark/nvidia_geforce_rtx_4090x8_suite_E_nvidia_vllm_47f5d58e_54dccbd0/tp8/offline"


def test_listed_runs_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(accuracy, "HOST_STAGED_COLLECTIVES", True)
    for run in ("nvidia_geforce_rtx_4090x8_suite_B_nvidia_vllm_47f5d58e_cfd0bdc8",
                "nvidia_geforce_rtx_4090x8_suite_E_nvidia_vllm_47f5d58e_54dccbd0",
                "nvidia_geforce_rtx_4090x8_suite_G_nvidia_vllm_47f5d58e_a4179ecc"):
        assert accuracy.host_staged_collectives({"id": f"accelmark/{run}/offline"})
    h200 = "accelmark/nvidia_h200x8_suite_B_nvidia_vllm_47f5d58e_b727568e/offline"
    assert not accuracy.host_staged_collectives({"id": h200})
    assert not accuracy.host_staged_collectives({"id": "dstack-405b/8xH100-1FP8-meta/2048-2048/offline-n64"})
    monkeypatch.setattr(accuracy, "HOST_STAGED_COLLECTIVES", False)
    assert not accuracy.host_staged_collectives({"id": RUN_E})


def _point(point_id: str) -> dict:
    data = json.loads((Path(__file__).parent / "data" / "serving" / "accelmark-verified.json").read_text("utf-8"))
    return next(p for p in data["points"] if p["id"] == point_id)


def test_prediction_moves_only_on_listed_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # the 8-GPU Llama-3-8B offline run of 150 prompts: staged collectives make each step longer, so fewer tok/s;
    # the same point under an unlisted run directory is not moved
    point = _point(RUN_E)
    other = dict(point, id="accelmark/nvidia_geforce_rtx_4090x8_unlisted/tp8/offline")
    cal = default_calibration()
    monkeypatch.setattr(accuracy, "HOST_STAGED_COLLECTIVES", False)
    off, b = accuracy.predict(point, calibration=cal), accuracy.predict(other, calibration=cal)
    monkeypatch.setattr(accuracy, "HOST_STAGED_COLLECTIVES", True)
    on, a = accuracy.predict(point, calibration=cal), accuracy.predict(other, calibration=cal)
    assert off is not None and on is not None and a is not None and b is not None
    assert on.predicted["otps"] < 0.8 * off.predicted["otps"]
    assert a.predicted == b.predicted == off.predicted
