"""The Models sheet shows and takes an MoE model's expert width (template 2.7.0, issue 11 item 7).

The engine memory model reads one routed expert's FFN width (``moe_intermediate_size``), which for DeepSeek-V3/R1 is
2,048 while its ``intermediate_size`` is the dense MLP's 18,432 (deepseek-ai/DeepSeek-R1 config.json); the sheet a
planner edits must show the figure the functions use, and an edit must reach them.
"""

from __future__ import annotations

from planner import catalog
from planner import template as ts
from planner.catalog_sheet import catalog_row, model_from_token, model_token
from planner.template.inputs import catalog_inputs


def test_the_bundled_row_shows_the_expert_width_beside_the_mlp_width() -> None:
    row = catalog_row(catalog.get_model("deepseek-r1"))
    assert row["intermediate_size"] == 18_432 and row["moe_intermediate_size"] == 2_048  # config.json's two fields
    assert catalog_row(catalog.get_model("llama-3.1-8b"))["moe_intermediate_size"] is None  # dense: blank


def test_the_template_s_models_sheet_carries_it() -> None:
    cells = catalog_inputs()
    t = ts.MODELS
    rows = {cells.get((t.sheet, t.cell("name", i))): i for i in range(t.rows)}
    assert "deepseek-r1" in rows
    assert cells[(t.sheet, t.cell("moe_intermediate_size", rows["deepseek-r1"]))] == 2_048


def test_an_edited_expert_width_reaches_the_spec_the_functions_use() -> None:
    headers = [c.header for c in ts.MODELS.columns]
    row = [None] * len(headers)
    row[headers.index("Model [name]")] = "deepseek-r1"
    row[headers.index("Expert FFN [elements]")] = 1_024
    spec = model_from_token(model_token(row, headers))
    assert spec.expert_intermediate_size == 1_024
    assert spec.intermediate_size == 18_432  # the other column keeps the bundled figure


def test_an_edited_shape_drops_the_bundled_per_layer_breakdown() -> None:
    """The per-stage weights (pipeline parallelism) use a per-layer parameter breakdown estimated from the bundled
    shapes; an edited shape would make it stale, so the stages take the even split instead."""
    from planner.memory import stage_weight_bytes

    headers = [c.header for c in ts.MODELS.columns]
    row = [None] * len(headers)
    row[headers.index("Model [name]")] = "deepseek-r1"
    assert model_from_token(model_token(row, headers)).layer_params  # nothing edited: the bundled breakdown
    row[headers.index("Expert FFN [elements]")] = 1_024
    spec = model_from_token(model_token(row, headers))
    assert spec.layer_params == () and spec.embedding_params is None
    stages = stage_weight_bytes(spec, tp=8, pp=2)
    assert stages[0] == stages[1]  # the even split
