"""Review of branch ux54 (pass review54E): defects found in what it merged, each test failing before its fix."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from kvlint.load import load_text
from kvlint.pipeline import Options, run_check

#: CPU seconds within which a hostile shape must be read (as tests/test_hostile_shapes.py: the quadratic scans
#: these tests guard against took tens of seconds on the shapes below, the linear ones take milliseconds)
LIMIT_S = 3.0


def test_a_json_line_of_escaped_quotes_left_open_is_scanned_once() -> None:
    """The JSON-escaping pass (``kvlint.load._json_raw_escaped``) matched each string with a pattern that needs its
    closing quote: on a string left open it failed, and ``finditer`` tried again from every escaped quote after it,
    each attempt running to the end of the line. ``{"a\\"\\"...`` with one DEL, 64 KB on one line, cost 14 s of
    CPU (32 KB: 3.4 s); a hostile file in a pull request the GitHub Action lints is such input. The scan now matches
    at every quote and reads an open string as no string: the DEL is the KV001 it was, at its line and column."""
    for lines in (1, 4):
        body = "\n".join('"a' + '\\"' * 32_000 for _ in range(lines))
        text = "{\n" + body + " \x7f\n"
        t = time.process_time()
        result = load_text(text, "hostile.json")
        dt = time.process_time() - t
        assert dt < LIMIT_S, (lines, dt)
        (kv001,) = result.findings
        assert kv001.rule == "KV001" and "U+007F (DELETE) outside a string" in kv001.message
        assert (kv001.loc.line, kv001.loc.column) == (1 + lines, len(body.rsplit("\n", 1)[-1]) + 2)


def test_a_json_string_closed_after_escaped_quotes_keeps_its_raw_characters() -> None:
    """The escaping pass still reads a closed string whole, escaped quotes and backslashes included: its DEL and
    U+2028 are characters of the value, and a value ending in an escaped backslash closes where JSON closes it."""
    text = '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},\n "data": {"k": "a\\"\x7f\\\\", "l": "\u2028"}}\n'
    result = load_text(text, "ok.json")
    assert result.findings == []
    (doc,) = result.documents
    assert doc.data["data"] == {"k": 'a"\x7f\\', "l": "\u2028"}


def test_the_proxy_note_on_a_dynamo_frontend_or_planner_reads_as_one_sentence(tmp_path: Path) -> None:
    """ux54's KV503 note for a file whose only serving-looking container loads no model wrote each Dynamo module's
    description with a trailing comma into a sentence that adds its own: "runs NVIDIA Dynamo's frontend, the HTTP
    server that routes requests to the workers,, which loads no model". Each module, run as a Dynamo deployment's
    frontend or planner Deployment runs it (``python3 -m MODULE`` in a shell), gets one well-formed note."""
    for module, what in (
        ("dynamo.frontend", "NVIDIA Dynamo's frontend"),
        ("dynamo.planner.planner_sla", "NVIDIA Dynamo's planner"),
        ("planner_sla", "NVIDIA Dynamo's SLA planner"),
        ("dynamo.router", "NVIDIA Dynamo's router"),
        ("sglang_router.launch_router", "the SGLang router"),
    ):
        f = tmp_path / "fe.yaml"
        f.write_text(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: fe}\nspec:\n  template:\n    spec:\n"
            "      containers:\n      - name: fe\n        image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0\n"
            '        command: ["/bin/sh", "-c"]\n'
            f'        args: ["python3 -m {module} --port 8000"]\n'
        )
        (note,) = [d for d in run_check([str(f)], Options(allow_hub=False)).diagnostics if d.rule == "KV506"]
        assert f"container fe runs {what}" in note.message, note.message
        assert ",," not in note.message and ", ," not in note.message, note.message
        assert "which loads no model and requests no GPU" in note.message


def _long_key_kv001(obj: dict[str, Any]) -> Any:
    from kvlint.webhook.request_options import webhook_options
    from kvlint.webhook.worker import lint_object

    (kv001,) = [
        d for d in lint_object(obj, "review.json", webhook_options()).diagnostics if d.rule == "KV001"
    ]
    return kv001


def test_the_long_key_remedy_names_the_api_servers_limit_by_where_the_key_is() -> None:
    """ux54's remedy for a key past the YAML reader's 1,024 characters chose the API server's limit from the last
    part of the path alone: a custom resource's ``spec.data`` was told "the API server refuses a ConfigMap or
    Secret data key longer than 253 characters" (no ConfigMap there), and a pod template's ``nodeSelector`` (a
    LeaderWorkerSet's, which the API server does not validate until the pods are made) "shorten the key to at most
    1,022 characters", though the API server refuses a nodeSelector key past 317 (``ValidatePodSpec`` calls
    ``ValidateLabels`` on it). The remedy now says the label-key limit for ``nodeSelector`` and ``matchLabels``
    and the data-key one only for a ConfigMap's or Secret's own data."""
    key = "k" * 1100
    lws = {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "metadata": {"name": "lws"},
        "spec": {
            "leaderWorkerTemplate": {
                "workerTemplate": {
                    "spec": {"nodeSelector": {key: "x"}, "containers": [{"name": "c", "image": "nginx"}]}
                }
            }
        },
    }
    fix = _long_key_kv001(lws).fix or ""
    assert "nodeSelector key longer than 317 characters" in fix and "1,022" not in fix, fix
    custom = {"apiVersion": "example.com/v1", "kind": "Model", "metadata": {"name": "m"}, "data": {key: "x"}}
    fix = _long_key_kv001(custom).fix or ""
    assert "ConfigMap" not in fix and "253" not in fix and "at most 1,022 characters" in fix, fix
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {key: "x"}}
    fix = _long_key_kv001(cm).fix or ""
    assert "ConfigMap data key longer than 253 characters" in fix, fix
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {key: "x"}}
    assert "Secret stringData key longer than 253 characters" in (_long_key_kv001(secret).fix or "")


def test_explain_shows_an_unknown_word_as_inert_text() -> None:
    """``kvlint explain`` echoed the unknown word as given into its usage error: an ANSI escape in it (a rule id
    taken from a pull request comment by a bot, say) ran on the terminal that read the error. ux54 rewrote the
    message and clipped the word; it is now also shown escaped, as kvlint shows any text it did not write."""
    from click.testing import CliRunner

    from kvlint.cli import main

    r = CliRunner().invoke(main, ["explain", "\x1b[2J\x1b[31mKV9\u202e99"])
    assert r.exit_code == 2
    assert "\x1b" not in r.stderr and "\u202e" not in r.stderr and "\\x1b[2J" in r.stderr, r.stderr


def test_a_helm_template_starting_with_braces_is_a_template_not_json() -> None:
    """ux54 read a file as JSON when its first character is ``{`` (kubectl's sniff), so a Helm template that
    opens with ``{{- if .Values.x }}`` and holds a U+2028 (pasted into a comment) or a DEL was "error KV001 not
    valid JSON: the character U+2028 (LINE SEPARATOR) outside a string; kubectl's JSON decoder refuses the file",
    where kvlint said before that it is a template to render (KV002). A JSON object's ``{`` is followed by a key's
    ``"`` or its ``}``: only such text is read as JSON; a JSON manifest is still read as JSON means it."""
    for raw in ("\u2028", "\x7f"):
        template = (
            "{{- if .Values.enabled }}\n"
            f"# one replica{raw} per GPU\n"
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  a: b\n{{- end }}\n"
        )
        result = load_text(template, "templates/cm.yaml")
        assert [f.rule for f in result.findings] == ["KV002"], (repr(raw), result.findings)
    spaced = (
        '{ \n  "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "x\x7f"}}\n'
    )
    result = load_text(spaced, "cm.json")
    assert result.findings == [] and result.documents[0].data["data"] == {"k": "x\x7f"}


def test_a_raw_character_after_a_json_backslash_is_an_invalid_escape() -> None:
    """JSON escapes only ``"\\/bfnrtu``: kubectl's decoder refuses a string whose backslash comes before a DEL or a
    U+2028 ("invalid character ... in string escape code"). ux54's escaping pass wrote the character as ``\\u007f``
    behind that backslash, which the YAML reader reads as a backslash and five letters: the file kubectl refuses
    passed with no finding (before ux54 the DEL was a YAML syntax error). It is now the KV001 at the character;
    an escaped backslash before it (``\\\\``) leaves the character raw in the value, which kubectl takes."""
    for raw in ("\x7f", "\u2028", "\x85"):
        bad = (
            '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},\n "data": {"k": "ab\\'
            + raw
            + '"}}\n'
        )
        result = load_text(bad, "cm.json")
        (kv001,) = result.findings
        assert kv001.rule == "KV001" and "after a backslash" in kv001.message, (repr(raw), kv001)
        assert (kv001.loc.line, kv001.loc.column) == (2, bad.split("\n")[1].index(raw) + 1)
        assert result.documents == []
        good = bad.replace("ab\\" + raw, "ab\\\\" + raw)
        result = load_text(good, "cm.json")
        assert result.findings == [] and result.documents[0].data["data"] == {"k": "ab\\" + raw}


def test_a_strategic_merge_patch_without_apiversion_is_a_patch_not_a_refused_object(tmp_path: Path) -> None:
    """``kubectl kustomize`` applies a strategic-merge patch with no ``apiVersion`` to the objects its ``patches``
    entry's ``target`` selects. Named alone, such a patch setting a vLLM container's args got ux54's "error KV001
    this Deployment has no apiVersion: kubectl and the API server refuse it" beside kvlint's own KV002 "it is a
    kustomize strategic-merge patch". The patch now gets its KV002 only; a whole Deployment without apiVersion
    (a selector, an image) keeps its KV001."""
    patch = (
        "kind: Deployment\nmetadata:\n  name: vllm\nspec:\n  template:\n    spec:\n      containers:\n"
        '      - name: vllm\n        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]\n'
    )
    f = tmp_path / "patch-vllm.yaml"
    f.write_text(patch)
    rules = [d.rule for d in run_check([str(f)], Options(allow_hub=False)).diagnostics]
    assert "KV002" in rules and "KV001" not in rules, rules
    whole = patch.replace("spec:\n  template:", "spec:\n  selector: {matchLabels: {app: vllm}}\n  template:")
    f.write_text(
        whole.replace("      - name: vllm\n", "      - name: vllm\n        image: vllm/vllm-openai:v0.8.5\n")
    )
    rules = [d.rule for d in run_check([str(f)], Options(allow_hub=False)).diagnostics]
    assert "KV001" in rules and "KV002" not in rules, rules


def test_chart_values_that_set_kind_and_metadata_are_not_a_refused_object(tmp_path: Path) -> None:
    """ux54 took any mapping with a ``kind`` and a ``metadata`` mapping but no ``apiVersion`` for a Kubernetes
    object kubectl refuses, on the assumption that Helm values have no ``metadata`` mapping: a chart's
    ``values.yaml`` choosing its workload kind and pod metadata (``kind: StatefulSet``, ``metadata: {annotations:
    {}}``), named to kvlint check beside its Chart.yaml, was "error KV001 this StatefulSet has no apiVersion:
    kubectl and the API server refuse it" (before ux54: no finding). A file named as values gets no such error; the
    same document in a manifest file still does."""
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (tmp_path / "templates").mkdir()
    text = (
        "kind: StatefulSet\nmetadata:\n  annotations: {}\nreplicaCount: 1\n"
        "image:\n  repository: vllm/vllm-openai\n  tag: v0.8.5\n"
    )
    for name in ("values.yaml", "values-gpu.yml"):
        f = tmp_path / name
        f.write_text(text)
        rules = [d.rule for d in run_check([str(f)], Options(allow_hub=False)).diagnostics]
        assert "KV001" not in rules, (name, rules)
    f = tmp_path / "statefulset.yaml"
    f.write_text(text)
    assert "KV001" in [d.rule for d in run_check([str(f)], Options(allow_hub=False)).diagnostics]
