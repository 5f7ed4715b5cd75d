"""A Deployment whose serving container reads its settings from the ConfigMap ``llm-files``, in the four ways the
containers of fixtures/collected do (castai's vLLM chart's wrapper script, production-stack's ``--config`` file,
a variable taken from one key, TGI's ``envFrom``), for the tests of how kvlint reads such ConfigMaps
(tests/test_configmap_problems.py, tests/test_leftovers25.py). Made-up manifests in those shapes."""

from __future__ import annotations

#: The Deployment, with ``IMAGE`` and ``CONTAINER`` (the container's settings lines) to fill: one L4, the
#: ConfigMap mounted at /etc/llm.
POD = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: llm}
spec:
  selector: {matchLabels: {app: llm}}
  template:
    metadata: {labels: {app: llm}}
    spec:
      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}
      containers:
      - name: engine
        image: IMAGE
CONTAINER
        volumeMounts: [{name: files, mountPath: /etc/llm}]
        resources: {limits: {nvidia.com/gpu: 1}}
      volumes: [{name: files, configMap: {name: llm-files}}]
"""

#: shape -> (image, the container's settings lines): what each reads from the ConfigMap
SHAPES = {
    "script": ("vllm/vllm-openai:v0.11.0", '        command: ["/bin/bash", "/etc/llm/start.sh"]'),
    "config": ("vllm/vllm-openai:v0.11.0", '        args: ["--config", "/etc/llm/config.yaml"]'),
    "tgi": (
        "ghcr.io/huggingface/text-generation-inference:3.3.6",
        "        envFrom: [{configMapRef: {name: llm-files}}]",
    ),
    "var": (
        "vllm/vllm-openai:v0.11.0",
        '        args: ["--model", "$(MODEL)", "--max-model-len", "4096"]\n'
        "        env: [{name: MODEL, valueFrom: {configMapKeyRef: {name: llm-files, key: MODEL}}}]",
    ),
}


def pod(shape: str) -> str:
    """The Deployment's text with the container of ``shape`` (a key of :data:`SHAPES`)."""
    image, container = SHAPES[shape]
    return POD.replace("IMAGE", image).replace("CONTAINER", container)
