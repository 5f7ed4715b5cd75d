"""KV503 on a ``sh -c`` script that starts no engine names the command that would start the server, not a script the
shell only reads for its settings: AI-Hypercomputer/gpu-recipes' inference charts (rendered with
``--helm-set-file``) ``source`` an NCCL set-up script, then ``exec "$LAUNCHER_SCRIPT" "${ARGS[@]}"``, and the
finding said "the container runs `source /usr/local/gib/scripts/set_nccl_env.sh`, not a recognised engine command"."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "collected" / "trees" / "gpu-recipes-inference"

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: d}}
spec:
  selector: {{matchLabels: {{app: d}}}}
  template:
    metadata: {{labels: {{app: d}}}}
    spec:
      containers:
        - name: serving
          image: vllm/vllm-openai:v0.8.5
          command: ["/bin/bash", "-c"]
          args:
            - |
{script}
          resources: {{limits: {{nvidia.com/gpu: "1"}}}}
"""


def _kv503(tmp_path: Path, script: str) -> str:
    path = tmp_path / "d.yaml"
    body = "\n".join("              " + line for line in script.splitlines())
    path.write_text(DEPLOYMENT.format(script=body))
    result = run_check([str(path)], Options(allow_hub=False))
    (f,) = [f for f in result.diagnostics if f.rule == "KV503"]
    return f.message


@pytest.mark.parametrize("read", ["source", "."])
def test_a_sourced_setup_script_is_not_named_as_what_the_container_runs(tmp_path: Path, read: str) -> None:
    script = (
        f'{read} /usr/local/gib/scripts/set_nccl_env.sh\nldconfig\nexec /workload/launcher/launch.sh "$@"\n'
    )
    text = _kv503(tmp_path, script)
    assert "/workload/launcher/launch.sh" in text, text
    assert "set_nccl_env.sh" not in text, text


def test_a_sourced_script_alone_is_still_named(tmp_path: Path) -> None:
    """It may be what starts the server: with nothing else to name, it is named."""
    text = _kv503(tmp_path, "source /opt/start-server.sh\n")
    assert "start-server.sh" in text, text


@pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")
def test_gpu_recipes_chart_names_its_launcher(tmp_path: Path) -> None:
    """The chart as gpu-recipes' README installs it: KV503 names the launcher the container ``exec``s. The script
    ``source``s ``${NCCL_INIT_SCRIPT}`` first, a file kvlint does not read, which may set any variable (shell55): the
    launcher is named as the script runs it, ``$LAUNCHER_SCRIPT``, its value in the container's env no longer sure."""
    args = tmp_path / "serving-args.yaml"
    args.write_text("tensor-parallel-size: 8\n")  # made up, in the shape of gpu-recipes' serving-args.yaml
    launcher = tmp_path / "launcher.sh"
    # made up, as src/launchers/vllm-launcher.sh
    launcher.write_text('#!/bin/bash\nvllm serve "$MODEL_NAME" "$@"\n')
    chart = TREES / "src" / "helm-charts" / "a3ultra" / "inference-templates" / "deployment"
    values = TREES / "inference" / "a3ultra" / "single-host-serving" / "vllm" / "values.yaml"
    result = run_check(
        [str(chart)],
        Options(
            allow_hub=False,
            helm_values=(str(values),),
            helm_set=("workload.image=vllm/vllm-openai:v0.8.5", "workload.framework=vllm"),
            helm_set_file=(f"serving_config={args}", f"workload_launcher={launcher}"),
        ),
    )
    (f,) = [f for f in result.diagnostics if f.rule == "KV503"]
    text = f.message
    assert "LAUNCHER_SCRIPT" in text and "set_nccl_env" not in text, text
