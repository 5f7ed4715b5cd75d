"""KV404 when ``/dev/shm`` is mounted from a volume the pod does not define (kvlint.rules.facts.undefined_shm_volume):
the finding names the missing volume at the mount's line, instead of saying nothing is mounted there."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check

_POD = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: llm
spec:
  template:
    spec:
      nodeSelector: {{cloud.google.com/gke-accelerator: nvidia-l4}}
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        args: ["--model", "Qwen/Qwen2.5-0.5B-Instruct", "--tensor-parallel-size", "2", "--max-model-len", "4096"]
        resources: {{limits: {{nvidia.com/gpu: "2"}}}}
        volumeMounts:
        - mountPath: /dev/shm
          name: dshm
{volumes}"""


def _kv404(tmp_path: Path, volumes: str) -> list:
    p = tmp_path / "pod.yaml"
    p.write_text(_POD.format(volumes=volumes))
    r = run_check([str(p)], Options(allow_hub=False))
    return [d for d in r.diagnostics if d.rule == "KV404"]


def test_a_shm_mount_of_an_undefined_volume_names_it_at_the_mount(tmp_path: Path) -> None:
    (d,) = _kv404(tmp_path, "")
    assert "mounts from volume 'dshm', but this pod defines no volume of that name" in d.message
    assert d.loc is not None and d.loc.line == 15  # the '- mountPath: /dev/shm' entry
    assert "define the volume in this pod's volumes: {name: dshm, emptyDir: {medium: Memory" in d.fix


def test_a_defined_volume_that_is_not_memory_keeps_the_plain_message(tmp_path: Path) -> None:
    (d,) = _kv404(tmp_path, "      volumes:\n      - name: dshm\n        emptyDir: {}\n")
    assert "no memory-backed volume is mounted there" in d.message
    assert "defines no volume" not in d.message


def test_a_memory_backed_volume_is_quiet(tmp_path: Path) -> None:
    assert not _kv404(tmp_path, "      volumes:\n      - name: dshm\n        emptyDir: {medium: Memory}\n")
