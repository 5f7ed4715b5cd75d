"""A ``$VAR`` / ``${VAR}`` model argument in a command run without a shell (exec form).

Kubernetes expands only ``$(VAR)`` in ``command`` and ``args`` (Kubernetes docs, "Define a Command and Arguments
for a Container"); with no shell, ``vllm serve ${MODEL_PATH}`` hands vLLM the literal text as its model, which it
cannot load. kvlint said "vLLM would start its built-in default model" (KV503) for vLLM and "a template
placeholder" for TGI and SGLang. Each engine now gets the same KV502: what the engine receives, with ``$(VAR)`` or
a shell as the fix when the container's env defines the variable, and an envsubst render when the file looks like
an envsubst template (the variable defined nowhere). The same words in a ``sh -c`` script are the shell's to
expand and are read as before.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check

OFF = Options(allow_hub=False)

COMMANDS = {
    "vllm": ("vllm/vllm-openai:v0.11.0", '["vllm", "serve", "{ref}", "--max-model-len", "8192"]'),
    "tgi": (
        "ghcr.io/huggingface/text-generation-inference:3.3.4",
        '["text-generation-launcher", "--model-id", "{ref}"]',
    ),
    "sglang": (
        "lmsysorg/sglang:v0.5.3",
        '["python3", "-m", "sglang.launch_server", "--model-path", "{ref}"]',
    ),
}
NAMES = {"vllm": "vLLM", "tgi": "TGI", "sglang": "SGLang"}


def _manifest(tmp_path: Path, engine: str, ref: str, *, env: bool, shell: bool = False) -> Path:
    image, command = COMMANDS[engine]
    command = command.format(ref=ref)
    if shell:
        command = '["sh", "-c", "' + " ".join(w.strip('"') for w in command.strip("[]").split(", ")) + '"]'
    env_lines = (
        "          env:\n            - name: MODEL_PATH\n              value: meta-llama/Llama-3.1-8B-Instruct\n"
        if env
        else ""
    )
    path = tmp_path / f"{engine}.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: chat\nspec:\n  selector:\n"
        "    matchLabels: {app: chat}\n  template:\n    metadata:\n      labels: {app: chat}\n    spec:\n"
        "      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n"
        f"        - name: server\n          image: {image}\n          command: {command}\n{env_lines}"
        "          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
    )
    return path


def _by_rule(path: Path) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for d in run_check([str(path)], OFF).diagnostics:
        out.setdefault(d.rule, []).append((d.message, d.fix or ""))
    return out


@pytest.mark.parametrize("engine", sorted(COMMANDS))
@pytest.mark.parametrize("ref", ["${MODEL_PATH}", "$MODEL_PATH"])
def test_exec_form_reference_is_the_engines_literal_model(tmp_path: Path, engine: str, ref: str) -> None:
    found = _by_rule(_manifest(tmp_path, engine, ref, env=True))
    assert not any("built-in default model" in m for m, _ in found.get("KV503", []))
    (kv502,) = found["KV502"]
    message, fix = kv502
    assert message.startswith(f"the model '{ref}' reaches {NAMES[engine]} as written")
    assert "expands only $(VAR)" in message and "fails at start-up" in message
    assert fix.startswith("write $(MODEL_PATH)") and "sh, -c" in fix and "envsubst" not in fix


@pytest.mark.parametrize("engine", sorted(COMMANDS))
def test_a_variable_defined_nowhere_is_read_as_an_envsubst_template(tmp_path: Path, engine: str) -> None:
    (kv502,) = _by_rule(_manifest(tmp_path, engine, "${MODEL_PATH}", env=False))["KV502"]
    assert kv502[1].startswith("this file looks like an envsubst template") and "envsubst < FILE" in kv502[1]
    assert "$(MODEL_PATH)" in kv502[1]


@pytest.mark.parametrize("engine", sorted(COMMANDS))
def test_in_a_shell_script_the_shell_expands_it(tmp_path: Path, engine: str) -> None:
    res = run_check([str(_manifest(tmp_path, engine, "${MODEL_PATH}", env=True, shell=True))], OFF)
    assert "KV502" not in {d.rule for d in res.diagnostics}
    assert {cr.model.id for cr in res.containers if cr.model} == {"meta-llama/Llama-3.1-8B-Instruct"}


@pytest.mark.parametrize("engine", sorted(COMMANDS))
def test_an_unresolved_kubelet_reference_reaches_the_engine_as_written(tmp_path: Path, engine: str) -> None:
    """``$(MODEL_PATH)`` with no env entry: the kubelet leaves it as written ("only known when the container runs"
    before); with the entry it expands it, and the model is read."""
    (kv502,) = _by_rule(_manifest(tmp_path, engine, "$(MODEL_PATH)", env=False))["KV502"]
    assert kv502[0].startswith(f"the model '$(MODEL_PATH)' reaches {NAMES[engine]} as written")
    assert "leaves $(MODEL_PATH) as written" in kv502[0] and kv502[1].startswith("define MODEL_PATH")
    res = run_check([str(_manifest(tmp_path, engine, "$(MODEL_PATH)", env=True))], OFF)
    assert {cr.model.id for cr in res.containers if cr.model} == {"meta-llama/Llama-3.1-8B-Instruct"}
