"""Reports and CLI as a platform engineer reads them (pass ux54): what a first run on real manifests and on
hostile inputs showed to be confusing, each checked on the input itself."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/compute-class: my-gpus
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        args: ["--model", "meta-llama/Llama-3.1-8B-Instruct"]
        resources:
          limits:
            nvidia.com/gpu: 1
"""


def _run(path: Path):  # type: ignore[no-untyped-def]
    return run_check([str(path)], Options(allow_hub=False))


def test_a_document_kubectl_refuses_for_a_mapping_key_yields_only_its_parse_finding(tmp_path: Path) -> None:
    """A Deployment with a key that is itself a mapping (``{a: b}: c``) is refused whole by kubectl ("invalid map
    key"): nothing in it runs. kvlint reported the KV001 and then linted the workload anyway: KV501 "no ComputeClass
    ... among the inputs", KV202 and a KV005 on ``<complex key at line 17>``. The refused document now yields its
    KV001 only; the next document in the same file is linted as before."""
    bad = DEPLOYMENT.format(name="refused") + "        {a: b}: c\n"
    f = tmp_path / "two.yaml"
    f.write_text(bad + "---\n" + DEPLOYMENT.format(name="kept"))
    res = _run(f)
    refused = [d for d in res.diagnostics if d.loc is not None and d.loc.line <= bad.count("\n")]
    assert [(d.rule, d.loc.line) for d in refused] == [("KV001", 17)]
    assert "invalid map key" in refused[0].message
    kept = [d for d in res.diagnostics if d.loc is not None and d.loc.line > bad.count("\n")]
    assert {d.rule for d in kept} >= {"KV501"}
    assert all("Deployment/kept" in (d.object or "") for d in kept)


COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
VLLM_PD = COLLECTED / "zhaotyer__lws_usage__vllm_pd.yaml"


def _proxy_notes(res):  # type: ignore[no-untyped-def]
    return [d for d in res.diagnostics if d.rule == "KV506" and "is sized: " in d.message]


def test_a_file_whose_only_serving_container_is_a_request_proxy_says_what_it_saw(tmp_path: Path) -> None:
    """zhaotyer/lws_usage's vLLM P/D balancer Deployment, alone in its file: ``vllm/vllm-openai`` running
    ``disagg_prefill_proxy_server.py`` with no GPU. kvlint set it aside as a request proxy and said nothing at all
    ("0 errors, 0 warnings ... 0 serving containers"): a user could not tell whether it was read. It now gets one
    info naming the container and the proxy, that nothing is sized, and what would make kvlint read it as an
    engine; with its GPU request it is read as one (no such note), and beside the engines it balances (the
    whole file) it is said nothing of."""
    lines = VLLM_PD.read_text().splitlines(keepends=True)
    assert "disagg_prefill_proxy_server.py" in lines[25] and lines[30].startswith("---")
    alone = tmp_path / "lb.yaml"
    alone.write_text("".join(lines[:30]))
    res = _run(alone)
    assert res.containers == []
    (note,) = _proxy_notes(res)
    assert note.severity == "info" and note.object == "Deployment/vllm-lb-main"
    assert "container vllm-minilb" in note.message and "disagg_prefill_proxy_server.py" in note.message
    assert "nothing in this Deployment is sized" in note.message
    assert "nvidia.com/gpu" in (note.fix or "")
    assert note.loc is not None and note.loc.file == str(alone) and 20 <= note.loc.line <= 26
    gpu = tmp_path / "lb-gpu.yaml"
    gpu.write_text("".join(lines[:30]) + "          resources: {limits: {nvidia.com/gpu: 1}}\n")
    assert _proxy_notes(_run(gpu)) == []
    whole = _run(VLLM_PD)
    assert whole.containers and _proxy_notes(whole) == []


def test_an_image_named_as_an_engine_proxy_without_a_gpu_is_said_so(tmp_path: Path) -> None:
    """An image whose name says it is an engine's proxy (``vllm-latency-proxy``, as ArchanaChetan07's platform
    builds) requesting no GPU: the note names the image; another image in the same shape gets none."""
    doc = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: p}\nspec:\n  template:\n    spec:\n"
        "      containers:\n      - name: proxy\n        image: IMAGE\n"
    )
    f = tmp_path / "p.yaml"
    f.write_text(doc.replace("IMAGE", "ghcr.io/acme/vllm-latency-proxy:latest"))
    (note,) = _proxy_notes(_run(f))
    assert "ghcr.io/acme/vllm-latency-proxy:latest" in note.message and "vLLM request proxy" in note.message
    assert note.loc is not None and note.loc.line == 9
    f.write_text(doc.replace("IMAGE", "nginx:1.27"))
    assert _run(f).diagnostics == []


