"""A command-line word that is wholly a ``${VAR}`` placeholder of a file KV002 reports as an envsubst template.

llm-d's inference-scheduler ``deploy/components/vllm-{decode,encode,prefill}/deployment.yaml`` (fixtures/collected)
give vLLM the exec-form args ``["--port=8200", "--model=${MODEL_NAME}", ..., "${VLLM_EXTRA_ARGS_D}"]``, rendered by
``envsubst`` before they are applied: the last word stands for options the scenario chooses. kvlint reported the file
as a template (KV002) and, on the same word, a KV205 *error* "unknown vLLM option ${VLLM_EXTRA_ARGS_D} ... remove it".
In a template the word is the renderer's, not vLLM's: it is an unresolved word (a KV503 info), as a bare ``$ARGS`` in
a shell script is. Where the file is no template (a bare ``$VAR``, no ``${VAR}`` anywhere), the exec-form word still
reaches vLLM as written and stays KV205 (tests/test_literal_dollar_model.py reads the model word the same way).
"""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

OFF = Options(allow_hub=False)


def _manifest(
    tmp_path: Path, word: str, image: str = "vllm/vllm-openai:v0.11.0", args_only: bool = False
) -> Path:
    words = '"--model", "Qwen/Qwen3-0.6B", "--max-model-len", "8192", "--port=8200", ' + f'"{word}"'
    run = f"args: [{words}]" if args_only else f'command: ["vllm", "serve", {words}]'
    path = tmp_path / "deployment.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: chat\nspec:\n  selector:\n"
        "    matchLabels: {app: chat}\n  template:\n    metadata:\n      labels: {app: chat}\n    spec:\n"
        "      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n"
        f"        - name: server\n          image: {image}\n          {run}\n"
        "          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
    )
    return path


def _found(path: Path) -> list[tuple[str, str, str]]:
    return [(d.rule, d.severity, d.message) for d in run_check([str(path)], OFF).diagnostics]


def test_a_placeholder_word_of_an_envsubst_template_is_unresolved_not_an_unknown_option(
    tmp_path: Path,
) -> None:
    found = _found(_manifest(tmp_path, "${VLLM_EXTRA_ARGS}"))
    assert any(r == "KV002" for r, _, _ in found)
    assert not [m for r, _, m in found if r == "KV205" and "VLLM_EXTRA_ARGS" in m]
    (note,) = [(s, m) for r, s, m in found if r == "KV503" and "${VLLM_EXTRA_ARGS}" in m]
    assert note[0] == "info" and "cannot see" in note[1]


def test_a_placeholder_image_and_entrypoint_args_as_llm_d_writes_them(tmp_path: Path) -> None:
    found = _found(_manifest(tmp_path, "${VLLM_EXTRA_ARGS_D}", image="${VLLM_IMAGE}", args_only=True))
    assert not [m for r, _, m in found if r == "KV205"]
    assert [m for r, s, m in found if r == "KV503" and s == "info" and "${VLLM_EXTRA_ARGS_D}" in m]


def test_a_bare_dollar_word_outside_a_template_reaches_vllm_as_written(tmp_path: Path) -> None:
    found = _found(_manifest(tmp_path, "$VLLM_EXTRA_ARGS"))
    assert not any(r == "KV002" for r, _, _ in found)
    (kv205,) = [(s, m) for r, s, m in found if r == "KV205"]
    assert kv205[0] == "error" and "$VLLM_EXTRA_ARGS" in kv205[1]


def test_a_word_that_only_holds_a_placeholder_stays_an_unknown_option(tmp_path: Path) -> None:
    # "extra-${X}" is not wholly a placeholder: whatever it renders to, it is one word vLLM takes for no option
    found = _found(_manifest(tmp_path, "extra-${X}"))
    assert any(r == "KV002" for r, _, _ in found)
    assert [m for r, _, m in found if r == "KV205" and "extra-${X}" in m]


# KV504 on the same containers said "its arguments (...) are vLLM's own options and nothing else" although one of them
# is the placeholder: it names the words that are no vLLM option, and keeps "nothing else" where it is true.
def _kv504(path: Path) -> str:
    (message,) = [m for r, _, m in _found(path) if r == "KV504"]
    return message


def test_kv504_names_the_placeholder_among_the_arguments(tmp_path: Path) -> None:
    message = _kv504(_manifest(tmp_path, "${VLLM_EXTRA_ARGS_D}", image="${VLLM_IMAGE}", args_only=True))
    assert "nothing else" not in message
    assert "besides ${VLLM_EXTRA_ARGS_D}, a placeholder" in message


def test_kv504_names_a_word_vllm_takes_for_no_option(tmp_path: Path) -> None:
    message = _kv504(_manifest(tmp_path, "serve-fast", image="registry.example/private:1", args_only=True))
    assert "nothing else" not in message and "besides serve-fast" in message and "KV205" in message


def test_kv504_says_nothing_else_when_it_is_so(tmp_path: Path) -> None:
    message = _kv504(_manifest(tmp_path, "--enforce-eager", image="${VLLM_IMAGE}", args_only=True))
    assert "vLLM's own options and nothing else" in message and "besides" not in message
