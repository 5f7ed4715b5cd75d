"""Engine config stage, vLLM: forms of the command line, values, positions, findings, corpus.

Fixtures: fixtures/engines/forms.yaml (written for these tests, see fixtures/engines/README.md) and the
real manifests in ../shared/corpus/manifests (the corpus test is skipped when that is absent).
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

import pytest

from kvlint.engines import parse_command_line, parse_container
from kvlint.engines.images import engine_of_image, engine_version
from kvlint.engines.options import human_readable_int
from kvlint.engines.shell import k8s_expand
from kvlint.engines.vllm import known_options, option_versions, parse_vllm_argv
from kvlint.load import load_paths, load_text
from kvlint.source import LDict, LList, Loc
from kvlint.workloads import configmaps

#: The shared data folder beside the checkout (tests that read it skip when it is absent).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"

HERE = os.path.dirname(__file__)
FORMS = os.path.join(HERE, "..", "fixtures", "engines", "forms.yaml")
CORPUS = str(SHARED / "corpus/manifests")


def _forms():
    with open(FORMS, encoding="utf-8") as fh:
        res = load_text(fh.read(), FORMS)
    cms = configmaps(res.documents)  # exactly what the pipeline passes
    pod = next(d for d in res.documents if d.kind == "Deployment").data["spec"]["template"]["spec"]
    out = {}
    for c in pod["containers"]:
        out[c["name"]] = parse_container(c, pod_spec=pod, namespace="serving", configmaps=cms)
    return out


@pytest.fixture(scope="module")
def forms():
    return _forms()


def _pos(v):
    return (v.loc.line, v.loc.column)


def _rules(cfg):
    return [f.rule for f in cfg.findings]


# ---------------------------------------------------------------------------------------- forms


def test_vllm_serve_positional_values_and_positions(forms):
    cfg = forms["serve-positional"]
    assert cfg.engine == "vllm" and cfg.version == "0.11.0" and cfg.container_name == "serve-positional"
    assert cfg.model.value == "meta-llama/Llama-3.1-8B-Instruct" and _pos(cfg.model) == (26, 11)
    assert cfg.get("max_model_len") == 32000 and cfg.flags["max_model_len"].raw == "32k"
    assert _pos(cfg.flags["max_model_len"]) == (27, 11)
    assert cfg.get("tensor_parallel_size") == 2 and _pos(cfg.flags["tensor_parallel_size"]) == (29, 11)
    assert cfg.get("enable_chunked_prefill") is True
    assert cfg.get("enable_prefix_caching") is False
    assert cfg.get("max_num_seqs") == 64  # --max-num-seq: unique argparse prefix
    assert cfg.get("gpu_memory_utilization") == pytest.approx(0.95)
    # ... which is said out loud (issue 16): the only finding
    (f,) = cfg.findings
    assert (f.rule, f.severity) == ("KV205", "warning") and "abbreviation of --max-num-seqs" in f.message
    assert cfg.version_loc == Loc(FORMS, 23, 16)


def test_api_server_with_k8s_env_expansion(forms):
    cfg = forms["api-server-env"]
    assert cfg.version == "0.10.0"
    assert cfg.model.value == "google/gemma-7b-it" and cfg.model.source == "env"
    assert cfg.get("tensor_parallel_size") == 4 and cfg.flags["tensor_parallel_size"].source == "env"
    # $$ escapes: vLLM receives the literal text $(MODEL_ID)
    assert cfg.get("served_model_name") == "$(MODEL_ID)"
    # unknown variable stays literal
    assert cfg.get("download_dir") == "$(UNSET_VAR)"
    assert "SECRET" not in cfg.env and cfg.env["TP"] == "4"


def test_args_only_uses_image_entrypoint_and_skips_serve(forms):
    cfg = forms["args-only"]
    assert cfg.version == "0.8.5.post1"
    assert cfg.model.value == "mistralai/Mistral-7B-v0.1"
    assert cfg.get("kv_cache_dtype") == "fp8"
    assert cfg.get("max_model_len") == 16384  # 16K = 16 * 1024
    assert _pos(cfg.flags["kv_cache_dtype"]) == (53, 85)


def test_sh_c_script_positions_and_shell_expansion(forms):
    cfg = forms["shell"]
    assert cfg.model.value == "deepseek-ai/DeepSeek-R1" and cfg.model.source == "env"
    # exact line/column inside the block scalar
    assert _pos(cfg.model) == (63, 21)
    assert cfg.get("pipeline_parallel_size") == 2 and _pos(cfg.flags["pipeline_parallel_size"]) == (64, 63)
    # exported earlier in the script
    assert cfg.get("gpu_memory_utilization") == pytest.approx(0.8)
    # `A=b cmd $A`: the shell expands $A before the assignment applies -> unresolved, noted, not guessed
    assert "max_model_len" not in cfg.flags
    note = [f for f in cfg.findings if f.rule == "KV503"]
    assert note and "$MAX_LEN" in note[0].message and note[0].severity == "info"
    assert (note[0].loc.line, note[0].loc.column) == (64, 29)


def test_config_file_from_configmap(forms):
    cfg = forms["with-config"]
    assert cfg.version == "0.20.1"
    assert cfg.model.value == "Qwen/Qwen2.5-7B-Instruct" and cfg.model.source == "config"
    assert _pos(cfg.model) == (8, 12)
    # CLI wins over the config file, without a KV207
    assert cfg.get("max_model_len") == 4096 and cfg.flags["max_model_len"].source == "arg"
    gmu = cfg.flags["gpu_memory_utilization"]
    assert gmu.value == pytest.approx(0.85) and gmu.source == "config" and _pos(gmu) == (10, 29)
    assert cfg.get("enable_prefix_caching") is False
    assert "KV207" not in _rules(cfg)


def test_config_file_missing_is_noted():
    c = LDict(name="x", image="vllm/vllm-openai:v0.11.0")
    c["command"] = LList(["vllm", "serve", "--config", "/cfg/c.yaml"])
    cfg = parse_container(c)
    assert cfg.model is None
    msgs = [f.message for f in cfg.findings if f.rule == "KV503"]
    assert any("/cfg/c.yaml" in m for m in msgs)


def test_findings_kv205_kv206_kv207(forms):
    cfg = forms["typos"]
    by = {}
    for f in cfg.findings:
        by.setdefault(f.rule, []).append(f)
    typo = by["KV205"][0]
    assert "--max-modle-len" in typo.message and "--max-model-len" in typo.message
    assert (typo.loc.line, typo.loc.column) == (79, 11)
    removed = by["KV205"][1]
    assert "--swap-space" in removed.message and "0.20.1" in removed.message and "0.17.0" in removed.message
    bad = {f.message.split("for ")[1].split(":")[0]: f for f in by["KV206"]}
    assert set(bad) == {"--kv-cache-dtype", "--block-size", "--gpu-memory-utilization"}
    assert by["KV207"][0].severity == "warning" and cfg.get("max_num_seqs") == 16  # last wins
    assert "max_model_len" not in cfg.flags


def test_not_engines_and_wrappers(forms):
    assert forms["proxy"] is None
    # KAITO's vLLM wrapper takes vLLM's own flags plus its --kaito-* options, and its own defaults: the weights
    # baked into the image, gpu_memory_utilization from free memory (capped 0.95), port 5000
    kaito = forms["kaito"]
    assert kaito.engine == "vllm" and not kaito.findings, [f.message for f in kaito.findings]
    # the image is KAITO's falcon-40b preset image: its baked-in weights are read as that preset (KV505 says so)
    assert (kaito.model.value, kaito.model.raw, kaito.model.source) == (
        "kaito-image:falcon-40b",
        "/workspace/vllm/weights",
        "default",
    )
    from kvlint.models import resolve_model

    spec = resolve_model(kaito.model.value, allow_hub=False)
    assert spec.id == "tiiuae/falcon-40b" and spec.notes[0].startswith(
        "ASSUMPTION (image named after a KAITO"
    )
    assert kaito.get("tensor_parallel_size") == 2 and kaito.get("served_model_name") == "test"
    assert kaito.get("gpu_memory_utilization") == 0.95 and kaito.get("port") == 5000
    assert kaito.flags["port"].source == "default"
    # explicit flags win; LOCAL_RANK moves the default port
    ranked = parse_container(
        {
            "name": "w",
            "image": "example.com/kaito-phi:1",
            "env": [{"name": "LOCAL_RANK", "value": "1"}],
            "command": [
                "python3",
                "/workspace/vllm/inference_api.py",
                "--model",
                "/m",
                "--gpu-memory-utilization=0.8",
            ],
        }
    )
    assert ranked is not None and ranked.model.value == "/m" and ranked.get("gpu_memory_utilization") == 0.8
    assert ranked.get("port") == 5001
    # an image not named after a preset: the weights directory, which kvlint cannot read (KV502 says how to map it)
    plain = parse_container(
        {
            "name": "p",
            "image": "example.com/my-llm:1",
            "command": ["python3", "/workspace/vllm/inference_api.py"],
        }
    )
    assert plain is not None and plain.model.value == "/workspace/vllm/weights"
    # KAITO's transformers wrapper (/workspace/tfs/inference_api.py) is not vLLM: not read as one
    tfs = parse_container(
        {
            "name": "t",
            "image": "example.com/vllm-ish:1",
            "command": ["python3", "/workspace/tfs/inference_api.py"],
        }
    )
    assert tfs is None or tfs.model is None


# ---------------------------------------------------------------------------------------- argv rules


def test_short_aliases_and_bool_forms():
    cfg = parse_vllm_argv(
        [
            "m",
            "-tp",
            "4",
            "-pp=2",
            "-dp",
            "2",
            "-q",
            "awq",
            "--trust-remote-code",
            "--enforce-eager",
            "--no-enable-chunked-prefill",
        ],
        version="0.11.0",
    )
    assert cfg.get("tensor_parallel_size") == 4
    assert cfg.get("pipeline_parallel_size") == 2
    assert cfg.get("data_parallel_size") == 2
    assert cfg.get("quantization") == "awq"
    assert cfg.get("trust_remote_code") is True and cfg.get("enforce_eager") is True
    assert cfg.get("enable_chunked_prefill") is False
    assert cfg.findings == []


def test_O_alias_changes_meaning_with_version():
    old = parse_vllm_argv(["m", "-O3"], version="0.8.5")
    assert old.get("compilation_config") == {"level": 3}
    new = parse_vllm_argv(["m", "-O3"], version="0.14.0")
    assert new.get("optimization_level") == "3"


def test_human_readable_ints():
    assert human_readable_int("32k") == 32000
    assert human_readable_int("32K") == 32768
    assert human_readable_int("1M") == 2**20
    assert human_readable_int("1m") == 10**6
    assert human_readable_int("25.6k") == 25600
    with pytest.raises(ValueError):
        human_readable_int("1.5K")
    cfg = parse_vllm_argv(["m", "--max-model-len", "1.5K"], version="0.11.0")
    assert "KV206" in _rules(cfg) and "max_model_len" not in cfg.flags
    # 0.4.3 had plain int for --max-num-batched-tokens
    cfg = parse_vllm_argv(["m", "--max-num-batched-tokens", "8k"], version="0.4.3")
    assert "KV206" in _rules(cfg)
    cfg = parse_vllm_argv(["m", "--max-num-batched-tokens", "8k"], version="0.11.0")
    assert cfg.get("max_num_batched_tokens") == 8000


def test_max_model_len_auto_from_0_14():
    assert parse_vllm_argv(["m", "--max-model-len", "auto"], version="0.14.0").get("max_model_len") == -1
    assert parse_vllm_argv(["m", "--max-model-len=-1"], version="0.20.0").get("max_model_len") == -1
    old = parse_vllm_argv(["m", "--max-model-len", "auto"], version="0.11.0")
    assert "KV206" in _rules(old)


def test_version_specific_options():
    assert "KV205" in _rules(parse_vllm_argv(["m", "--max-seq-len-to-capture", "8192"], version="0.11.0"))
    assert "KV205" not in _rules(parse_vllm_argv(["m", "--max-seq-len-to-capture", "8192"], version="0.10.2"))
    assert "KV205" not in _rules(parse_vllm_argv(["m", "--kv-cache-memory-bytes", "8G"], version="0.11.0"))
    assert "KV205" in _rules(parse_vllm_argv(["m", "--kv-cache-memory-bytes", "8G"], version="0.8.5"))
    cfg = parse_vllm_argv(["m", "--kv-cache-memory-bytes", "8G"])  # unknown version: union of releases
    assert cfg.get("kv_cache_memory_bytes") == 8 * 2**30 and cfg.findings == []
    assert option_versions("--max-seq-len-to-capture") == ("0.4.3", "0.10.2")
    # server/frontend options are known
    for opt in ("--api-key", "--chat-template", "--tool-call-parser", "--enable-auto-tool-choice", "--host"):
        assert opt in known_options("0.11.0"), opt


def test_block_size_choices_by_version():
    assert "KV206" in _rules(parse_vllm_argv(["m", "--block-size", "48"], version="0.11.0"))
    assert parse_vllm_argv(["m", "--block-size", "256"], version="0.11.1").get("block_size") == 256
    assert "KV206" in _rules(parse_vllm_argv(["m", "--block-size", "256"], version="0.11.0"))


def test_unknown_flag_does_not_abort_and_keeps_model():
    cfg = parse_vllm_argv(["m", "--bogus-flag", "7", "--max-model-len", "2048"], version="0.11.0")
    assert cfg.model.value == "m" and cfg.get("max_model_len") == 2048
    assert _rules(cfg) == ["KV205"]


def test_dotted_json_and_json_values():
    cfg = parse_vllm_argv(
        [
            "m",
            "--compilation-config.cudagraph_mode=FULL",
            "--speculative-config",
            '{"method": "ngram", "num_speculative_tokens": 3}',
        ],
        version="0.11.0",
    )
    assert cfg.get("compilation_config") == {"cudagraph_mode": "FULL"}
    assert cfg.get("speculative_config")["num_speculative_tokens"] == 3


def test_locs_and_sources_passed_through():
    locs = [Loc("f", 1, 1), Loc("f", 2, 3), Loc("f", 3, 5)]
    cfg = parse_vllm_argv(["m", "--max-num-seqs", "4"], locs=locs)
    assert cfg.flags["max_num_seqs"].loc == Loc("f", 3, 5) and cfg.command_loc == Loc("f", 1, 1)


# ---------------------------------------------------------------------------------------- k8s $(VAR)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$(A)", "1"),
        ("x$(A)y", "x1y"),
        ("$$(A)", "$(A)"),
        ("$$", "$"),
        ("$(B)", "$(B)"),
        ("$A", "$A"),
        ("$(A", "$(A"),
        ("$$$(A)", "$1"),
    ],
)
def test_k8s_expand(text, expected):
    assert k8s_expand(text, {"A": "1"})[0] == expected


def test_env_values_reference_earlier_env():
    c = LDict(name="v", image="vllm/vllm-openai:v0.11.0")
    c["env"] = [{"name": "ORG", "value": "meta-llama"}, {"name": "MODEL", "value": "$(ORG)/Llama-3.1-8B"}]
    c["args"] = LList(["--model", "$(MODEL)"])
    assert parse_container(c).model.value == "meta-llama/Llama-3.1-8B"


# ---------------------------------------------------------------------------------------- images


@pytest.mark.parametrize(
    ("image", "engine", "version"),
    [
        ("vllm/vllm-openai:v0.11.0", "vllm", "0.11.0"),
        ("vllm/vllm-openai:v0.8.5.post1", "vllm", "0.8.5.post1"),
        ("vllm/vllm-openai:v0.20.1-cu129", "vllm", "0.20.1"),
        ("vllm/vllm-openai:latest", "vllm", None),
        ("vllm/vllm-openai", "vllm", None),
        ("vllm/vllm-openai@sha256:0123abcd", "vllm", None),
        ("docker.io/vllm/vllm-openai:v0.10.1.1", "vllm", "0.10.1.1"),
        ("vllm/vllm-tpu:latest", "vllm", None),
        ("rocm/vllm:rocm6.3.1_vllm_0.8.5_20250521", "vllm", "0.8.5"),
        ("lmcache/vllm-openai:2025-05-05-v1", "vllm", None),
        ("nvcr.io/nvidia/vllm:26.02-py3", "vllm", None),
        ("ghcr.io/llm-d/llm-d-cuda:v0.9.0", "vllm", None),
        ("ghcr.io/huggingface/text-generation-inference:3.0.1", "tgi", "3.0.1"),
        ("ghcr.io/huggingface/text-generation-inference:2.4.1-rocm", "tgi", "2.4.1"),
        ("ghcr.io/huggingface/text-generation-inference:sha-5f0c5b9", "tgi", None),
        (
            "us-docker.pkg.dev/deeplearning-platform-release/gcr.io/huggingface-text-generation-inference-cu124.2-3.ubuntu2204.py311",
            "tgi",
            "2.3",
        ),
        ("lmsysorg/sglang:v0.5.5.post3-cu126", "sglang", "0.5.5.post3"),
        ("lmsysorg/sglang:latest", "sglang", None),
        ("aibrix/sglang-router:v0.1.6", None, None),
        ("ollama/ollama:0.3.0", None, None),
    ],
)
def test_image_table(image, engine, version):
    assert engine_of_image(image) == engine
    assert engine_version(image) == version


# ---------------------------------------------------------------------------------------- plan CLI


def test_parse_command_line_forms():
    cfg = parse_command_line(["vllm", "serve", "X/y", "--max-model-len", "32k"])
    assert cfg.engine == "vllm" and cfg.model.value == "X/y" and cfg.get("max_model_len") == 32000
    cfg = parse_command_line(
        ["python", "-m", "vllm.entrypoints.openai.api_server", "--model", "X/y"], version="0.8.5"
    )
    assert cfg.model.value == "X/y" and cfg.version == "0.8.5" and isinstance(cfg.container, LDict)
    assert parse_command_line(["text-generation-launcher", "--model-id", "X"]).engine == "tgi"
    assert (
        parse_command_line(["python3", "-m", "sglang.launch_server", "--model-path", "X"]).engine == "sglang"
    )
    with pytest.raises(ValueError, match="not an engine command"):
        parse_command_line(["ollama", "serve"])


def test_parse_command_line_leading_env_assignments():
    """``NAME=value`` words before the program (bare or after ``env``) are the engine's environment, as a shell
    runs them; the settings read their switches (gt-209's reporter typed ``VLLM_USE_V1=0``)."""
    from kvlint.memory.vllm import settings_from_config

    cfg = parse_command_line(["VLLM_USE_V1=0", "A=x=y", "vllm", "serve", "X/y", "--max-model-len", "8k"])
    assert cfg.env == {"VLLM_USE_V1": "0", "A": "x=y"} and cfg.model.value == "X/y"
    assert cfg.get("max_model_len") == 8000 and settings_from_config(cfg).use_v1 is False
    cfg = parse_command_line(
        ["env", "VLLM_USE_FLASHINFER_SAMPLER=1", "VLLM_USE_FLASHINFER_SAMPLER=0", "vllm", "serve", "X"]
    )
    assert (
        cfg.env == {"VLLM_USE_FLASHINFER_SAMPLER": "0"}
        and settings_from_config(cfg).flashinfer_sampler is False
    )
    assert parse_command_line(["env", "text-generation-launcher", "--model-id", "X"]).env == {}
    assert parse_command_line(["vllm", "serve", "X"]).env == {}
    # env's own options as env(1) reads them (tidy49's wrapper table): -i starts from an empty environment, so only
    # the assignments after it reach the engine; -u NAME removes one
    assert parse_command_line(["env", "-i", "vllm", "serve", "X"]).env == {}
    assert parse_command_line(["env", "-i", "A=1", "vllm", "serve", "X"]).env == {"A": "1"}
    assert parse_command_line(["env", "-u", "A", "B=2", "vllm", "serve", "X"]).env == {"B": "2"}
    for typed in (
        ["A=1"],
        ["env"],
        ["A=1", "ollama", "serve"],
        ["env", "-i"],
        ["env", "A=1", "-u", "A", "vllm"],
    ):
        with pytest.raises(ValueError, match=f"not an engine command: {' '.join(typed[:3])} "):
            parse_command_line(typed)


# ---------------------------------------------------------------------------------------- corpus


def _containers(obj):
    if isinstance(obj, dict):
        for key in ("containers", "initContainers"):
            if isinstance(obj.get(key), list):
                for c in obj[key]:
                    if isinstance(c, dict):
                        yield obj, c
        for v in obj.values():
            yield from _containers(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _containers(v)


@pytest.mark.skipif(not os.path.isdir(CORPUS), reason="corpus not available")
def test_corpus_every_vllm_container_parses_or_explains():
    files = sorted(glob.glob(os.path.join(CORPUS, "*.y*ml")))
    res = load_paths(files)
    seen = with_model = kv503 = joins = 0
    for doc in res.documents:
        cms = {}
        for d in res.documents:
            if d.path == doc.path and d.kind == "ConfigMap":
                cms[(d.namespace, d.name)] = d.data
        for pod, c in _containers(doc.data):
            text = " ".join(str(x) for x in [c.get("image"), c.get("command"), c.get("args")]).lower()
            cfg = parse_container(c, pod_spec=pod, configmaps=cms)
            if "vllm" not in text or "sglang_router" in text:
                continue
            assert cfg is not None, (doc.path, c.get("name"))
            seen += 1
            if cfg.model is not None:
                with_model += 1
            elif cfg.joins is not None:
                joins += 1  # a multi-node worker (ray start --address ...): it joins its leader's engine
            else:
                assert any(f.rule == "KV503" for f in cfg.findings), (doc.path, c.get("name"))
                kv503 += 1
    assert seen >= 40 and with_model >= 25 and seen == with_model + kv503 + joins


def test_zero_sizes_and_non_finite_fractions_are_kv206():
    cfg = parse_command_line(
        ["vllm", "serve", "m/x", "-tp", "0", "--max-model-len", "0", "--gpu-memory-utilization", "nan"],
        "0.11.0",
    )
    bad = {f.message.split(" for ")[1].split(":")[0] for f in cfg.findings if f.rule == "KV206"}
    assert bad == {"-tp", "--max-model-len", "--gpu-memory-utilization"}
    assert "tensor_parallel_size" not in cfg.flags and "max_model_len" not in cfg.flags


def test_option_only_older_releases_accept_is_a_warning_when_the_release_is_unknown() -> None:
    from kvlint.engines.vllm import parse_vllm_argv

    cfg = parse_vllm_argv(["--model", "x", "--num-scheduler-steps", "8"], version=None)
    (f,) = [f for f in cfg.findings if f.rule == "KV205"]
    assert f.severity == "warning" and "0.5.5 to 0.9.2" in f.message
    assert cfg.get("num_scheduler_steps") == 8  # still read: an older release may run it
    pinned = parse_vllm_argv(["--model", "x", "--num-scheduler-steps", "8"], version="0.9.2")
    assert not [f for f in pinned.findings if f.rule == "KV205"]
    assert not [f for f in parse_vllm_argv(["--model", "x", "--max-model-len", "8"], version=None).findings]


def test_env_from_configmaps_of_the_same_input() -> None:
    """env.valueFrom.configMapKeyRef and envFrom.configMapRef (with prefix) read the ConfigMaps of the same
    input set, env winning over envFrom; the value's position is the ConfigMap's; a ConfigMap that is not
    among the inputs leaves the variable unresolved (KV503 note), as before."""
    from kvlint.pipeline import Options, run_documents

    text = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: runtime, namespace: ai}
data:
  MAX_MODEL_LEN: "16384"
  MODEL_ID: Qwen/Qwen3-8B
---
apiVersion: v1
kind: ConfigMap
metadata: {name: par, namespace: ai}
data:
  TP: "2"
  MAX_MODEL_LEN: "999"
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: d, namespace: ai}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.11.0
        envFrom:
        - configMapRef: {name: par}
          prefix: VLLM_
        env:
        - name: MAX_MODEL_LEN
          valueFrom: {configMapKeyRef: {name: runtime, key: MAX_MODEL_LEN}}
        - name: MODEL_ID
          valueFrom: {configMapKeyRef: {name: runtime, key: MODEL_ID}}
        - name: GONE
          valueFrom: {configMapKeyRef: {name: elsewhere, key: X}}
        args: ["--model", "$(MODEL_ID)", "--max-model-len", "$(MAX_MODEL_LEN)",
               "--tensor-parallel-size", "$(VLLM_TP)", "--max-num-seqs", "$(GONE)"]
        resources: {limits: {nvidia.com/gpu: 2}}
