"""A one-container vLLM Deployment (an nvidia-l4 node, one GPU) written and checked offline, for the tests of
vLLM's gRPC server commands (tests/test_grpc_release45.py, tests/test_grpc_options46.py,
tests/test_grpc_launcher_review46.py, tests/test_serve_grpc_review46.py)."""

from __future__ import annotations

from pathlib import Path

from kvlint.pipeline import Options, run_check
from kvlint.types import CheckResult, ContainerResult

#: the line of ``command:``; ``args:`` is on the next one
COMMAND_LINE = 11


def vllm_deployment(directory: Path, tag: str, command: str, args: str, name: str = "vllm.yaml") -> Path:
    """Write ``directory/name``: a Deployment whose one container runs ``vllm/vllm-openai:tag`` with ``command``
    and ``args`` as written after ``command:`` (line :data:`COMMAND_LINE`) and ``args:`` (the next line; a block
    list written as ``"\\n        - ..."`` starts on the line after). Returns the path."""
    path = directory / name
    sep = "" if args.startswith("\n") else " "
    path.write_text(
        "apiVersion: apps/v1\n"
        "kind: Deployment\n"
        "metadata: {name: g}\n"
        "spec:\n"
        "  template:\n"
        "    spec:\n"
        "      nodeSelector: {cloud.google.com/gke-accelerator: nvidia-l4}\n"
        "      containers:\n"
        "      - name: v\n"
        f"        image: vllm/vllm-openai:{tag}\n"
        f"        command: {command}\n"
        f"        args:{sep}{args}\n"
        "        resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    return path


def check(path: Path) -> CheckResult:
    """``kvlint check PATH`` without hub access."""
    return run_check([str(path)], Options(allow_hub=False))


def vllm_container(res: CheckResult) -> ContainerResult:
    """The result's one container, which must have been read as a vLLM command."""
    (cr,) = res.containers
    assert cr.serving is not None and cr.serving.engine == "vllm"
    return cr
