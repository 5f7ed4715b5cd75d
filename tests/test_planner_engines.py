"""The planner for TGI and SGLang users (planner25): every setting a plan, a finding or a remedy names is spelled as
the workload's engine spells it (TGI's launcher options or their environment variables, as the container writes
them; SGLang's server arguments), and a remedy offered for a command is the command re-planned with it, which
fits. Offline (bundled model catalogue); every expected figure comes from kvlint's own plan."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from kvlint.cli import main

TGI_8B = ["text-generation-launcher", "--model-id", "meta-llama/Llama-3.1-8B-Instruct"]
SGLANG_8B = ["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct"]

#: vLLM's names of the settings TGI and SGLang call otherwise (flag and field spellings)
VLLM_NAMES = re.compile(
    r"max[-_]model[-_]len|max[-_]num[-_]seqs|max[-_]num[-_]batched[-_]tokens|gpu[-_]memory[-_]utilization|"
    r"tensor[-_]parallel[-_]size"
)
#: TGI's environment-variable spellings of the launcher options the remedies name
TGI_ENV = re.compile(
    r"\b(?:NUM_SHARD|MAX_TOTAL_TOKENS|MAX_INPUT_TOKENS|MAX_BATCH_PREFILL_TOKENS|CUDA_MEMORY_FRACTION)\b"
)


def _run(*args: str) -> Any:
    return CliRunner().invoke(main, list(args))


def _plan_json(*args: str) -> dict[str, Any]:
    r = _run("plan", "--offline", "--format", "json", *args)
    assert r.exit_code in (0, 1), r.output
    return json.loads(r.stdout)  # type: ignore[no-any-return]


def _fixes(doc: dict[str, Any]) -> list[str]:
    return [str(d.get("fix") or "") for d in doc["diagnostics"] if d.get("fix")]


# ------------------------------------------------------------------ TGI: options as the command line types them


def test_tgi_command_line_remedies_name_launcher_options_and_fit_when_applied() -> None:
    """`kvlint plan -- text-generation-launcher --max-total-tokens 32768 ...` on an L4 was told "set
    MAX_TOTAL_TOKENS to N and MAX_INPUT_TOKENS to M" and "NUM_SHARD=2": environment variables the typed command
    does not use. Each remedy now names the launcher's options, and the command with the remedy's values typed
    in plans without the finding."""
    cmd = [*TGI_8B, "--max-total-tokens", "32768", "--max-input-tokens", "30000"]
    doc = _plan_json("--accelerator", "l4", "--engine-version", "3.3.6", "--", *cmd)
    assert doc["verdict"] == "fail"
    fixes = _fixes(doc)
    assert fixes and not any(TGI_ENV.search(f) for f in fixes), fixes
    m = next(
        m
        for f in fixes
        if (m := re.search(r"--max-total-tokens (?:to )?(\d+) and --max-input-tokens (?:to )?(\d+)", f))
    )
    assert "--num-shard 2" in " ".join(fixes)
    applied = [*TGI_8B, "--max-total-tokens", m.group(1), "--max-input-tokens", m.group(2)]
    after = _plan_json("--accelerator", "l4", "--engine-version", "3.3.6", "--", *applied)
    assert after["verdict"] == "ok", after["diagnostics"]


def test_tgi_manifest_configured_through_env_keeps_the_variables(tmp_path: Path) -> None:
    """A Deployment that sets TGI's limits through env keeps being told the variables it uses."""
    f = tmp_path / "tgi.yaml"
    f.write_text(
        """apiVersion: apps/v1
kind: Deployment
metadata: {name: tgi-8b}
spec:
  selector: {matchLabels: {app: tgi-8b}}
  template:
    metadata: {labels: {app: tgi-8b}}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      containers:
        - name: tgi
          image: ghcr.io/huggingface/text-generation-inference:3.3.6
          env:
            - {name: MODEL_ID, value: meta-llama/Llama-3.1-8B-Instruct}
            - {name: MAX_INPUT_TOKENS, value: "30000"}
            - {name: MAX_TOTAL_TOKENS, value: "32768"}
          resources: {limits: {nvidia.com/gpu: 1}}
""",
        encoding="utf-8",
    )
    r = _run("check", "--offline", "--format", "json", str(f))
    doc = json.loads(r.stdout)
    fixes = [d["fix"] for d in doc["diagnostics"] if d["rule"] == "KV603"]
    assert fixes and "MAX_TOTAL_TOKENS to" in fixes[0] and "NUM_SHARD=2" in fixes[0], fixes
    assert "--max-total-tokens" not in fixes[0] and "--num-shard" not in fixes[0]


def test_tgi_args_manifest_is_told_the_options_it_writes(tmp_path: Path) -> None:
    """The same limits written as container args are told the options (KV104's remedy said MAX_TOTAL_TOKENS=N
    to a container whose args set --max-total-tokens)."""
    src = Path(__file__).parent.parent / "fixtures" / "rules" / "KV104" / "tgi.yaml"
    r = _run("check", "--offline", "--format", "json", str(src))
    doc = json.loads(r.stdout)
    fixes = [d["fix"] for d in doc["diagnostics"] if d["rule"] == "KV104"]
    assert fixes and all("--max-total-tokens " in f and not TGI_ENV.search(f) for f in fixes), fixes
