#!/usr/bin/env python3
"""Targeted hostile shapes for every reader of kvlint (issue 14), beyond the random mutations of
``tools/fuzz_pipeline.py``.

Families of cases (each a manifest text and a file label):

* ``retype``: in one real manifest per workload kind (the shared corpus and the fixtures: Deployments,
  StatefulSets, Jobs, LeaderWorkerSet, JobSet, KServe InferenceService / ServingRuntime / LLMInferenceService,
  KAITO Workspace / InferenceSet, KubeAI Model, RayService / RayCluster, NIMService, VLLMRuntime,
  RoleBasedGroup, Dynamo, ...), every value at every path (up to a cap) replaced in turn by each of a few
  wrong types (null, an int, a string, a list, a mapping, a boolean, a float);
* ``flag``: each sizing flag of vLLM, TGI and SGLang (as ``--flag value``, ``--flag=value`` and as the
  environment variable the engine reads) set to huge, negative, fractional, NaN/inf, exponent, empty and
  5,000-digit values;
* ``quantity``: GPU counts, memory limits and ``/dev/shm`` sizes of absurd size (``1e400Gi``,
  ``nvidia.com/gpu: 1e9``, negative, NaN);
* ``env``: ``$(VAR)`` self-references, cycles and chains, expansions of megabytes;
* ``shell``: ``sh -c`` scripts with pathological quoting, nesting, unterminated quotes, here-docs, huge
  scripts;
* ``model``: model references that are absolute paths, ``..`` traversals, ``file://``, ``oci://``,
  ``hf://``, ``pvc://``, ``s3://`` URIs, very long, with NUL and control characters, ``--config`` and
  ``--kaito-config-file`` naming server files;
* ``structure``: many documents, deep nesting, alias bombs, huge strings, many containers.

:func:`run_case` loads and lints a case with the webhook's options (no hub, no local paths) and reports a
traceback, an exception hidden in KV503, more than ``limit_s`` seconds, a resident-memory jump, and any
access to the machine's disk outside kvlint's own package or the Python installation (``open``, ``stat``,
directory listings: via an audit hook and a wrapped ``os.stat``), network (``socket.*``) or process start
(``subprocess``/``os.exec``/``os.system``) made while the case runs.

Usage: python tools/hostile_shapes.py [--family NAME ...] [--limit S] [--max-paths N] [--cli]
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import resource
import signal
import sys
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

from kvlint.engines.command import HELD_LINES  # noqa: E402
from kvlint.load import load_text  # noqa: E402
from kvlint.pipeline import INTERNAL_ERROR, run_documents  # noqa: E402
from kvlint.webhook.request_options import webhook_options  # noqa: E402

Case = tuple[str, str, str]  # (description, file label, text)

WRONG: list[Any] = [None, 5, "x", [], {}, [5], {"a": 5}, True, 1.5, -1]

HUGE_VALUES = [
    "0",
    "-1",
    "-99999999999999999999",
    "1e12",
    "1e308",
    "1e400",
    "-1e400",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "Infinity",
    "0.5",
    "1.0000000001",
    "",
    "0x10",
    "1_000",
    "9" * 40,
    "9" * 5000,
    "1" + "0" * 300,
    "2147483648",
    "9223372036854775808",
    "1e-400",
    "$(X)",
    "{{ .Values.x }}",
    "abc",
    "\x00",
]

VLLM_FLAGS = [
    "--max-model-len",
    "--tensor-parallel-size",
    "--pipeline-parallel-size",
    "--data-parallel-size",
    "--data-parallel-size-local",
    "--max-num-seqs",
    "--max-num-batched-tokens",
    "--gpu-memory-utilization",
    "--block-size",
    "--swap-space",
    "--cpu-offload-gb",
    "--kv-cache-memory-bytes",
    "--max-seq-len-to-capture",
    "--num-gpu-blocks-override",
    "--max-lora-rank",
    "--max-loras",
    "--max-cpu-loras",
    "--num-scheduler-steps",
    "--speculative-config",
    "--hf-overrides",
    "--rope-scaling",
    "--limit-mm-per-prompt",
    "--compilation-config",
    "--kv-cache-dtype",
    "--dtype",
    "--quantization",
    "--max-num-partial-prefills",
    "--long-prefill-token-threshold",
    "--num-lookahead-slots",
    "--seed",
    "--port",
]
TGI_FLAGS = [
    "--max-total-tokens",
    "--max-input-tokens",
    "--max-input-length",
    "--max-batch-prefill-tokens",
    "--max-batch-total-tokens",
    "--max-batch-size",
    "--num-shard",
    "--cuda-memory-fraction",
    "--max-concurrent-requests",
    "--quantize",
    "--rope-factor",
    "--max-best-of",
    "--max-stop-sequences",
    "--waiting-served-ratio",
]
TGI_ENV = [
    "MAX_TOTAL_TOKENS",
    "MAX_INPUT_TOKENS",
    "MAX_INPUT_LENGTH",
    "MAX_BATCH_PREFILL_TOKENS",
    "MAX_BATCH_TOTAL_TOKENS",
    "NUM_SHARD",
    "CUDA_MEMORY_FRACTION",
    "MAX_BATCH_SIZE",
    "QUANTIZE",
    "ROPE_FACTOR",
]
SGLANG_FLAGS = [
    "--context-length",
    "--tp-size",
    "--tp",
    "--dp-size",
    "--pp-size",
    "--ep-size",
    "--mem-fraction-static",
    "--max-running-requests",
    "--max-total-tokens",
    "--chunked-prefill-size",
    "--max-prefill-tokens",
    "--page-size",
    "--cuda-graph-max-bs",
    "--kv-cache-dtype",
    "--nnodes",
    "--node-rank",
    "--json-model-override-args",
    "--quantization",
    "--speculative-num-draft-tokens",
]
VLLM_ENV = [
    "VLLM_ALLOW_LONG_MAX_MODEL_LEN",
    "VLLM_CPU_KVCACHE_SPACE",
    "MAX_MODEL_LEN",
    "TENSOR_PARALLEL_SIZE",
    "GPU_MEMORY_UTILIZATION",
    "MAX_NUM_SEQS",
    "VLLM_ATTENTION_BACKEND",
    "VLLM_USE_V1",
]


def _deployment(
    image: str, args: list[str], env: list[dict[str, Any]] | None = None, **extra: Any
) -> dict[str, Any]:
    c: dict[str, Any] = {
        "name": "engine",
        "image": image,
        "args": args,
        "resources": {"limits": {"nvidia.com/gpu": 1}},
    }
    if env:
        c["env"] = env
    c.update(extra.pop("container", {}))
    spec: dict[str, Any] = {
        "nodeSelector": {"cloud.google.com/gke-accelerator": "nvidia-l4"},
        "containers": [c],
    }
    spec.update(extra.pop("pod", {}))
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "hostile", "namespace": "default"},
        "spec": {"replicas": 1, "template": {"spec": spec}},
    }


VLLM_IMAGE = "vllm/vllm-openai:v0.11.0"
TGI_IMAGE = "ghcr.io/huggingface/text-generation-inference:3.3.4"
SGLANG_IMAGE = "lmsysorg/sglang:v0.5.3-cu126"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"


def _vllm_args(*extra: str) -> list[str]:
    return ["--model", MODEL, *extra]


def _dump(doc: Any) -> str:
    return json.dumps(doc, indent=1)


# ------------------------------------------------------------------------------------------ families


def family_flag() -> Iterator[Case]:
    for flag in VLLM_FLAGS:
        for v in HUGE_VALUES:
            yield f"vllm {flag} {v[:20]!r}", "f.json", _dump(_deployment(VLLM_IMAGE, _vllm_args(flag, v)))
            yield (
                f"vllm {flag}={v[:20]!r}",
                "f.json",
                _dump(_deployment(VLLM_IMAGE, _vllm_args(f"{flag}={v}"))),
            )
        # the flag twice, then with no value at the end
        yield f"vllm {flag} dangling", "f.json", _dump(_deployment(VLLM_IMAGE, _vllm_args(flag)))
    for name in VLLM_ENV:
        for v in HUGE_VALUES:
            env = [{"name": name, "value": v}]
            yield f"vllm env {name}={v[:20]!r}", "f.json", _dump(_deployment(VLLM_IMAGE, _vllm_args(), env))
    # vllm serve positional + command forms
    for v in HUGE_VALUES:
        cmd = ["vllm", "serve", MODEL, "--max-model-len", v, "--tensor-parallel-size", v]
        d = _deployment(VLLM_IMAGE, [], container={"command": cmd, "args": []})
        yield f"vllm serve both {v[:20]!r}", "f.json", _dump(d)
    for flag in TGI_FLAGS:
        for v in HUGE_VALUES:
            a = ["--model-id", MODEL, flag, v]
            yield f"tgi {flag} {v[:20]!r}", "f.json", _dump(_deployment(TGI_IMAGE, a))
    for name in TGI_ENV:
        for v in HUGE_VALUES:
            env = [{"name": "MODEL_ID", "value": MODEL}, {"name": name, "value": v}]
            yield f"tgi env {name}={v[:20]!r}", "f.json", _dump(_deployment(TGI_IMAGE, [], env))
    for flag in SGLANG_FLAGS:
        for v in HUGE_VALUES:
            cmd = ["python3", "-m", "sglang.launch_server", "--model-path", MODEL, flag, v]
            d = _deployment(SGLANG_IMAGE, [], container={"command": cmd, "args": []})
            yield f"sglang {flag} {v[:20]!r}", "f.json", _dump(d)
    # every sizing flag at once at its worst
    for v in ("1e400", "9" * 5000, "nan", "-1", "1e12"):
        a = []
        for flag in VLLM_FLAGS[:16]:
            a += [flag, v]
        yield f"vllm all flags {v[:10]!r}", "f.json", _dump(_deployment(VLLM_IMAGE, _vllm_args(*a)))


QUANTITIES = [
    "1e400Gi",
    "1e400",
    "-1Gi",
    "0",
    "nan",
    "NaN",
    "inf",
    "1e9",
    "1000000000",
    "9" * 5000,
    "1" + "0" * 30 + "Ei",
    "1e18Ei",
    "0.000000001m",
    "1e-400",
    "18446744073709551616",
    "9223372036854775807",
    "1.5",
    "-1",
    "abc",
    "",
    "1Qi",
    "1e+400k",
    1e308,
    10**30,
    -5,
    1.5,
    True,
    None,
    [],
    {},
]


def family_quantity() -> Iterator[Case]:
    for q in QUANTITIES:
        for key in (
            "nvidia.com/gpu",
            "memory",
            "cpu",
            "amd.com/gpu",
            "google.com/tpu",
            "nvidia.com/mig-1g.10gb",
        ):
            for where in ("limits", "requests"):
                d = _deployment(VLLM_IMAGE, _vllm_args())
                d["spec"]["template"]["spec"]["containers"][0]["resources"] = {where: {key: q}}
                yield f"quantity {where} {key}={str(q)[:20]!r}", "q.json", _dump(d)
        shm = {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": q}}
        d = _deployment(
            VLLM_IMAGE,
            _vllm_args(),
            pod={"volumes": [shm]},
            container={"volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}]},
        )
        yield f"quantity shm {str(q)[:20]!r}", "q.json", _dump(d)
        d = _deployment(VLLM_IMAGE, _vllm_args())
        d["spec"]["replicas"] = q
        yield f"replicas {str(q)[:20]!r}", "q.json", _dump(d)
        d = _deployment(VLLM_IMAGE, _vllm_args())
        d["metadata"]["annotations"] = {"kvlint.io/gpu-memory": str(q), "kvlint.io/accelerator": str(q)}
        yield f"annotations {str(q)[:20]!r}", "q.json", _dump(d)


def family_env() -> Iterator[Case]:
    def dep(env: list[dict[str, Any]], args: list[str]) -> str:
        return _dump(_deployment(VLLM_IMAGE, args, env))

    yield "env self", "e.json", dep([{"name": "A", "value": "$(A)"}], _vllm_args("--max-model-len", "$(A)"))
    yield (
        "env cycle",
        "e.json",
        dep(
            [{"name": "A", "value": "$(B)"}, {"name": "B", "value": "$(A)"}],
            _vllm_args("--max-model-len", "$(A)"),
        ),
    )
    chain = [{"name": f"V{i}", "value": f"$(V{i + 1})$(V{i + 1})"} for i in range(60)] + [
        {"name": "V60", "value": "x" * 10}
    ]
    yield "env doubling chain", "e.json", dep(chain, _vllm_args("--max-model-len", "$(V0)"))
    yield "env doubling chain model", "e.json", dep(chain, ["--model", "$(V0)"])
    big = [{"name": "A", "value": "$(B)" * 100_000}, {"name": "B", "value": "x" * 100}]
    yield "env wide", "e.json", dep(big, _vllm_args("--max-model-len", "$(A)"))
    many = [{"name": f"V{i}", "value": f"$(V{i - 1})"} for i in range(1, 5000)] + [
        {"name": "V0", "value": "8192"}
    ]
    yield "env long chain", "e.json", dep(many, _vllm_args("--max-model-len", "$(V4999)"))
    yield (
        "env $$",
        "e.json",
        dep([{"name": "A", "value": "$$(A)$$$(A)$("}], _vllm_args("--max-model-len", "$(A)")),
    )
    yield (
        "env unterminated",
        "e.json",
        dep([{"name": "A", "value": "$(" * 50000}], _vllm_args("--model", "$(A)")),
    )
    yield "env nested", "e.json", dep([{"name": "A", "value": "$($(A))"}], _vllm_args("--model", "$($(A))"))
    yield (
        "env name weird",
        "e.json",
        dep([{"name": "$(A)", "value": "1"}, {"name": "", "value": None}], _vllm_args()),
    )
    vf = {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "namespace": "default"},
        "data": {"k": "$(A)" * 1000},
    }
    text = _dump(_deployment(VLLM_IMAGE, _vllm_args("--max-model-len", "$(A)"), [vf])) + "\n---\n" + _dump(cm)
    yield "env configmap self", "e.yaml", text
    ef = {"configMapRef": {"name": "cm"}}
    cm2 = dict(
        cm, data={"MAX_MODEL_LEN": "9" * 5000, "A": "$(A)", "VLLM_ARGS": "--tensor-parallel-size 1e12"}
    )
    d = _deployment(
        VLLM_IMAGE,
        _vllm_args("--max-model-len", "$(MAX_MODEL_LEN)"),
        container={"envFrom": [ef, None, 5, {"configMapRef": 5}]},
    )
    yield "envFrom odd", "e.yaml", _dump(d) + "\n---\n" + _dump(cm2)
    for shape in (
        5,
        "x",
        [5],
        [None],
        [{"name": 5, "value": 5}],
        [{"name": "A", "value": {"x": 1}}],
        [{"valueFrom": 5}],
        {"A": "1"},
    ):
        d = _deployment(VLLM_IMAGE, _vllm_args())
        d["spec"]["template"]["spec"]["containers"][0]["env"] = shape
        yield f"env shape {str(shape)[:20]}", "e.json", _dump(d)


SCRIPTS = [
    "vllm serve " + MODEL + " --max-model-len ${MAX_LEN:-8192}",
    "vllm serve " + MODEL + " --max-model-len '" + "'\"'" * 5000,
    "vllm serve '" + MODEL,
    'vllm serve "' + MODEL + ' $(echo "$(echo "$(echo "x")")")"',
    "vllm serve " + MODEL + " " + "\\\n" * 50000,
    "x=1; " * 50000 + "vllm serve " + MODEL,
    "vllm serve " + MODEL + " <<EOF\n" + "a\n" * 10000,
    "$(" * 10000 + "vllm serve " + MODEL,
    "`" * 10001 + "vllm serve " + MODEL,
    "(" * 5000 + "vllm serve " + MODEL + ")" * 5000,
    "{ " * 5000 + "vllm serve " + MODEL + "; }" * 5000,
    "vllm serve " + MODEL + " && " * 20000,
    "exec vllm serve ${MODEL:?} --tensor-parallel-size ${TP:=${TP:=${TP}}}",
    "python3 -m vllm.entrypoints.openai.api_server --model " + MODEL + " --tensor-parallel-size $((1<<62))",
    "python3 -m sglang.launch_server --model-path " + MODEL + " --tp $(nproc) --context-length " + "9" * 5000,
    "text-generation-launcher --model-id " + MODEL + " --max-total-tokens 1e400",
    "if [ x ]; then " * 3000 + "vllm serve " + MODEL + "; fi" * 3000,
    'eval "vllm serve ' + MODEL + '"',
    'sh -c "sh -c \'sh -c \\"vllm serve ' + MODEL + '\\"\'"',
    "bash -c " + "'bash -c " * 200 + "vllm serve " + MODEL + "'" * 200,
    "vllm serve " + MODEL + " --config /etc/passwd",
    "source /etc/profile; . /root/.bashrc; vllm serve $(cat /etc/hostname)",
    "\x00vllm serve " + MODEL,
    "vllm serve " + MODEL + " --max-model-len " + "${A}" * 100000,
    "A=$(A) vllm serve " + MODEL,
    "for i in " + "1 " * 50000 + "; do vllm serve " + MODEL + "; done",
    "case x in " + "a) ;; " * 20000 + "esac; vllm serve " + MODEL,
    "vllm serve " + MODEL + " # " + "'" * 100000,
    "A=xxxxxxxxxx; " + "A=$A$A; " * 60 + "vllm serve $A",
    "export A=xxxxxxxxxx; " + 'export A="$A$A"; ' * 60 + 'vllm serve m --served-model-name "$A"',
    "vllm serve m " + "{{ a }} " * 50000,
    "vllm serve m --max-num-seqs $((" + "*".join(["99999999999999999999"] * 300) + "))",
    "vllm serve m --max-num-seqs $((" + "(" * 5000 + "1" + ")" * 5000 + "))",
    "vllm serve m --max-num-seqs $((" + "-" * 5000 + "1))",
    "vllm serve m --max-num-seqs $((" + "+".join(["9" * 4000] * 2) + "))",
    "vllm serve m " + '"$@" ' * 20000,
    "eval eval eval eval eval vllm serve m",
    "vllm serve "
    + MODEL
    + ' --hf-overrides \'{"max_position_embeddings": 1e400, "num_hidden_layers": 1000000000}\'',
    "vllm serve " + MODEL + " --speculative-config '" + '{"num_speculative_tokens": 1e12}' + "'",
]


def family_shell() -> Iterator[Case]:
    for i, s in enumerate(SCRIPTS):
        for shell in (["sh", "-c"], ["/bin/bash", "-lc"], ["bash", "-c", "--"]):
            d = _deployment(VLLM_IMAGE, [s], container={"command": shell})
            yield f"shell #{i} {' '.join(shell)} {s[:30]!r}", "s.json", _dump(d)
        d = _deployment(VLLM_IMAGE, [], container={"command": ["sh", "-c", s]})
        yield f"shell #{i} in command", "s.json", _dump(d)
    # args given as a multiline YAML block
    yield (
        "shell args block",
        "s.yaml",
        (
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n      containers:\n"
            "      - name: v\n        image: "
            + VLLM_IMAGE
            + "\n        command: [sh, -c]\n        args:\n        - |\n"
            + "".join("          vllm serve " + MODEL + " \\\n" for _ in range(2000))
            + "          --max-model-len 8192\n"
        ),
    )


MODEL_REFS = [
    "/etc/passwd",
    "/etc",
    "/proc/self/environ",
    "/dev/zero",
    "/dev/urandom",
    "../../../../etc/passwd",
    "..",
    ".",
    "~",
    "~root/.ssh",
    "file:///etc/passwd",
    "file://../../etc",
    "oci://registry.example.com/model:latest",
    "hf://" + MODEL,
    "pvc://claim/../../etc",
    "s3://bucket/../../etc",
    "gs://bucket/model",
    "https://huggingface.co/" + MODEL,
    "http://169.254.169.254/latest/meta-data/",
    "org/" + "a" * 100_000,
    "a" * 1_000_000,
    "/" + "a/" * 50_000,
    MODEL + "\x00/etc/passwd",
    "meta-llama/\u202eLlama",
    "\x1b[31mred",
    "org/name/../../..",
    "unknown-org-xyz/definitely-not-a-real-model-12345",
    "bigscience/bloom",
    "gpt2",
    "$(MODEL)",
    "{{ .Values.model }}",
    "",
    " ",
    "\n",
    "C:\\Windows\\System32",
    "\\\\server\\share",
]


def family_model() -> Iterator[Case]:
    for ref in MODEL_REFS:
        r = repr(ref[:30])
        yield f"vllm --model {r}", "m.json", _dump(_deployment(VLLM_IMAGE, ["--model", ref]))
        cmd = ["vllm", "serve", ref]
        yield f"vllm serve {r}", "m.json", _dump(_deployment(VLLM_IMAGE, [], container={"command": cmd}))
        yield f"tgi {r}", "m.json", _dump(_deployment(TGI_IMAGE, ["--model-id", ref]))
        cmd = ["python3", "-m", "sglang.launch_server", "--model-path", ref]
        yield f"sglang {r}", "m.json", _dump(_deployment(SGLANG_IMAGE, [], container={"command": cmd}))
        for flag in (
            "--tokenizer",
            "--config",
            "--served-model-name",
            "--download-dir",
            "--kaito-config-file",
            "--hf-config-path",
            "--speculative-model",
        ):
            yield f"vllm {flag} {r}", "m.json", _dump(_deployment(VLLM_IMAGE, _vllm_args(flag, ref)))
        isvc = {
            "apiVersion": "serving.kserve.io/v1beta1",
            "kind": "InferenceService",
            "metadata": {"name": "x", "namespace": "default"},
            "spec": {
                "predictor": {
                    "model": {
                        "modelFormat": {"name": "huggingface"},
                        "storageUri": ref,
                        "args": ["--max-model-len", "8192"],
                        "resources": {"limits": {"nvidia.com/gpu": 1}},
                    }
                }
            },
        }
        yield f"kserve storageUri {r}", "m.json", _dump(isvc)
        kubeai = {
            "apiVersion": "kubeai.org/v1",
            "kind": "Model",
            "metadata": {"name": "x"},
            "spec": {
                "url": ref,
                "engine": "VLLM",
                "resourceProfile": "nvidia-gpu-l4:1",
                "features": ["TextGeneration"],
            },
        }
        yield f"kubeai url {r}", "m.json", _dump(kubeai)
        kubeai2 = copy.deepcopy(kubeai)
        kubeai2["spec"]["url"] = "hf://" + ref
        yield f"kubeai hf url {r}", "m.json", _dump(kubeai2)
        ws = {
            "apiVersion": "kaito.sh/v1beta1",
            "kind": "Workspace",
            "metadata": {"name": "x"},
            "resource": {
                "instanceType": "Standard_NC24ads_A100_v4",
                "labelSelector": {"matchLabels": {"a": "b"}},
            },
            "inference": {"preset": {"name": ref}},
        }
        yield f"kaito preset {r}", "m.json", _dump(ws)
        nim = {
            "apiVersion": "apps.nvidia.com/v1alpha1",
            "kind": "NIMService",
            "metadata": {"name": "x"},
            "spec": {
                "image": {"repository": "nvcr.io/nim/" + ref, "tag": "1"},
                "resources": {"limits": {"nvidia.com/gpu": 1}},
            },
        }
        yield f"nim {r}", "m.json", _dump(nim)


def family_structure() -> Iterator[Case]:
    d = _deployment(VLLM_IMAGE, _vllm_args("--max-model-len", "8192"))
    one = _dump(d)
    yield "5000 documents", "many.yaml", "\n---\n".join([one] * 2000)
    yield "10000 empty documents", "many.yaml", "---\n" * 10000 + one
    d2 = copy.deepcopy(d)
    d2["spec"]["template"]["spec"]["containers"] = [
        copy.deepcopy(d["spec"]["template"]["spec"]["containers"][0]) for _ in range(2000)
    ]
    for i, c in enumerate(d2["spec"]["template"]["spec"]["containers"]):
        c["name"] = f"c{i}"
    yield "2000 containers", "c.json", _dump(d2)
    d3 = copy.deepcopy(d)
    d3["spec"]["template"]["spec"]["containers"][0]["args"] = _vllm_args(
        *(["--max-model-len", "8192"] * 50_000)
    )
    yield "100k args", "a.json", _dump(d3)
    d4 = copy.deepcopy(d)
    d4["spec"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": f"E{i}", "value": str(i)} for i in range(50_000)
    ]
    yield "50k env", "e.json", _dump(d4)
    d5 = copy.deepcopy(d)
    d5["metadata"]["annotations"] = {
        "kvlint.io/ignore": ",".join(f"KV{i % 999:03d}=r" for i in range(50_000))
    }
    yield "huge ignore annotation", "i.json", _dump(d5)
    d6 = copy.deepcopy(d)
    d6["spec"]["template"]["spec"]["initContainers"] = d2["spec"]["template"]["spec"]["containers"][:500]
    yield "500 init containers", "i.json", _dump(d6)
    deep: Any = "x"
    for _ in range(900):
        deep = {"a": [deep]}
    d7 = copy.deepcopy(d)
    d7["spec"]["template"]["spec"]["affinity"] = deep
    try:
        yield "deep affinity", "deep.json", json.dumps(d7)
    except RecursionError:
        pass
    bomb = "a: &a [" + ",".join(["x"] * 10) + "]\n"
    for i in range(1, 20):
        bomb += f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}" if i > 1 else "*a"] * 10) + "]\n"
    yield "alias bomb 20 levels", "b.yaml", bomb
    yield (
        "alias bomb in args",
        "b.yaml",
        (
            "x: &x [" + ",".join(["--max-model-len"] * 10) + "]\n" + "y: &y [" + ",".join(["*x"] * 10) + "]\n"
            "z: &z [" + ",".join(["*y"] * 10) + "]\n"
            "w: &w [" + ",".join(["*z"] * 10) + "]\n---\n"
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n      containers:\n"
            "      - name: v\n        image: "
            + VLLM_IMAGE
            + "\n        args: &args [--model, "
            + MODEL
            + "]\n"
            "      - name: w\n        image: " + VLLM_IMAGE + "\n        args: *args\n"
        ),
    )
    yield (
        "merge key bomb",
        "b.yaml",
        (
            "a: &a {x: 1}\nb: &b {<<: [*a, *a, *a, *a]}\nc: &c {<<: [*b, *b, *b, *b]}\n"
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x, <<: *c}\nspec: {template: {spec: {containers: [{name: v, image: "
            + VLLM_IMAGE
            + ", args: [--model, "
            + MODEL
            + "]}]}}}\n"
        ),
    )
    yield "recursive alias", "b.yaml", "a: &a [*a]\n"
    yield "huge key", "k.yaml", "k" * 2_000_000 + ": 1\n"
    yield "huge string", "k.json", json.dumps(dict(d, junk="x" * 5_000_000))
    yield "1e6 items", "k.yaml", "a: [" + "1," * 1_000_000 + "1]\n"
    yield (
        "kind list of lists",
        "l.yaml",
        "apiVersion: v1\nkind: List\nitems:\n"
        + "- apiVersion: v1\n  kind: List\n  items:\n" * 1
        + "  - "
        + one.replace("\n", " ")
        + "\n",
    )
    nested_list: Any = d
    for _ in range(50):
        nested_list = {"apiVersion": "v1", "kind": "List", "items": [nested_list]}
    yield "50 nested Lists", "l.json", _dump(nested_list)
    wide_list = {"apiVersion": "v1", "kind": "List", "items": [d] * 3000}
    yield "List of 3000", "l.json", json.dumps(wide_list)
    tmpl = {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": "x"},
        "template": d["spec"]["template"],
    }
    yield "PodTemplate", "t.json", _dump(tmpl)


# ------------------------------------------------------------------------------------------ retype


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield prefix + (k,)
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield prefix + (i,)
            yield from _paths(v, prefix + (i,))


def _set(node: Any, path: tuple[Any, ...], value: Any) -> None:
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value


def base_files() -> dict[str, list[Path]]:
    """Manifest files of the shared corpus and the fixtures, by the (group, kind) of their workloads."""
    from kvlint.webhook.review import REVIEWED_KINDS

    kinds = {k for _g, k in REVIEWED_KINDS}
    roots = [REPO.parent / "shared" / "corpus" / "manifests", REPO / "fixtures"]
    out: dict[str, list[Path]] = {}
    for root in roots:
        if not root.exists():
            continue
        for f in sorted(root.rglob("*")):
            if f.suffix not in (".yaml", ".yml", ".json") or not f.is_file() or f.stat().st_size > 60_000:
                continue
            try:
                docs = [x for x in yaml.safe_load_all(f.read_text("utf-8")) if isinstance(x, dict)]
            except Exception:
                continue
            for x in docs:
                k = x.get("kind")
                if isinstance(k, str) and k in kinds:
                    key = f"{str(x.get('apiVersion', '')).split('/')[0]}/{k}"
                    out.setdefault(key, []).append(f)
    return out


def family_retype(per_kind: int = 1, max_paths: int = 300) -> Iterator[Case]:
    import random

    rng = random.Random(14)
    for key, files in sorted(base_files().items()):
        chosen: list[Path] = []
        for f in sorted(set(files), key=lambda p: p.stat().st_size):
            if f not in chosen:
                chosen.append(f)
            if len(chosen) >= per_kind:
                break
        for f in chosen:
            docs = [x for x in yaml.safe_load_all(f.read_text("utf-8")) if x is not None]
            for di, doc in enumerate(docs):
                if (
                    not isinstance(doc, dict)
                    or f"{str(doc.get('apiVersion', '')).split('/')[0]}/{doc.get('kind')}" != key
                ):
                    continue
                paths = [p for p in _paths(doc) if p[:1] not in (("apiVersion",), ("kind",))]
                if len(paths) > max_paths:
                    paths = rng.sample(paths, max_paths)
                for p in paths:
                    for w in WRONG:
                        mutated = copy.deepcopy(docs)
                        _set(mutated[di], p, w)
                        text = "\n---\n".join(json.dumps(x) for x in mutated)
                        yield f"retype {key} {f.name} {'.'.join(map(str, p))} = {w!r}", f.name, text


FAMILIES = {
    "flag": family_flag,
    "quantity": family_quantity,
    "env": family_env,
    "shell": family_shell,
    "model": family_model,
    "structure": family_structure,
    "retype": family_retype,
}


# ------------------------------------------------------------------------------------------ watching


class Watch:
    """Records file-system, network and process events while :attr:`on` (an audit hook, plus a wrapped
    ``os.stat``/``os.lstat``: ``stat`` has no audit event)."""

    def __init__(self) -> None:
        self.on = False
        self.events: list[str] = []
        allowed = [
            str(REPO / "kvlint"),
            str(REPO / "rules"),
            sys.prefix,
            sys.base_prefix,
            os.path.dirname(os.__file__),
        ]
        allowed += [p for p in sys.path if p and "site-packages" in p]
        self.allowed = tuple({os.path.realpath(a) for a in allowed} | {os.path.normpath(a) for a in allowed})
        sys.addaudithook(self._hook)
        self._stat, self._lstat = os.stat, os.lstat
        watch = self

        def stat(path: Any, *a: Any, **kw: Any) -> Any:
            watch._path("stat", path)
            return watch._stat(path, *a, **kw)

        def lstat(path: Any, *a: Any, **kw: Any) -> Any:
            watch._path("lstat", path)
            return watch._lstat(path, *a, **kw)

        os.stat = stat  # type: ignore[assignment]
        os.lstat = lstat  # type: ignore[assignment]

    def _path(self, what: str, path: Any) -> None:
        if not self.on or isinstance(path, int):
            return
        try:
            p = os.fsdecode(path)
        except Exception:
            p = repr(path)
        absp = os.path.normpath(os.path.join(os.getcwd(), p)) if "\x00" not in p else p
        if not absp.startswith(self.allowed):
            self.events.append(f"{what} {p[:120]!r}")

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.on:
            return
        if event == "open" and args:
            self._path("open", args[0])
        elif event in ("os.listdir", "os.scandir", "glob.glob", "os.chdir"):
            if args:
                self._path(event, args[0])
        elif event.startswith(
            (
                "socket.",
                "subprocess.",
                "os.exec",
                "os.posix_spawn",
                "os.system",
                "os.fork",
                "urllib.",
                "http.",
            )
        ):
            if event not in ("socket.__new__",) or True:
                self.events.append(f"{event} {str(args)[:120]}")


class CaseTimeout(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise CaseTimeout()


def _rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def run_case(
    text: str, label: str, watch: Watch, limit_s: float, render: bool = True
) -> tuple[str | None, float, int]:
    """(failure or None, seconds, KiB the peak RSS grew by)."""
    options = webhook_options()
    rss0 = _rss_kib()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, max(limit_s * 5, 10))
    watch.events.clear()
    t = time.perf_counter()
    try:
        watch.on = True
        HELD_LINES[label] = text.split("\n")  # as the webhook's worker does: the label is not a file
        try:
            loaded = load_text(text, label)
            result = run_documents(loaded, options)
        finally:
            HELD_LINES.pop(label, None)
        watch.on = False  # the reports may read the manifest's own lines (SARIF snippets)
        if render:
            from kvlint.report import FORMATS
            from kvlint.report import render as render_fmt

            for fmt in FORMATS:
                render_fmt(fmt, result)
    except CaseTimeout:
        return "hang (killed)", time.perf_counter() - t, 0
    except BaseException:
        return traceback.format_exc(limit=-6), time.perf_counter() - t, 0
    finally:
        watch.on = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    dt = time.perf_counter() - t
    grew = _rss_kib() - rss0
    problems = []
    internal = [
        d.message
        for d in result.diagnostics
        if d.rule == "KV503"
        and (d.message.startswith(INTERNAL_ERROR) or "could not read this container's command (" in d.message)
    ]
    if internal:
        problems.append("hidden exception: " + internal[0][:400])
    if dt > limit_s:
        problems.append(f"slow: {dt:.2f} s")
    if grew > 100 * 1024:
        problems.append(f"RSS peak grew {grew / 1024:.0f} MiB")
    if watch.events:
        problems.append("side effects: " + "; ".join(sorted(set(watch.events))[:5]))
    return ("\n".join(problems) or None), dt, grew


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--family", action="append", choices=sorted(FAMILIES))
    ap.add_argument("--limit", type=float, default=2.0)
    ap.add_argument("--max-paths", type=int, default=300)
    ap.add_argument("--no-render", action="store_true")
    ap.add_argument("--stop", type=int, default=0, help="stop after this many failures (0: never)")
    args = ap.parse_args()
    watch = Watch()
    # warm the catalogues outside the watch
    run_case(_dump(_deployment(VLLM_IMAGE, _vllm_args())), "warm.json", watch, 30)
    total = 0
    failures: list[str] = []
    worst: list[tuple[float, str]] = []
    for fam in args.family or sorted(FAMILIES):
        gen = family_retype(max_paths=args.max_paths) if fam == "retype" else FAMILIES[fam]()
        n = 0
        t0 = time.perf_counter()
        for desc, label, text in gen:
            n += 1
            why, dt, grew = run_case(text, label, watch, args.limit, not args.no_render)
            worst.append((dt, desc[:100]))
            if why:
                failures.append(f"== [{fam}] {desc[:200]}\n{why}")
                print(failures[-1], flush=True)
                if args.stop and len(failures) >= args.stop:
                    break
        total += n
        print(f"-- {fam}: {n} cases in {time.perf_counter() - t0:.1f} s", flush=True)
    worst.sort(reverse=True)
    print("slowest:", *(f"  {dt:.3f} s {d}" for dt, d in worst[:8]), sep="\n")
    print(f"{len(failures)} failing of {total}; peak RSS {_rss_kib() / 1024:.0f} MiB")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
