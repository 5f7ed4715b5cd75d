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
