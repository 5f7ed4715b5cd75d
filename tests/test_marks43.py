"""Decisions that read the wording of kvlint's own messages, now typed (branch marks43): the findings and the
parser's results carry what the code acts on. Real loader and pipeline, offline; manifests written here."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check
from kvlint.types import Mark

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


def test_the_walks_values_hint_follows_the_render_failures_mark() -> None:
    """A chart met in a directory walk that helm fails to render gets the ``--helm-values`` hint (its failure may
    be values it lacks); one whose dependencies are missing from ``charts/`` does not. That was chosen by the fix's
    first words ("run `helm template"); by the finding's mark now: the same fix without the mark is left as it is,
    and a marked failure with any fix gets the hint."""
    from kvlint.render import walk_values_hint
    from kvlint.source import Loc
    from kvlint.types import Finding, Mark

    at = Loc("chart/Chart.yaml", 1, 1)
    run = "run `helm template -- chart chart` and fix what it reports"
    plain = Finding("KV001", "helm template failed", at, fix=run)
    failed = Finding("KV001", "helm template failed", at, fix="fix the template", mark=Mark.HELM_FAILED)
    deps = Finding("KV001", "missing dependency", at, fix=run, mark=Mark.HELM_MISSING_DEPS)
    hinted = walk_values_hint([plain, failed, deps], "chart")
    assert hinted[0] == plain and hinted[2] == deps
    assert (
        hinted[1].fix
        == "fix the template; or lint it with the values it is deployed with: kvlint check chart --helm-values FILE"
    )


def test_a_walked_chart_gets_the_values_hint_for_a_template_failure_not_for_missing_dependencies(
    tmp_path: Path,
) -> None:
    """The real walk (helm on PATH): a ``required`` value missing gets the hint, a dependency missing does not."""
    import shutil

    import pytest

    from kvlint.render import load_inputs

    if shutil.which("helm") is None:
        pytest.skip("needs helm on PATH")
    template = (
        'kind: ConfigMap\napiVersion: v1\nmetadata:\n  name: {{ required "set model" .Values.model }}\n'
    )
    for name, deps in (
        ("needs-values", ""),
        ("needs-deps", "dependencies:\n  - name: engine\n    version: 0.1.0\n"),
    ):
        root = tmp_path / "walk" / name
        (root / "templates").mkdir(parents=True)
        (root / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n{deps}")
        (root / "values.yaml").write_text("model: ''\n" if not deps else "model: m\n")
        (root / "templates" / "cm.yaml").write_text(template)
    found = {f.mark: f.fix for f in load_inputs([str(tmp_path / "walk")]).findings if f.rule == "KV001"}
    assert set(found) == {Mark.HELM_FAILED, Mark.HELM_MISSING_DEPS}
    assert found[Mark.HELM_FAILED].endswith("--helm-values FILE")
    assert "--helm-values" not in found[Mark.HELM_MISSING_DEPS]


def test_the_unknown_options_past_the_first_ones_are_counted_by_the_field_the_reply_row_carries(
    tmp_path: Path,
) -> None:
    """The KV205 standing for a command line's unknown options past the first ones counts as their number in the
    admission webhook's UPDATE matching. The number was read back out of its message ("N more unknown options:
    ..."); it is the finding's ``stands_for`` now, carried to its Diagnostic and through the review worker's reply
    row (``kvlint.webhook.worker.reply_rows``, rebuilt as ``ReplyDiagnostic`` on the server). The same text
    without the field counts as one finding."""
    import dataclasses

    from kvlint.engines.options import MAX_UNKNOWN_OPTIONS, findings_stood_for
    from kvlint.webhook.worker import ReplyDiagnostic, reply_rows

    extra = 7
    unknown = ", ".join(f'"--made-up-{i}", "1"' for i in range(MAX_UNKNOWN_OPTIONS + extra))
    found = _rules(tmp_path, _VLLM.format(args=f'"--model", "facebook/opt-125m", {unknown}'))
    (more,) = [
        d for d in found if d.rule == "KV205" and d.message.startswith(f"{extra} more unknown options: ")
    ]
    assert more.stands_for == extra and findings_stood_for(more) == extra
    rows = reply_rows(found)
    replies = [ReplyDiagnostic(*row) for row in rows]
    assert [findings_stood_for(r) for r in replies if r.message == more.message] == [extra]
    assert sum(findings_stood_for(r) for r in replies if r.rule == "KV205") == MAX_UNKNOWN_OPTIONS + extra
    assert findings_stood_for(dataclasses.replace(more, stands_for=1)) == 1


def test_kv505_quotes_the_models_assumption_field_not_a_first_note_worded_as_one(tmp_path: Path) -> None:
    """KV505 (the model was taken from its name) was chosen by the model's first note starting with "ASSUMPTION";
    by :attr:`ModelSpec.assumption` now, set where resolution puts that note first. A re-upload known only by its
    name (offline) carries it; the same notes without the field give no KV505, and the field gives it whatever
    the notes say."""
    import dataclasses

    from kvlint.rules.runner import check_container

    path = tmp_path / "m.yaml"
    path.write_text(_VLLM.format(args='"--model", "RedHatAI/Llama-3.1-8B-Instruct"'), encoding="utf-8")
    opts = Options(allow_hub=False)
    (cr,) = run_check([str(path)], opts).containers
    assert cr.model is not None and cr.model.assumption == cr.model.notes[0]

    def kv505(model) -> list:
        return [
            d.message
            for d in check_container(dataclasses.replace(cr, model=model), opts)
            if d.rule == "KV505"
        ]

    (said,) = kv505(cr.model)
    assert "unchanged re-upload of meta-llama/Llama-3.1-8B-Instruct" in said
    assert kv505(dataclasses.replace(cr.model, assumption="")) == []
    reordered = dataclasses.replace(cr.model, notes=(*cr.model.notes[1:], cr.model.notes[0]))
    assert kv505(reordered) == [said]


def test_a_hugging_face_cache_folder_is_read_as_its_model_without_an_assumption(tmp_path: Path) -> None:
    """A path that is a Hugging Face cache folder (``models--<org>--<name>``) names its model exactly: its note
    comes first but states no assumption, so no KV505 (the path rule's other notes do)."""
    for path, assumed in (
        ("/workspace/models/models--meta-llama--Meta-Llama-3.1-8B-Instruct", False),
        ("/workspace/models/meta-llama--Meta-Llama-3.1-8B-Instruct", True),
    ):
        found = _rules(tmp_path, _VLLM.format(args=f'"--model", "{path}"'))
        assert any(d.rule == "KV505" for d in found) is assumed, path
