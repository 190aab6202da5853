"""The benchmark script runs (tiny smoke mode, no timing assertions) and the CI recipe files parse."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from validate_support import ROOT


def test_benchmark_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_validate.py"), "--smoke", "--dir",
                    str(tmp_path / "plans"), "--json", str(out)], check=True, capture_output=True, timeout=600)
    res = json.loads(out.read_text())
    assert res["plans"] == 6 and res["fast_jobs1_ms_per_plan"] > 0 and res["fast_jobs2_ms_per_plan"] > 0
    assert len(list((tmp_path / "plans").glob("*.xlsm"))) == 6


def test_ci_recipe_runs_planner_validate() -> None:
    workflow = (ROOT / "docs" / "ci" / "github-actions.yml").read_text()
    hooks = (ROOT / "docs" / "ci" / "pre-commit-hooks.yaml").read_text()
    try:
        import yaml
    except ImportError:
        yaml = None
    if yaml is not None:
        wf = yaml.safe_load(workflow)
        steps = wf["jobs"]["validate"]["steps"]
        assert any("planner validate plans/" in s.get("run", "") for s in steps)
        hook = yaml.safe_load(hooks)[0]
        assert hook["id"] == "planner-validate" and hook["entry"] == "planner validate"
    assert "planner validate plans/ --jobs 2" in workflow and "entry: planner validate" in hooks