"""
    res = run_documents(load_text(text, "cm.yaml"), Options(allow_hub=False))
    (cr,) = res.containers
    s = cr.serving
    assert s.model is not None and s.model.value == "Qwen/Qwen3-8B"
    assert s.get("max_model_len") == 16384 and s.get("tensor_parallel_size") == 2
    assert s.env["MAX_MODEL_LEN"] == "16384" and "GONE" not in s.env
    assert "max_num_seqs" in s.unresolved
    assert cr.model is not None and cr.model.id == "Qwen/Qwen3-8B"


def test_a_sidecar_naming_the_engine_it_talks_to_is_not_that_engine() -> None:
    """Kthena's runtime sidecar (``--engine sglang --engine-base-url ...``) names the engine it proxies, as the
    value of its own option: it is not a serving container; a command that runs the engine still is."""
    sidecar = {
        "name": "runtime",
        "image": "ghcr.io/volcano-sh/runtime:latest",
        "args": ["--port", "8900", "--engine", "sglang", "--engine-base-url", "http://localhost:30000"],
    }
    assert parse_container(sidecar) is None
    assert parse_container({**sidecar, "args": ["--port", "8900", "--engine=vllm"]}) is None
    wrapper = {"name": "w", "image": "example.com/tool:1", "command": ["/opt/start-sglang.sh", "--port", "1"]}
    cfg = parse_container(wrapper)
    assert cfg is not None and cfg.engine == "sglang" and cfg.model is None


def test_a_finding_at_a_position_several_settings_share_names_none_of_them() -> None:
    """setting_at: a position held by one flag names it; one held by several (the words of a script kvlint could
    not place one by one) names none of them, and the message's own flag decides."""
    from kvlint.rules.context import setting_at
    from kvlint.types import ServingConfig, Value

    here, there = Loc("f.yaml", 3, 5), Loc("f.yaml", 4, 5)
    s = ServingConfig(
        engine="vllm",
        container=LDict(),
        container_name="c",
        image="",
        version=None,
        model=Value("m", here),
        flags={"port": Value(8000, here), "max_num_seqs": Value(8, there)},
    )
    assert setting_at(s, there, "no --max-model-len") == "max_num_seqs"
    assert setting_at(s, here, "no --max-model-len: ...") == "max_model_len"
    assert setting_at(s, here, "nothing named") == ""


