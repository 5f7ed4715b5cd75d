"""llm-d-modelservice's Helm chart (fixtures/helm/llm-d-modelservice, with its vendored bitnami ``common``
dependency) rendered by helm with its own example values: the engines are found, read and sized, and the findings
are placed in the chart's templates."""

from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import pytest
import yaml

from kvlint.pipeline import Options, run_documents
from kvlint.render import load_inputs

CHART_TGZ = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "helm"
    / "llm-d-modelservice"
    / "llm-d-modelservice-v0.4.12.tgz"
)
OFFLINE = Options(allow_hub=False)

pytestmark = pytest.mark.skipif(
    shutil.which("helm") is None, reason="needs helm on PATH (the dev extras install it)"
)


@pytest.fixture
def chart(tmp_path: Path) -> Path:
    with tarfile.open(CHART_TGZ) as tgz:
        tgz.extractall(tmp_path, filter="data")
    return tmp_path / "llm-d-modelservice"


def _check(chart: Path, example: str):
    values = chart / "examples" / example
    loaded = load_inputs([str(chart)], helm_values=[str(values)])
    assert not [f for f in loaded.findings if f.rule == "KV001"]
    return yaml.safe_load(values.read_text()), run_documents(loaded, OFFLINE)


def test_prefill_decode_example_is_read_and_sized(chart: Path) -> None:
    values, result = _check(chart, "values-pd.yaml")
    by_role = {c.workload.name.rsplit("-", 1)[-1]: c for c in result.containers}
    assert set(by_role) == {"decode", "prefill"}
    for role, c in by_role.items():
        assert c.serving.engine == "vllm"
        assert c.serving.model is not None and c.serving.model.value == values["modelArtifacts"]["name"]
        assert c.plan is not None or c.fleet, role
        # findings on the engine are in the role's own template, or at the values line that set what the
        # container helper wrote (kvlint.render.trace_helper_values), never in the rendered stream
        mine = [d for d in result.diagnostics if d.container == "vllm" and role in d.object]
        template = str(chart / "templates" / f"{role}-deployment.yaml")
        assert mine and {d.loc.file for d in mine} <= {template, str(chart / "examples" / "values-pd.yaml")}


def test_xpu_example_requests_an_advertised_resource(chart: Path) -> None:
    """values-xpu.yaml asks for gpu.intel.com/xe (Intel's plugin, xe kernel driver): no KV409, and the engine
    is an XPU one, whose capacity rules are skipped (KV501) rather than sized as a CUDA GPU."""
    _values, result = _check(chart, "values-xpu.yaml")
    (c,) = result.containers
    assert c.placement is not None and c.placement.resource == "gpu.intel.com/xe"
    rules = {d.rule for d in result.diagnostics}
    assert "KV409" not in rules and "KV501" in rules
    assert c.plan is None and not c.fleet


def test_cpu_example_runs_the_simulator(chart: Path) -> None:
    """values-cpu.yaml runs llm-d's inference simulator, not an engine: nothing to size, nothing reported."""
    _values, result = _check(chart, "values-cpu.yaml")
    assert result.containers == [] and not [d for d in result.diagnostics if d.severity == "error"]
