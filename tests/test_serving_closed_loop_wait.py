"""The steady closed loop's admission wait (Q6 of docs/serving.md; session 14, the coordinator's fix of latency26's
finding): clients wait to be admitted only when the running cap (or prompts that no longer fit) holds the batch
below them, never because the decode-batch bisection stopped within its 0.2% bracket. Expected values are the
definitions, not the code's output: below the cap ``N = d + X·TTFT`` equals the clients within 0.1% and nobody waits;
above a cap of 8 running sequences the other clients queue, ``wait = (clients − N)/X`` with ``N`` the capped state's."""

from __future__ import annotations

import pytest

from planner.serving import schedule as sch
from planner.serving.api import _setup

CASES = [  # (model, gpu, tp, engine, weight dtype, KV dtype, input, output): the issue-11 acceptance setup (FP8 KV:
    # about 86 running), then two that carried a spurious wait before the fix (16 and 25 clients on SGLang)
    ("llama-3.3-70b", "h100-sxm", 2, "trtllm", "fp8", "fp8", 5000, 500),
    ("llama-3.1-70b", "a100-80gb-sxm", 8, "sglang", "auto", "auto", 500, 500),
    ("llama-3.1-8b", "h100-sxm", 1, "vllm", "auto", "auto", 1000, 200),
]


def _load(model, gpu, tp, engine, wd, kd, i, o, **kwargs):
    return _setup(model, gpu, tp=tp, pp=1, engine=engine, engine_version=None, weight_dtype=wd, kv_cache_dtype=kd,
                  input_tokens=i, output_tokens=o, cache_hit_rate=0.0, max_num_batched_tokens=None,
                  calibration=None, max_model_len=None, chunked_prefill=None, ep=1, dp=1, enforce_eager=False,
                  quantization=None, checkpoint_recipe=None, eager_prefill=None, max_seq_len_to_capture=None,
                  cuda_graph_batch_sizes=None, **kwargs).load


@pytest.mark.parametrize("case", CASES, ids=[c[0] + "-" + c[3] for c in CASES])
@pytest.mark.parametrize("clients", [4, 16, 25, 50])
def test_below_the_cap_nobody_waits_and_the_clients_are_all_in_flight(case, clients):
    load = _load(*case, max_num_seqs=None)
    assert clients < load.max_running  # the setups hold these clients without a cap
    st, wait = sch.closed_loop(load, clients=float(clients))
    assert wait == 0.0
    assert st.decode_batch + st.requests_per_s * st.ttft_s == pytest.approx(clients, rel=1e-3)


def test_above_a_cap_of_eight_the_other_clients_queue():
    load = _load(*CASES[2], max_num_seqs=8)
    st, wait = sch.closed_loop(load, clients=20.0)
    n = st.decode_batch + st.requests_per_s * st.ttft_s
    assert st.decode_batch <= 8.0 + 1e-9
    assert n < 20.0
    assert wait == pytest.approx((20.0 - n) / st.requests_per_s, rel=1e-12)
    assert wait > 0.0
