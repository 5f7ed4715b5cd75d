"""SGLang's ``--config FILE``: the options of a YAML file mounted from a ConfigMap, read as SGLang reads them
(sglang python/sglang/srt/server_args_config_parser.py ``ConfigArgumentMerger``: the file's options first, then
the command line, whose values win; SGLang 0.5.3 and later), for ``python -m sglang.launch_server`` and NVIDIA
Dynamo's SGLang worker (ai-dynamo/dynamo components/src/dynamo/sglang/args.py ``parse_args``). The shape is
that of Dynamo's DeepSeek-V4.1-Flash GB200 recipe (fixtures/collected/ai-dynamo__dynamo__recipes__deepseek-
v4.1-flash__sglang__disagg-gb200__deploy-gke-rdma.yaml), whose model and TP 4 live in the file: kvlint said
"no model in its command" and "the pod requests 4 GPUs but --tp-size 1 uses only 1"."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines.sglang import _config_file_argv, parse_sglang_argv
from kvlint.pipeline import Options, run_check
from kvlint.source import Loc

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: sglang-config}
data:
  server.yaml: |-
    model-path: Qwen/Qwen2.5-7B-Instruct
    tp-size: 2
    context-length: 16384
    mem-fraction-static: 0.8
    enable-metrics: true
    disable-radix-cache: false
---
"""

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: sglang}
spec:
  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L40S}
  containers:
  - name: engine
    image: lmsysorg/sglang:v0.5.5
    command: COMMAND
    volumeMounts: [{name: cfg, mountPath: /etc/sglang}]
    resources: {limits: {nvidia.com/gpu: 2}}
  volumes: [{name: cfg, configMap: {name: sglang-config}}]
"""

LAUNCH = "[python3, -m, sglang.launch_server, --config, /etc/sglang/server.yaml, --context-length, '8192']"


@pytest.fixture
def run(tmp_path: Path):
    def go(text: str):
        path = tmp_path / "sglang.yaml"
        path.write_text(text)
        return _run(str(path))

    return go


def _run(path: str):
    result = run_check([path], Options(allow_hub=False))
    (c,) = [c for c in result.containers if c.serving is not None]
    return result, c.serving


def test_the_file_gives_model_and_layout_and_the_command_line_wins(run) -> None:
    text = CONFIGMAP + POD.replace("COMMAND", LAUNCH)
    result, s = run(text)
    assert s.model is not None and s.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert s.flags["tp_size"].value == 2 and s.flags["mem_fraction_static"].value == 0.8
    assert s.flags["enable_metrics"].value is True and "disable_radix_cache" not in s.flags
    # the command line's --context-length, after the file's, is the one SGLang uses; no KV207 for it
    assert s.flags["context_length"].value == 8192
    assert not [d for d in result.diagnostics if d.rule in ("KV207", "KV403", "KV503")], result.diagnostics
    # values are located in the ConfigMap, at their line
    lines = text.splitlines()
    assert s.flags["tp_size"].loc.line == lines.index("    tp-size: 2") + 1  # type: ignore[union-attr]
    assert s.model.loc.line == lines.index("    model-path: Qwen/Qwen2.5-7B-Instruct") + 1  # type: ignore[union-attr]
    # sized on the GPU it names, with the file's TP
    (c,) = [c for c in result.containers if c.serving is not None]
    assert c.plan is not None


def test_dynamo_sglang_worker_reads_the_file_too(run) -> None:
    command = (
        "[python3, -m, dynamo.sglang, --config, /etc/sglang/server.yaml, --dyn-reasoning-parser, deepseek_r1]"
    )
    result, s = run(CONFIGMAP + POD.replace("COMMAND", command))
    assert s.model is not None and s.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert s.flags["tp_size"].value == 2 and s.flags["context_length"].value == 16384
    assert not [d for d in result.diagnostics if d.rule in ("KV403", "KV503") and d.severity != "info"]


def test_a_file_not_among_the_inputs_is_said_unknown(run) -> None:
    result, s = run(POD.replace("COMMAND", LAUNCH))
    notes = [
        d for d in result.diagnostics if d.rule == "KV503" and "--config /etc/sglang/server.yaml" in d.message
    ]
    assert len(notes) == 1 and notes[0].severity == "warning" and "not among the inputs" in notes[0].message
    assert s.flags["context_length"].value == 8192 and "tp_size" not in s.flags


def test_a_release_without_config_reports_it_unknown() -> None:
    """SGLang 0.4.x has no --config option: the file is not read, the option is KV205 as before."""
    s = parse_sglang_argv(["--config", "/etc/x.yaml", "--model-path", "m"], version="0.4.6")
    assert [f.rule for f in s.findings] == ["KV205"] and "tp_size" not in s.flags


def test_file_options_as_sglang_builds_them() -> None:
    """ConfigArgumentMerger._convert_config_to_args: true -> the flag, false -> nothing, lists -> the items, an
    empty value -> nothing; a file that is not a mapping is refused."""
    at = lambda line, col: Loc("f", line + 1, col + 1)  # noqa: E731
    argv, locs, src = _config_file_argv("a: true\nb: false\nc: [1, 2]\nd: 3\ne:\n", at)
    assert argv == ["--a", "--c", "1", "2", "--d", "3"] and set(src) == {"config"}
    assert locs[0] == Loc("f", 1, 1) and locs[-1] == Loc("f", 4, 4)
    try:
        _config_file_argv("- a\n- b\n", at)
    except ValueError as exc:
        assert "mapping" in str(exc)
    else:
        raise AssertionError("a list file was read")


SECTIONS = """\
apiVersion: v1
kind: ConfigMap
metadata: {name: sglang-config}
data:
  server.yaml: |-
    prefill:
      model-path: Qwen/Qwen2.5-7B-Instruct
      tp-size: 2
      disaggregation-mode: prefill
    decode:
      model-path: Qwen/Qwen2.5-7B-Instruct
      tp-size: 1
      disaggregation-mode: decode