def test_the_long_key_remedy_says_what_each_limit_is() -> None:
    """The webhook's KV001 for a key past the YAML reader's 1,024 characters told the user "Kubernetes takes a
    label or annotation key of at most 317 characters" whatever mapping held the key, and read as an unexplained
    number. The remedy now names the API server's limit for the mapping the key is in, with its parts: a label or
    annotation key (a qualified name: prefix of at most 253, '/', name of at most 63, apimachinery's
    IsQualifiedName), a ConfigMap or Secret data key (at most 253, IsConfigMapKey), elsewhere the reader's own."""
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from test_webhook_long_key import _review

    from kvlint.webhook.worker import MAX_YAML_KEY_CHARS, long_key_fix

    _, result = _review(1100)
    (kv001,) = [d for d in result.diagnostics if d.rule == "KV001"]
    assert "annotation key longer than 317 characters" in (kv001.fix or "")
    assert "253 + 1 + 63" in (kv001.fix or "") and "label" not in (kv001.fix or "")
    data = long_key_fix("data", "ConfigMap")
    assert "253 characters" in data and "317" not in data
    other = long_key_fix("spec.values")
    assert f"at most {MAX_YAML_KEY_CHARS - 2:,} characters" in other and "317" not in other


def _json_cm(tmp_path: Path, name: str, data_line: str) -> Path:
    f = tmp_path / name
    f.write_text(
        '{"apiVersion": "v1", "kind": "ConfigMap",\n "metadata": {"name": "cm"},\n' + data_line + "\n",
        encoding="utf-8",
    )
    return f


def test_a_json_manifest_with_del_or_line_separator_in_a_string_is_read_as_kubectl_reads_it(
    tmp_path: Path,
) -> None:
    """JSON takes DEL (U+007F), the C1 controls and U+2028/U+2029 raw inside a string, and kubectl decodes a
    manifest starting with ``{`` as JSON; the YAML reader does not (PyYAML refuses U+007F-U+009F raw, counts U+2028
    as a line break). ``kvlint check`` said "YAML syntax error: unacceptable character #x007f" of a ConfigMap kubectl
    applies, and of a U+2028 in a key "did not find expected ',' or '}'" at line 4 of a 3-line file. The webhook
    already wrote these characters escaped; the CLI now reads them as JSON means them (the value keeps the
    character), and one outside a string, which kubectl refuses, is a KV001 at its line and column naming the
    character escaped."""
    from kvlint.load import load_paths

    for raw in ("\x7f", "\u2028", "\x85", "\x9b"):
        f = _json_cm(tmp_path, "ok.json", f' "data": {{"k{raw}": "x{raw}y", "z": "w"}}}}')
        res = load_paths([str(f)])
        assert res.findings == [], (repr(raw), res.findings)
        (doc,) = res.documents
        assert doc.data["data"] == {f"k{raw}": f"x{raw}y", "z": "w"}
        assert doc.data["data"].locs["z"].line == 3  # type: ignore[attr-defined]
    bad = _json_cm(tmp_path, "bad.json", ' "data": {"k": "xy"}, \u2028 "z": 1}')
    (kv001,) = load_paths([str(bad)]).findings
    assert kv001.rule == "KV001" and (kv001.loc.line, kv001.loc.column) == (3, 23)
    assert "U+2028 (LINE SEPARATOR)" in kv001.message and "\u2028" not in kv001.message + (kv001.fix or "")
    assert "\\u2028" in (kv001.fix or "")


AMD_NO_API = COLLECTED / (
    "umesh-khatiwada__aibrix-vllm-deployment__v2__aibrix__aigateway-integration__deepseek-model-amd.yaml"
)


def test_a_kubernetes_object_without_apiversion_is_refused_at_its_line(tmp_path: Path) -> None:
    """umesh-khatiwada/aibrix-vllm-deployment's AMD Deployment starts at ``kind: Deployment`` with no
    ``apiVersion``: kubectl refuses it ("Object 'apiVersion' is missing"), yet kvlint sized it against the ROCm
    fleet and said nothing of the missing line. It is now a KV001 error at the document's first line naming the
    apiVersion to add (the rest of the document is still checked: the line to add changes none of it); the same
    Deployment with ``apiVersion: apps/v1`` has no KV001, and a kustomization file or Helm values with a ``kind:``
    setting are no Kubernetes object."""
    text = AMD_NO_API.read_text().split("\n---\n")[0] + "\n"  # the Deployment (a Service and PVC follow)
    assert text.startswith("kind: Deployment\n") and "\napiVersion:" not in text
    f = tmp_path / "amd.yaml"
    f.write_text("---\n# a comment\n" + text)
    res = _run(f)
    (kv001,) = [d for d in res.diagnostics if d.rule == "KV001"]
    assert (
        kv001.severity == "error" and kv001.loc is not None and (kv001.loc.line, kv001.loc.column) == (3, 1)
    )
    assert "has no apiVersion" in kv001.message and "refuse" in kv001.message
    assert kv001.fix == "add apiVersion: apps/v1 above kind: Deployment"
    assert res.containers
    f.write_text("apiVersion: apps/v1\n" + text)
    fixed = _run(f)
    assert fixed.containers and not [d for d in fixed.diagnostics if d.rule == "KV001"]
    values = tmp_path / "values.yaml"
    values.write_text("kind: Deployment\nreplicaCount: 1\nimage: {repository: vllm/vllm-openai}\n")
    assert not [d for d in _run(values).diagnostics if d.rule == "KV001"]
    kust = tmp_path / "kustomization.yaml"
    kust.write_text("kind: Kustomization\nmetadata: {name: k}\nresources: []\n")
    assert not [d for d in _run(kust).diagnostics if d.rule == "KV001"]