def test_dynamo_worker_command_lines_are_read_by_their_engine() -> None:
    """``kvlint plan -- python3 -m dynamo.vllm ...`` is vLLM (it was read as SGLang: every vLLM option KV205),
    ``dynamo.sglang`` is SGLang; Dynamo's own options are set aside with a KV504 note, as in a container."""
    vllm_argv = ["python3", "-m", "dynamo.vllm", "--model", "Qwen/Qwen3-8B", "--tensor-parallel-size", "2"]
    cfg = parse_command_line([*vllm_argv, "--gpu-memory-utilization", "0.23", "--is-prefill-worker"])
    assert cfg.engine == "vllm" and cfg.model is not None and cfg.model.value == "Qwen/Qwen3-8B"
    assert cfg.flags["tensor_parallel_size"].value == 2 and cfg.flags["gpu_memory_utilization"].value == 0.23
    assert not [f for f in cfg.findings if f.rule == "KV205"]
    (note,) = [f for f in cfg.findings if f.rule == "KV504"]
    assert "--is-prefill-worker is taken as Dynamo's own" in note.message
    assert parse_command_line(vllm_argv, "0.11.0").version == "0.11.0"
    sg = parse_command_line(["python3", "-m", "dynamo.sglang", "--model-path", "Qwen/Qwen3-8B", "--tp", "2"])
    assert sg.engine == "sglang" and sg.model is not None and sg.model.value == "Qwen/Qwen3-8B"
    assert [f.rule for f in sg.findings if f.rule in ("KV205", "KV504")] == ["KV504"]