---
"""


@pytest.mark.parametrize("key", ["prefill", "decode"])
def test_dynamo_sglang_config_key_reads_its_section(run, key: str) -> None:
    """Dynamo's SGLang worker takes ``--config-key KEY`` off the arguments and merges only the file's ``KEY``
    section (ai-dynamo/dynamo components/src/dynamo/sglang/args.py ``_extract_config_section``): the sections'
    names were read as options (``--prefill``, ``--decode`` "taken as Dynamo's own") and the model was not found
    (KV503)."""
    command = f"[python3, -m, dynamo.sglang, --config, /etc/sglang/server.yaml, --config-key, {key}]"
    text = SECTIONS + POD.replace("COMMAND", command)
    result, s = run(text)
    assert s.model is not None and s.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert s.flags["disaggregation_mode"].value == key
    assert s.flags["tp_size"].value == (2 if key == "prefill" else 1)
    lines = text.splitlines()
    want = lines.index(f"    {key}:") + 2  # the section's model-path line
    assert s.model.loc is not None and s.model.loc.line == want
    said = " ".join(d.message for d in result.diagnostics)
    assert "--prefill" not in said and "--decode" not in said and "--config-key" not in said
    assert not [d for d in result.diagnostics if d.rule == "KV503"], result.diagnostics


@pytest.mark.parametrize("key", ["prefill", "decode"])
def test_a_typed_dynamo_sglang_command_reads_its_config_key_section(key: str) -> None:
    """``kvlint plan -- python3 -m dynamo.sglang --config FILE --config-key KEY`` reads the file's ``KEY`` section
    as a container's command does (above): the typed command was read by SGLang's parser without Dynamo's
    ``--config-key``, so the sections' names became options "taken as Dynamo's own" and TP stayed 1."""
    from kvlint.engines.command import parse_command_line

    body = SECTIONS.split("server.yaml: |-\n", 1)[1].split("---", 1)[0]
    text = "\n".join(line[4:] for line in body.splitlines())
    s = parse_command_line(
        ["python3", "-m", "dynamo.sglang", "--config", "server.yaml", "--config-key", key],
        "0.5.5",
        config_loader=lambda path: (text, None) if path == "server.yaml" else None,
    )
    assert s.model is not None and s.model.value == "Qwen/Qwen2.5-7B-Instruct"
    assert s.flags["disaggregation_mode"].value == key
    assert s.flags["tp_size"].value == (2 if key == "prefill" else 1)
    said = " ".join(f.message for f in s.findings)
    assert "--prefill" not in said and "--decode" not in said and "--config-key" not in said, said