def test_explain_an_unknown_rule_suggests_the_close_ones_not_every_reason() -> None:
    """``kvlint explain KV999`` or a misspelt rule name answered with one 700-character sentence listing every
    reason of the sizing line. Now, as ruff's ``rule`` command does for a misspelt code: a misspelt name gets the
    closest rule names with their ids, an id-shaped word the catalogue's range, and the reasons are listed only
    for words that read like one and match none."""
    from click.testing import CliRunner

    from kvlint.cli import main
    from kvlint.rules.catalog import load_catalog

    ids = sorted(load_catalog())
    kv103 = load_catalog()["KV103"].name
    r = CliRunner().invoke(main, ["explain", "KV999"])
    assert r.exit_code == 2 and f"from {ids[0]} to {ids[-1]}" in r.stderr and "model unknown" not in r.stderr
    near = kv103[:-3]  # the name with its last letters lost
    r = CliRunner().invoke(main, ["explain", near])
    assert (
        r.exit_code == 2 and f"did you mean {kv103} (KV103)" in r.stderr and "model unknown" not in r.stderr
    )
    r = CliRunner().invoke(main, ["explain", "nothing like any"])
    assert r.exit_code == 2 and "'model unknown'" in r.stderr


def test_check_help_groups_its_options_under_headings() -> None:
    """``kvlint check --help`` listed some thirty options in declaration order (``--accelerator`` and
    ``--gpu-memory`` after the worker count, ``--fail-on`` apart from ``--exit-zero``). As ruff's ``check --help``
    does, they are now under headings; every option is shown once, the usage line and exit codes as before."""
    import re

    import click
    from click.testing import CliRunner

    from kvlint.cli import main

    r = CliRunner().invoke(main, ["check", "--help"], terminal_width=100)
    assert r.exit_code == 0
    out = r.stdout
    headings = re.findall(r"^([A-Z][A-Za-z ]+):$", out, re.M)
    assert (
        headings[:2] == ["Output", "Exit status"]
        and "GPU and model" in headings
        and "Options" not in headings
    )
    gpu = out.split("\nGPU and model:\n", 1)[1].split("\n\n", 1)[0]
    assert "--accelerator ID" in gpu and "--gpu-memory QTY" in gpu and "--engine-version" in gpu
    command = main.get_command(click.Context(main), "check")
    assert command is not None
    listed = out.split("\nOutput:\n", 1)[1]
    for param in command.params:
        if isinstance(param, click.Option):
            flag = max(param.opts, key=len)
            assert len(re.findall(rf"^  (?:-\w, )?{re.escape(flag)}(?=[\s/])", listed, re.M)) == 1, flag


def test_a_refused_computeclass_is_not_read_and_kv501_says_none_read_names_a_gpu(tmp_path: Path) -> None:
    """A ComputeClass that kubectl refuses (a key that is a mapping) is never created, so the pod selecting it is
    not placed on its GPU (before, kvlint read it and sized the pod on an L4); KV501 no longer says flatly that
    no ComputeClass of that name is among the inputs, which the user could see it was: it says none that kvlint
    read names a GPU (the KV001 above it says why that one was not read)."""
    cc = (
        "apiVersion: cloud.google.com/v1\nkind: ComputeClass\nmetadata:\n  name: my-gpus\nspec:\n  priorities:\n"
        "  - gpu:\n      type: nvidia-l4\n      count: 1\n"
    )
    f = tmp_path / "cc.yaml"
    f.write_text(cc + "  {x: y}: z\n---\n" + DEPLOYMENT.format(name="vllm2"))
    res = _run(f)
    assert [d.loc.line for d in res.diagnostics if d.rule == "KV001" and d.loc] == [10]
    (kv501,) = [d for d in res.diagnostics if d.rule == "KV501"]
    assert "ComputeClass my-gpus" in kv501.message and "that kvlint read among the inputs" in kv501.message
    f.write_text(cc + "---\n" + DEPLOYMENT.format(name="vllm2"))
    assert not [d for d in _run(f).diagnostics if d.rule == "KV501"]