def test_options_added_in_0_34_0():
    """The seven options the vllm==0.34.0 wheel adds (``vllm/config/cache.py::CacheConfig.enable_extensible_kv_cache``,
    ``vllm/config/scheduler.py::SchedulerConfig.max_num_inflight_kv_loads`` and
    ``cache_aware_admission_window``/``_threshold``, read through ``EngineArgs.add_cli_args``) are accepted from
    that release and refused by 0.33.0; 0.34.0 removes none of 0.33.0's."""
    new = {
        "--enable-extensible-kv-cache": [],
        "--max-num-inflight-kv-loads": ["8"],
        "--cache-aware-admission-window": ["16"],
        "--cache-aware-admission-threshold": ["0.5"],
    }
    for opt, val in new.items():
        assert "KV205" not in _rules(parse_vllm_argv(["m", opt, *val], version="0.34.0")), opt
        assert "KV205" in _rules(parse_vllm_argv(["m", opt, *val], version="0.33.0")), opt
        assert option_versions(opt) == ("0.34.0", "0.34.0"), opt
    # a BooleanOptionalAction: the negative form turns the default (on for CUDA) off
    off = parse_vllm_argv(["m", "--no-enable-extensible-kv-cache"], version="0.34.0")
    assert off.get("enable_extensible_kv_cache") is False and _rules(off) == []
    assert set(known_options("0.33.0")) <= set(known_options("0.34.0"))


def test_a_word_expanded_from_env_and_a_literal_one_conflict():
    # Kubernetes expands $(TP) before vLLM's argparse sees the command line: both are argv words, the last wins
    c = LDict(name="x", image="vllm/vllm-openai:v0.11.0")
    c["env"] = LList([LDict(name="TP", value="2")])
    c["command"] = LList(
        ["vllm", "serve", "org/m", "--tensor-parallel-size", "$(TP)", "--tensor-parallel-size", "4"]
    )
    cfg = parse_container(c)
    (d,) = [f for f in cfg.findings if f.rule == "KV207"]
    assert "'2' then '4'" in d.message and cfg.get("tensor_parallel_size") == 4