def test_dynamo_sglang_config_key_not_in_the_file_is_said(run) -> None:
    command = "[python3, -m, dynamo.sglang, --config, /etc/sglang/server.yaml, --config-key, mixed]"
    result, s = run(SECTIONS + POD.replace("COMMAND", command))
    notes = [d for d in result.diagnostics if d.rule == "KV503" and "--config-key 'mixed'" in d.message]
    assert len(notes) == 1 and "prefill, decode" in notes[0].message, result.diagnostics
    assert "tp_size" not in s.flags


def test_plain_sglang_does_not_take_config_key() -> None:
    """``--config-key`` is Dynamo's: SGLang's own launcher refuses it (KV205), and reads the whole file."""
    s = parse_sglang_argv(["--config-key", "prefill", "--model-path", "m"], version="0.5.5")
    assert [f.rule for f in s.findings] == ["KV205"] and "--config-key" in s.findings[0].message


@pytest.mark.parametrize(
    ("image", "key", "refused"),
    [
        # 0.5.14 - 0.5.22's merger keys unsupported actions by dest: the new name a deprecated alias shares is refused
        ("v0.5.16", "cuda-graph-max-bs-decode: 64", True),
        ("v0.5.16", "cuda-graph-max-bs: 64", False),  # the alias's own name is no dest: written and read
        ("v0.5.23", "cuda-graph-max-bs-decode: 64", False),  # 0.5.23 keeps a dest a supported option reads
        ("v0.5.16", "disable-cuda-graph: true", True),  # a deprecated switch (DeprecatedStoreTrueAction)
        ("v0.5.23", "disable-cuda-graph: false", True),  # refused before its value is looked at
        ("v0.5.13", "disable-cuda-graph: true", False),  # a plain store_true there
        ("v0.5.17", "disable-piecewise-cuda-graph: true", True),  # written "--... true": a word left over
        ("v0.5.22", "enable-dp-attention: true", True),
        ("v0.5.21", "enable-dp-attention: true", False),
        ("latest", "disable-cuda-graph: true", False),  # no release known: not said
    ],
)
def test_a_key_sglang_refuses_in_its_config_file_is_kv206(run, image: str, key: str, refused: bool) -> None:
    """SGLang's ``ConfigArgumentMerger`` refuses a key that is the dest of an action neither ``store_true`` nor
    ``store`` ("Unsupported config option ... with action ...", checked before the value; 0.5.8 - 0.5.22 keyed by
    dest, 0.5.23 sparing a dest a supported option shares), and writes the value of a deprecated store-const switch
    after it (argparse: "unrecognized arguments"): the server does not start. kvlint read such a file silently."""
    text = CONFIGMAP.replace("    enable-metrics: true\n", f"    {key}\n") + POD.replace(
        "COMMAND", LAUNCH
    ).replace("v0.5.5", image)
    result, _s = run(text)
    said = [d for d in result.diagnostics if d.rule == "KV206" and "--config file" in d.message]
    if not refused:
        assert said == []
        return
    (d,) = said
    assert d.severity == "error" and key.split(":")[0] in d.message
    assert d.loc is not None and text.splitlines()[d.loc.line - 1].strip() == key


@pytest.mark.parametrize(
    "body",
    [
        # not YAML: yaml.safe_load raises; more than a ConfigMap holds: not read
        "    model-path: [Qwen/Qwen2.5-7B-Instruct\n    tp-size: 2\n",
        "    tp-size: 2\n    # " + "x" * (1024 * 1024 + 16) + "\n",
    ],
)
def test_a_file_kvlint_cannot_read_leaves_its_settings_unknown(run, body: str) -> None:
    """As vLLM's unread --config (kvlint.engines.options.unknown_from_config_file): the file may set the layout and
    the context, so the sizes are unknown, not SGLang's defaults (tp 1: "the pod requests 2 GPUs but --tp-size 1
    uses only 1"), and the command line's own values stay known (engines52)."""
    text = CONFIGMAP.split("  server.yaml: |-\n")[0] + "  server.yaml: |-\n" + body + "---\n"
    result, s = run(text + POD.replace("COMMAND", LAUNCH))
    assert "tp_size" in s.unresolved and "tp_size" not in s.flags, (s.unresolved, s.flags)
    assert s.flags["context_length"].value == 8192
    assert not [d for d in result.diagnostics if d.rule == "KV403"], result.diagnostics
    assert [
        d for d in result.diagnostics if d.rule == "KV503" and "--config /etc/sglang/server.yaml" in d.message
    ]
