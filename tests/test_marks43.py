"""Decisions that read the wording of kvlint's own messages, now typed (branch marks43): the findings and the
parser's results carry what the code acts on. Real loader and pipeline, offline; manifests written here."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

_VLLM = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: opt
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          args: [{args}]
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def _rules(tmp_path: Path, text: str, name: str = "m.yaml") -> list:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return run_check([str(path)], Options(allow_hub=False)).diagnostics


def test_kv202_is_kept_when_another_options_note_quotes_the_flags_name(tmp_path: Path) -> None:
    """KV202 (no --max-model-len) is left out when the parser said the flag was given but unreadable. That was
    found by the flag's name in any KV206/KV503 message, which quotes the manifest's words: an unresolved
    ``--gpu-memory-utilization $(max_model_len)`` dropped KV202 although --max-model-len is not given."""
    quoted = _rules(
        tmp_path,
        _VLLM.format(args='"--model", "facebook/opt-125m", "--gpu-memory-utilization", "$(max_model_len)"'),
    )
    assert any(d.rule == "KV503" and "$(max_model_len)" in d.message for d in quoted)
    assert [d.rule for d in quoted].count("KV202") == 1
    # the flag itself given unreadable (a variable; a value vLLM rejects): no KV202, as before
    for value in ("$(LEN)", "abc"):
        given = _rules(
            tmp_path, _VLLM.format(args=f'"--model", "facebook/opt-125m", "--max_model_len", "{value}"')
        )
        assert any(d.rule in ("KV503", "KV206") and value in d.message for d in given)
        assert not [d for d in given if d.rule == "KV202"]


_SHELL_MODEL = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: opt
spec:
  template:
    spec:
      containers:
        - name: vllm
          image: vllm/vllm-openai:v0.8.5
          command: ["sh", "-c", "MODEL=$(cat /etc/model); vllm serve --model \\"${{MODEL}}\\""]
          resources:
            limits:
              nvidia.com/gpu: 1
        - name: "{name}"
          image: "{image}"
          resources:
            limits:
              nvidia.com/gpu: 1
"""


def _kv502(tmp_path: Path, name: str, image: str) -> str:
    found = [
        d.message for d in _rules(tmp_path, _SHELL_MODEL.format(name=name, image=image)) if d.rule == "KV502"
    ]
    assert len(found) == 1
    return found[0]


def test_a_shell_variable_model_is_a_template_placeholder_only_in_an_envsubst_template(
    tmp_path: Path,
) -> None:
    """A ``${MODEL}`` model in a shell script is the shell's (known when the container runs), unless KV002 found
    the manifest to be an envsubst template, whose placeholder it then is. That was found by a ``${`` in any
    KV002 message: one quoting a container named ``helper-${X}`` (empty image) made the shell variable a
    template placeholder. The KV002 carries Mark.ENVSUBST_TEMPLATE now."""
    runtime = "the model '${MODEL}' is only known when the container runs"
    template = "the model '${MODEL}' is a template placeholder"
    assert _kv502(tmp_path, "helper", "").startswith(runtime)
    assert _kv502(tmp_path, "helper-${X}", "").startswith(runtime)
    # a ${VAR} or $VAR image: the manifest is an envsubst template, as before
    assert _kv502(tmp_path, "helper", "reg/${IMG}").startswith(template)
    assert _kv502(tmp_path, "helper", "$IMG").startswith(template)


def test_an_unread_script_whose_path_holds_the_no_model_words_is_still_unreadable(tmp_path: Path) -> None:
    """A container whose engine command kvlint could not read (a script) is counted "command unreadable"; one
    whose vLLM command was read whole and names no model, "no model in the command". The second was told by
    "command names no model" in the KV503 message, which also quotes the script's path: a script at
    ``/opt/command names no model/start.sh`` was counted as a command naming no model. The KV503 of a command
    read whole carries Mark.NO_MODEL now."""
    from kvlint.sizing import sizing_of

    def reason(command: str) -> str:
        path = tmp_path / "m.yaml"
        text = _VLLM.replace("args: [{args}]", f"command: [{command}]")
        path.write_text(text, encoding="utf-8")
        (cr,) = run_check([str(path)], Options(allow_hub=False)).containers
        return sizing_of(cr)

    assert reason('"/opt/start.sh"') == "command unreadable"
    assert reason('"/opt/command names no model/start.sh"') == "command unreadable"
    assert reason('"vllm", "serve", "--port", "8000"') == "no model in the command"
