"""A bare ``$EXTRA_ARGS`` word in a command that runs without a shell (exec form), for each engine (branch shell54).

Kubernetes expands only ``$(VAR)`` in a container's ``command`` and ``args`` (Kubernetes docs, "Define a Command and
Arguments for a Container"), so ``args: [..., "$EXTRA_ARGS"]`` hands the engine the text ``$EXTRA_ARGS``: TGI's
launcher (clap, ``launcher/src/main.rs``, an ``Args`` struct with no positional argument) stops with "unexpected
argument '$EXTRA_ARGS' found", SGLang's and vLLM's argparse with "unrecognized arguments". kvlint said nothing for TGI
and SGLang (the word was taken for a shell variable it could not resolve and skipped) and "remove $EXTRA_ARGS" for
vLLM. No real manifest with an exec-form ``$X`` was found with the library search (the ``- "$MAX_MODEL_LEN"`` items
it finds are in unquoted ``<<EOF`` heredocs of scripts, which the script's shell expands before applying them); the
shapes here are written from the Kubernetes rule. The same word inside ``sh -c`` is the shell's to expand, and in an
envsubst template it is the renderer's: envsubst replaces ``$VAR`` as well as ``${VAR}`` (GNU gettext manual,
"envsubst Invocation"), as in felipemoz/vllm-on-azure ``k8s/vllm-deployment.yaml`` (fixtures/collected), an envsubst
template whose exec-form vLLM args are ``${VLLM_MODEL}``, ``${VLLM_GPU_COUNT}`` and ``${VLLM_MAX_MODEL_LEN}``
(tests/test_template_placeholder_args.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.pipeline import Options, run_check

OFF = Options(allow_hub=False)

COMMANDS = {
    "vllm": (
        "vllm/vllm-openai:v0.10.1",
        ["vllm", "serve", "Qwen/Qwen2.5-7B-Instruct", "--max-model-len", "4096"],
    ),
    "tgi": (
        "ghcr.io/huggingface/text-generation-inference:2.4.0",
        ["text-generation-launcher", "--model-id", "Qwen/Qwen2.5-7B-Instruct", "--max-total-tokens", "4096"],
    ),
    "sglang": (
        "lmsysorg/sglang:v0.4.6.post1-cu124",
        ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-7B-Instruct"],
    ),
}


def _manifest(tmp_path: Path, engine: str, word: str, *, shell: bool = False, extra: str = "") -> Path:
    image, argv = COMMANDS[engine]
    words = [*argv, word]
    command = (
        '["sh", "-c", "' + " ".join(words) + '"]' if shell else "[" + ", ".join(f'"{w}"' for w in words) + "]"
    )
    path = tmp_path / f"{engine}.yaml"
    path.write_text(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: chat\nspec:\n  selector:\n"
        "    matchLabels: {app: chat}\n  template:\n    metadata:\n      labels: {app: chat}\n    spec:\n"
        "      nodeSelector:\n        cloud.google.com/gke-accelerator: nvidia-l4\n      containers:\n"
        f"        - name: server\n          image: {extra or image}\n          command: {command}\n"
        "          env:\n            - {name: EXTRA_ARGS, value: '--port=8080'}\n"
        "          resources:\n            limits:\n              nvidia.com/gpu: 1\n"
    )
    return path


def _found(path: Path) -> list[tuple[str, str, str, str]]:
    return [(d.rule, d.severity, d.message, d.fix or "") for d in run_check([str(path)], OFF).diagnostics]


@pytest.mark.parametrize("engine", sorted(COMMANDS))
def test_an_exec_form_reference_reaches_the_engine_as_written(tmp_path: Path, engine: str) -> None:
    # (a braced ${EXTRA_ARGS} makes the file an envsubst template: KV002, the last test)
    word = "$EXTRA_ARGS"
    found = _found(_manifest(tmp_path, engine, word))
    (kv205,) = [(s, m, f) for r, s, m, f in found if r == "KV205"]
    severity, message, fix = kv205
    assert severity == "error" and f"option {word} " in message
    assert "expands only $(VAR)" in message and "no shell runs this command" in message
    assert "$(EXTRA_ARGS)" in fix and "sh -c" in fix and not fix.startswith("remove")


@pytest.mark.parametrize("engine", sorted(COMMANDS))
def test_in_a_shell_script_the_shell_expands_it(tmp_path: Path, engine: str) -> None:
    found = _found(_manifest(tmp_path, engine, "$EXTRA_ARGS", shell=True))
    assert not [m for r, _, m, _ in found if r == "KV205" and "EXTRA_ARGS" in m]


@pytest.mark.parametrize("engine", sorted(COMMANDS))
def test_a_placeholder_of_an_envsubst_template_stays_the_renderer_s(tmp_path: Path, engine: str) -> None:
    # the image a ${VAR} too: the file is an envsubst template (KV002), whose ${EXTRA_ARGS} envsubst replaces
    found = _found(_manifest(tmp_path, engine, "${EXTRA_ARGS}", extra="${IMAGE}"))
    assert any(r == "KV002" for r, _, _, _ in found)
    assert not [m for r, _, m, _ in found if r == "KV205"]
    assert [m for r, s, m, _ in found if r == "KV503" and s == "info" and "${EXTRA_ARGS}" in m]


#: an option of each engine whose value is an integer (a layout size, so an unresolved value leaves it not sized)
SIZE_OPTION = {"vllm": "--tensor-parallel-size", "tgi": "--num-shard", "sglang": "--tp-size"}


@pytest.mark.parametrize("engine", sorted(COMMANDS))
def test_an_unbraced_word_of_an_envsubst_template_is_the_renderer_s(tmp_path: Path, engine: str) -> None:
    # felipemoz/vllm-on-azure's shape (an envsubst template, KV002, its image a ${VAR}) with $EXTRA_ARGS unbraced:
    # envsubst replaces it too, so the engine never receives the text; the KV503 info says the template fills it
    found = _found(_manifest(tmp_path, engine, "$EXTRA_ARGS", extra="${IMAGE}"))
    assert any(r == "KV002" for r, _, _, _ in found)
    assert not [m for r, _, m, _ in found if r == "KV205"]
    assert [
        m
        for r, s, m, _ in found
        if r == "KV503" and s == "info" and m.startswith("$EXTRA_ARGS is a placeholder")
    ]


@pytest.mark.parametrize("engine", sorted(COMMANDS))
def test_an_unbraced_value_of_an_envsubst_template_is_the_renderer_s(tmp_path: Path, engine: str) -> None:
    # --tensor-parallel-size $TP in the template: not KV206 "the engine receives the text $TP" but the variable
    # kvlint cannot resolve, as ${TP} is; the container is not sized on a default of one GPU
    option = SIZE_OPTION[engine]
    found = _found(_manifest(tmp_path, engine, f'{option}", "$TP', extra="${IMAGE}"))
    assert not [m for r, _, m, _ in found if r == "KV206"]
    assert [m for r, s, m, _ in found if r == "KV503" and s == "warning" and m.startswith(f"{option} $TP: ")]
    # not a template (the image a literal one): the engine parses the text $TP and refuses it
    found = _found(_manifest(tmp_path, engine, f'{option}", "$TP'))
    assert [m for r, s, m, _ in found if r == "KV206" and s == "error" and "$TP" in m]
