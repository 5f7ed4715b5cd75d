"""A container running an NVIDIA NIM image in an ordinary workload (NVIDIA's ``nim-llm`` Helm chart renders a
StatefulSet) gets the note a NIMService's pod gets (KV503, info: the NIM launcher picks the engine from a model
profile kvlint does not read), and counts as not read in the sizing line, instead of passing in silence."""

from __future__ import annotations

from kvlint.load import load_text
from kvlint.pipeline import Options, run_documents
from kvlint.sizing import summarise

OFFLINE = Options(allow_hub=False)

# the pod nim-deploy's helm/nim-llm chart renders by default (nim-llm templates/deployment.yaml), trimmed
STATEFULSET = """apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: nim-llm
spec:
  template:
    spec:
      containers:
        - name: nim-llm
          image: "nvcr.io/nim/meta/llama3-8b-instruct:1.0.4"
          env:
            - name: NIM_CACHE_PATH
              value: "/model-store"
          resources:
            limits:
              nvidia.com/gpu: 1
        - name: sidecar
          image: busybox
"""


def _run(text: str):
    return run_documents(load_text(text, "nim.yaml"), OFFLINE)


def test_a_nim_container_in_a_statefulset_is_noted_and_not_read() -> None:
    result = _run(STATEFULSET)
    (note,) = [d for d in result.diagnostics if d.rule == "KV503"]
    image_line = (
        STATEFULSET.splitlines().index('          image: "nvcr.io/nim/meta/llama3-8b-instruct:1.0.4"') + 1
    )
    assert note.severity == "info" and (note.loc.file, note.loc.line) == ("nim.yaml", image_line)
    assert "StatefulSet" in note.message and "nvcr.io/nim/meta/llama3-8b-instruct:1.0.4" in note.message
    assert summarise(result).not_read == 1


def test_a_nim_image_given_its_own_command_or_ngc_vllm_is_not_noted() -> None:
    """A command replaces the NIM launcher (what it runs is read like any command); NGC's vLLM container is not a
    NIM image; a NIMService keeps its one note."""
    with_command = STATEFULSET.replace(
        "          env:\n", "          command: [sleep, infinity]\n          env:\n", 1
    )
    assert not [d for d in _run(with_command).diagnostics if d.rule == "KV503"]
    ngc = STATEFULSET.replace("nvcr.io/nim/meta/llama3-8b-instruct:1.0.4", "nvcr.io/nvidia/vllm:25.09-py3")
    assert not [d for d in _run(ngc).diagnostics if "NIM image" in d.message]
    service = (
        "apiVersion: apps.nvidia.com/v1alpha1\nkind: NIMService\nmetadata:\n  name: llm\nspec:\n"
        "  image:\n    repository: nvcr.io/nim/meta/llama-3.2-1b-instruct\n    tag: '1.12.0'\n"
        "  resources:\n    limits:\n      nvidia.com/gpu: 1\n"
    )
    notes = [d for d in _run(service).diagnostics if d.rule == "KV503"]
    assert len(notes) == 1 and "NIMService" in notes[0].message
