"""New-user pass 54 (fresh54) on manifests kvlint had not seen (fixtures/collected, INDEX.csv rows of pass 54).

* AnticipatedD/AMD_Instinct's Deployment requests its GPU as ``://amd.com: "1"`` under limits and requests: not
  a qualified name, so the API server refuses the pod (kubernetes ``pkg/apis/core/validation/validation.go``
  ``validateResourceName`` -> apimachinery ``IsQualifiedName``). KV409 said nothing: the key has a ``/`` and no
  ``gpu`` word, and was read as some other extended resource.
* adnan-drina/rhoai3-nvidia-demo's Nemotron 3 Nano ``LLMInferenceService`` requests ``nvidia.com/mig-3g.40gb``.
  KV501 printed the catalogue builder's status code after the slice size ("40192 MiB per slice (mock (MiB))"),
  and its fix named an L4, a GPU with no MIG, for a pod that needs a GPU offering the 3g.40gb slice.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kvlint.accelerators import registry as cat
from kvlint.options import Options
from kvlint.pipeline import run_check
from kvlint.types import ContainerResult

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
AMD_INSTINCT = COLLECTED / "AnticipatedD__AMD_Instinct__manifests__vllm-deployment.yaml"
NEMOTRON_MIG = (
    COLLECTED
    / "adnan-drina__rhoai3-nvidia-demo__gitops__stage-210-model-serving-foundation__serving__instance__"
    "base__llmis-nemotron-3-nano-30b-a3b.yaml"
)


@pytest.mark.parametrize(
    ("key", "valid"),
    [
        # apimachinery's own examples of a qualified name ("MyName", "my.name", "123-abc", "example.com/MyName")
        ("MyName", True),
        ("my.name", True),
        ("123-abc", True),
        ("example.com/MyName", True),
        ("nvidia.com/mig-3g.40gb", True),
        ("amd.com/gpu", True),
        ("://amd.com", False),  # three parts
        ("nvidia.com/gpu/", False),
        ("/gpu", False),  # an empty prefix
        ("Nvidia.com/gpu", False),  # the prefix is a lower-case DNS subdomain
        ("nvidia.com/-gpu", False),  # the name starts alphanumeric
        ("nvidia.com/" + "g" * 64, False),  # at most 63 characters
        ("a" * 254 + "/gpu", False),  # a subdomain of at most 253
    ],
)
def test_qualified_names_as_the_api_server_reads_them(key: str, valid: bool) -> None:
    from kvlint.rules.families.parallelism import is_qualified_name

    assert is_qualified_name(key) is valid


def test_an_unqualified_gpu_resource_is_kv409() -> None:
    text = AMD_INSTINCT.read_text()
    assert '://amd.com: "1"' in text
    result = run_check([str(AMD_INSTINCT)], Options(allow_hub=False))
    kv409 = [d for d in result.diagnostics if d.rule == "KV409"]
    lines = text.splitlines()
    assert {(d.loc.line if d.loc else 0) for d in kv409} == {
        i + 1 for i, line in enumerate(lines) if line.strip().startswith("://amd.com:")
    }
    for d in kv409:
        assert d.severity == "error"
        assert "'://amd.com' is not a valid resource name" in d.message and "API server rejects" in d.message
        assert "amd.com/gpu" in (d.fix or "")


def test_a_qualified_unknown_resource_without_a_gpu_word_stays_quiet(tmp_path: Path) -> None:
    # a valid extended resource of another plugin (RDMA, EFA) is no GPU request and not KV409's
    f = tmp_path / "d.yaml"
    f.write_text(
        AMD_INSTINCT.read_text()
        .replace('://amd.com: "1"  #', 'rdma/hca_shared_devices_a: "1"  #')
        .replace('://amd.com: "1"', 'vpc.amazonaws.com/efa: "1"')
    )
    result = run_check([str(f)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV409"]


def test_mig_slice_notes_say_where_the_figure_comes_from_in_words() -> None:
    for profiles in cat._cat().mig.values():
        for prof in profiles.values():
            words = prof.provenance
            # the builder's codes (kvlint/accelerators/_build_catalogue.py _profile_memory) are not printed
            assert "(MiB)" not in words and "GiB: minimum" not in words and words != "mock", prof.status
    result = run_check([str(NEMOTRON_MIG)], Options(allow_hub=False))
    (kv501,) = [d for d in result.diagnostics if d.rule == "KV501"]
    assert "MiB per slice" in kv501.message
    assert "(mock" not in kv501.message and "go-nvml mock figure" in kv501.message


def test_kv501_names_a_gpu_offering_the_requested_mig_slice(tmp_path: Path) -> None:
    text = NEMOTRON_MIG.read_text()
    assert 'nvidia.com/mig-3g.40gb: "1"' in text and "nodeSelector" not in text
    result = run_check([str(NEMOTRON_MIG)], Options(allow_hub=False))
    (kv501,) = [d for d in result.diagnostics if d.rule == "KV501"]
    m = re.search(
        r"name the GPU \((\S+) in these examples\): a nodeSelector ([\w./-]+): ([\w.-]+)", kv501.fix or ""
    )
    assert m is not None, kv501.fix
    acc = cat.lookup(m.group(1))
    assert acc is not None
    prof, _ = cat.mig_profile(acc.id, "3g.40gb")
    assert prof is not None, acc.id  # the example GPU offers the slice the pod requests
    # the nodeSelector the fix writes sizes the container on that slice
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(
        text.replace(
            "    tolerations:", f"    nodeSelector:\n      {m.group(2)}: {m.group(3)}\n    tolerations:"
        )
    )
    after = run_check([str(fixed)], Options(allow_hub=False))
    (c,) = [c for c in after.containers if isinstance(c, ContainerResult)]
    assert c.plan is not None and c.placement is not None
    assert c.placement.accelerator is not None and c.placement.accelerator.id == acc.id
    assert c.placement.mig_profile == "3g.40gb"


@pytest.mark.parametrize(
    "words",
    [
        [
            "--offline",
            "--no-config",
            str(COLLECTED / "tungsheng__gpu-inference-lab__platform__inference__vllm-openai.yaml"),
        ],
        ["--fail-on", "never", str(COLLECTED)],  # kvlint check's option with its value, then a directory
    ],
)
def test_kvlint_plan_given_check_options_and_a_manifest_says_to_use_check(words: list[str]) -> None:
    # typed as for kvlint check on a collected manifest: "not an engine command: --no-config FILE", with the engine
    # command forms and no word of kvlint check
    from click.testing import CliRunner

    from kvlint.cli import main

    result = CliRunner().invoke(main, ["plan", *words])
    assert result.exit_code == 2
    out = " ".join(result.output.split())
    assert f"lint them with `kvlint check {words[-1]}`" in out
    option = next(w for w in words if w.startswith("-") and w != "--offline")
    assert f"{option} is not an option of kvlint plan" in out
    assert "not an engine command" not in out


def test_kvlint_plan_option_before_an_engine_command_keeps_its_message() -> None:
    # an option whose value is a directory, then the engine command: the option is the mistake, not a manifest
    from click.testing import CliRunner

    from kvlint.cli import main

    result = CliRunner().invoke(
        main, ["plan", "--download-dir", str(COLLECTED), "--", "vllm", "serve", "Qwen/Qwen3-8B"]
    )
    assert result.exit_code == 2
    out = " ".join(result.output.split())
    assert "--download-dir is not an option of kvlint plan" in out and "not manifests" not in out


# --- a quote meant inside a quoted scalar closes it early ---------------------------------------------------------

LWS_LMCACHE = COLLECTED / "surajssd__llm-k8s__configs__deepseek-v2.5-lmcache__k8s__lws.yaml"
_KV_JSON = '{"kv_connector":"LMCacheConnector","kv_role":"kv_both"}'


def test_a_json_value_inside_a_double_quoted_script_is_named_as_the_cause() -> None:
    # surajssd's LWS writes its `sh -c` script as one double-quoted scalar holding
    # --kv-transfer-config '{"kv_connector":...}': the first inner " ends the string. KV001 said only "while
    # parsing a block mapping: did not find expected key"
    text = LWS_LMCACHE.read_text()
    result = run_check([str(LWS_LMCACHE)], Options(allow_hub=False))
    (kv001,) = [d for d in result.diagnostics if d.rule == "KV001"]
    assert kv001.loc is not None
    line = text.splitlines()[kv001.loc.line - 1]
    quote_col = line.index(_KV_JSON) + 2  # 1-based column of the " after '{
    assert line[quote_col - 1] == '"'
    assert f'right after the " at column {quote_col}' in kv001.message
    assert "closes the string early" in kv001.message
    assert '\\"' in (kv001.fix or "") and "block scalar" in (kv001.fix or "")


def test_the_fix_kv001_gives_makes_the_file_parse(tmp_path: Path) -> None:
    # each " inside the string written as \" (the fix's first remedy, on every JSON value of the script)
    fixed = tmp_path / "lws.yaml"
    fixed.write_text(LWS_LMCACHE.read_text().replace(_KV_JSON, _KV_JSON.replace('"', '\\"')))
    result = run_check([str(fixed)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV001"]
    assert [c for c in result.containers if isinstance(c, ContainerResult)]


@pytest.mark.parametrize(
    "doc",
    [
        "a: 1\n b: 2\n",  # bad indentation: no quote before the mark
        'a: "x\n',  # an unterminated string: the mark is at the end
        "a: 'x' # c\nb: [1, 2\n",  # an unclosed flow sequence
    ],
)
def test_other_syntax_errors_keep_their_message(tmp_path: Path, doc: str) -> None:
    f = tmp_path / "d.yaml"
    f.write_text(doc)
    result = run_check([str(f)], Options(allow_hub=False))
    kv001 = [d for d in result.diagnostics if d.rule == "KV001"]
    assert kv001 and all("closes the string early" not in d.message for d in kv001)


# --- a Ray Serve LLM config's runtime_env pins the vLLM release -----------------------------------------------------

GPT_OSS_RAY = COLLECTED / "jimmyshah83__gpt-oss-k8s-gpu-inferencing__k8s__gpt-oss-20b-deploy.yaml"
_PIN = 'pip: ["vllm==0.10.1+gptoss"]'


def _ray_run(path: Path) -> tuple[ContainerResult, list]:
    result = run_check([str(path)], Options(allow_hub=False))
    (c,) = [c for c in result.containers if isinstance(c, ContainerResult)]
    return c, result.diagnostics


def test_an_llm_configs_runtime_env_pin_is_the_engine_release() -> None:
    # the LLM config's runtime_env installs vllm==0.10.1+gptoss (ray-project/ray LLMConfig.runtime_env: "for the
    # model deployment replica and the engine workers"); KV208 said the release was the Ray image's and assumed the
    # newest kvlint models
    text = GPT_OSS_RAY.read_text()
    assert _PIN in text and "rayproject/ray:" in text
    c, diags = _ray_run(GPT_OSS_RAY)
    assert c.serving is not None and c.serving.version == "0.10.1"
    assert not [d for d in diags if d.rule == "KV208"]
    (kv504,) = [d for d in diags if d.rule == "KV504" and "runtime_env.pip" in d.message]
    assert "llm_configs[0].runtime_env.pip" in kv504.message
    assert kv504.loc is not None and _PIN in text.splitlines()[kv504.loc.line - 1]


def test_the_applications_pin_is_read_when_the_llm_config_has_none(tmp_path: Path) -> None:
    text = GPT_OSS_RAY.read_text()
    f = tmp_path / "app-pin.yaml"
    # the application-level `- "vllm"` pinned, the LLM config's pin removed
    f.write_text(text.replace('- "vllm"', '- "vllm==0.9.2"').replace(_PIN, 'pip: ["transformers"]'))
    c, diags = _ray_run(f)
    assert c.serving is not None and c.serving.version == "0.9.2"
    assert any(d.rule == "KV504" and "vLLM 0.9.2 is read from runtime_env.pip" in d.message for d in diags)


def test_no_pin_keeps_kv208_on_the_ray_image(tmp_path: Path) -> None:
    f = tmp_path / "unpinned.yaml"
    f.write_text(GPT_OSS_RAY.read_text().replace(_PIN, 'pip: ["vllm"]'))
    _, diags = _ray_run(f)
    assert any(d.rule == "KV208" and "Python environment of the Ray image" in d.message for d in diags)


@pytest.mark.parametrize(
    "words",
    [
        [
            "--accelerator",
            "l4",
            str(COLLECTED / "tungsheng__gpu-inference-lab__platform__inference__vllm-openai.yaml"),
        ],
        [
            "--no-config",
            str(COLLECTED / "tungsheng__gpu-inference-lab__platform__inference__vllm-openai.yaml"),
        ],
    ],
)
def test_kvlint_simulate_given_a_manifest_says_to_use_check(words: list[str]) -> None:
    # `kvlint simulate --accelerator l4 FILE` said "not an engine command: FILE" with the engine forms only, as
    # kvlint plan did before its manifest message
    from click.testing import CliRunner

    from kvlint.cli import main

    result = CliRunner().invoke(main, ["simulate", *words])
    assert result.exit_code == 2
    out = " ".join(result.output.split())
    assert "kvlint simulate simulates one vLLM command typed after `--`, not manifests" in out
    assert f"lint them with `kvlint check {words[-1]}`" in out
    assert "not an engine command" not in out
    if "--no-config" in words:
        assert "--no-config is not an option of kvlint simulate" in out
