"""One rule for the engine release (kvlint.engines.images.engine_release): for each kind of workload, with and
without --engine-version, the release the option parser reads the command with is the release the memory model
plans and the JSON report gives, and both are the one the documented precedence names (README "Options shared
by check and plan", docs/rules.md KV208): a release image's pinned tag, else --engine-version, else what another
image's tag says, else none (the newest release modelled is planned).

Everything runs through ``kvlint check`` (click's CliRunner) on manifests written here. The parser's release is
read from its KV205 on ``--swap-space``, an option later vLLM releases refuse: "unknown vLLM X option" names
the release X it was read with, "the image does not say which release runs" says it was read with none. Every
release used below refuses it (checked by the first test), so the KV205 always says which.
"""

from __future__ import annotations

import dataclasses
import json
import re
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.engines.images import DYNAMO_ENGINES, KSERVE_HF_VLLM
from kvlint.engines.vllm import known_options
from kvlint.memory.versions import fmt_version, resolve_version
from kvlint.options import Options

#: --engine-version in the runs with the flag.
FLAG = "0.22.0"
#: The releases the tags below pin (not FLAG).
PINNED = "0.20.0"
FORK = "0.28.0"
KSERVE_TAG = "0.20.0"  # the KServe release whose huggingfaceserver image installs KSERVE_HF_VLLM[KSERVE_TAG]
DYNAMO_TAG = (
    "1.1.0"  # a Dynamo release whose support matrix names the vLLM its image carries (DYNAMO_ENGINES)
)

_MODEL = "Qwen/Qwen2.5-7B-Instruct"


def _pod(name: str, container: str) -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  containers:\n  - name: engine\n"
        + container
        + "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )


def _args(image: str) -> str:
    return f'    image: {image}\n    args: [--model, {_MODEL}, --swap-space, "4"]\n'


#: name -> (manifest, the release of the image, the precedence step that gives it). ``image_release`` is what
#: the image itself pins (None: it pins none); ``release_image`` says whether it is a release image of vLLM,
#: whose tag beats --engine-version.
WORKLOADS: dict[str, tuple[str, str | None, bool]] = {
    # 1. the engine's own release image, pinned: its tag wins over the flag
    "pinned": (_pod("pinned", _args(f"vllm/vllm-openai:v{PINNED}")), PINNED, True),
    # the engine's image with a moving tag: the flag, else none
    "latest": (_pod("latest", _args("vllm/vllm-openai:latest")), None, False),
    # a rebuild kvlint does not know whose name begins with vLLM's image name: its tag is read as vLLM's, but the
    # image is not vLLM's release image, so the flag wins over it
    "fork": (_pod("fork", _args(f"registry.example.com/ml/vllm-openai-rebuild:v{FORK}")), FORK, False),
    # a fork or custom build whose name only holds vLLM's (Neural Magic's nm-vllm-openai, whose tags are nm-vllm's
    # release numbers; quay.io/tms/vllm-dev-pplx): its tag is its own version, not vLLM's, so it pins none
    "ownversion": (_pod("ownversion", _args("ghcr.io/neuralmagic/nm-vllm-openai:v0.1.0")), None, False),
    "custombuild": (_pod("custombuild", _args("quay.io/tms/vllm-dev-pplx:0.1.0")), None, False),
    # a private build given vLLM's arguments (KV504): its tag names no release
    "private": (_pod("private", _args("registry.example.com/ml/llm-server:2025.10")), None, False),
    # no image at all
    "noimage": (
        _pod("noimage", f'    command: [vllm, serve, {_MODEL}, --swap-space, "4"]\n'),
        None,
        False,
    ),
    # KServe's Hugging Face server: its KServe tag says which vLLM it installs, but it is not vLLM's image
    "kserve": (
        _pod(
            "kserve",
            f"    image: kserve/huggingfaceserver:v{KSERVE_TAG}-gpu\n"
            f'    args: [--model_name=m, --model_id={_MODEL}, --swap-space, "4"]\n',
        ),
        KSERVE_HF_VLLM[KSERVE_TAG],
        False,
    ),
    # a KServe InferenceService on the Hugging Face runtime: the image (and its vLLM) is the KServe release's
    "isvc": (
        "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: isvc}\nspec:\n"
        "  predictor:\n    model:\n      modelFormat: {name: huggingface}\n"
        f'      args: [--model_name=m, --model_id={_MODEL}, --swap-space, "4"]\n'
        '      resources: {limits: {nvidia.com/gpu: "1"}}\n',
        None,
        False,
    ),
    # NVIDIA Dynamo's vLLM worker: the tag is a Dynamo release, never vLLM's
    "dynamo": (
        _pod(
            "dynamo",
            "    image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.5.0\n"
            f'    command: [python3, -m, dynamo.vllm, --model, {_MODEL}, --swap-space, "4"]\n',
        ),
        None,
        False,
    ),
    # a Dynamo release the support matrix lists: the vLLM it carries is read from the tag (step 3), and the flag
    # still wins over it
    "dynamomapped": (
        _pod(
            "dynamomapped",
            f"    image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:{DYNAMO_TAG}\n"
            f'    command: [python3, -m, dynamo.vllm, --model, {_MODEL}, --swap-space, "4"]\n',
        ),
        DYNAMO_ENGINES[DYNAMO_TAG][0],
        False,
    ),
}


def _expected(name: str, flag: str | None) -> str | None:
    """The release the documented precedence names for workload ``name`` with ``--engine-version flag``."""
    _, image_release, release_image = WORKLOADS[name]
    if release_image and image_release is not None:
        return image_release
    return flag or image_release


@cache
def _run(flag: str | None, tmp: str) -> dict:
    p = Path(tmp) / "workloads.yaml"
    p.write_text("---\n".join(text for text, _, _ in WORKLOADS.values()))
    argv = ["check", "--offline", "--no-config", "--format", "json", "--accelerator", "h100", str(p)]
    if flag:
        argv[1:1] = ["--engine-version", flag]
    r = CliRunner().invoke(main, argv)
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def tmp(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("engver"))


def _parser_release(report: dict, name: str) -> str | None:
    """The release the option parser read workload ``name`` with, from its KV205 on --swap-space; for a Dynamo
    worker, whose options the engine's parser does not know are taken as Dynamo's own (no KV205), from its KV504
    naming the release it was read with (the flag's, or the one its Dynamo release carries)."""
    kv205 = [
        d
        for d in report["diagnostics"]
        if d["rule"] == "KV205" and "--swap-space" in d["message"] and d["object"].endswith(f"/{name}")
    ]
    if not kv205:
        (d,) = [
            d
            for d in report["diagnostics"]
            if d["rule"] == "KV504" and "NVIDIA Dynamo's vllm worker" in d["message"]
            if d["object"].endswith(f"/{name}")
        ]
        m = re.search(
            r"kvlint applied the rules of vLLM (\S+), the release --engine-version names", d["message"]
        ) or re.search(
            r"which carries vLLM (\S+) \(Dynamo's support matrix\), the release kvlint read", d["message"]
        )
        assert m, d["message"]
        return m.group(1)
    (d,) = kv205
    m = re.search(r"unknown vLLM (\S+) option --swap-space", d["message"])
    if m:
        return m.group(1)
    assert "the image does not say which release runs" in d["message"], d["message"]
    return None


def test_every_release_used_refuses_swap_space() -> None:
    """The premise of :func:`_parser_release`: each release the workloads can be read with refuses --swap-space,
    so its KV205 names the release."""
    for release in (FLAG, PINNED, FORK, KSERVE_HF_VLLM[KSERVE_TAG]):
        assert "--swap-space" not in known_options(release), release


@pytest.mark.parametrize("flag", [None, FLAG], ids=["no-flag", "engine-version"])
@pytest.mark.parametrize("name", list(WORKLOADS))
def test_parser_and_memory_model_use_the_one_release(name: str, flag: str | None, tmp: str) -> None:
    report = _run(flag, tmp)
    expected = _expected(name, flag)
    (w,) = [w for w in report["workloads"] if w["name"] == name]
    # the option parser's release
    assert _parser_release(report, name) == expected
    # the release the report gives for the container, and the one the memory model planned (the newest
    # release it models when none is known)
    assert w["engine_version"] == expected
    assert w["plan"] is not None, w["plan_error"]
    assert w["plan"]["engine_version"] == fmt_version(resolve_version(expected)[0])


def test_the_table_covers_every_step_of_the_precedence() -> None:
    """The workloads above exercise each step: a release image's tag beating the flag (1), the flag (2), another
    image's tag without the flag (3), and none (4); and the flag differs from every tag, so a wrong winner shows."""
    steps = {(_expected(n, FLAG), _expected(n, None)) for n in WORKLOADS}
    assert (PINNED, PINNED) in steps and (FLAG, FORK) in steps and (FLAG, None) in steps
    assert FLAG not in {PINNED, FORK, KSERVE_HF_VLLM[KSERVE_TAG], DYNAMO_ENGINES[DYNAMO_TAG][0]}


@pytest.mark.parametrize("flag", [None, FLAG], ids=["no-flag", "engine-version"])
def test_plan_of_a_typed_command_agrees_with_check(flag: str | None, tmp: str) -> None:
    """``kvlint plan`` reads and plans a typed command (no image) with the release ``kvlint check`` gives a
    container without an image."""
    argv = ["plan", "--accelerator", "h100", "--format", "json"]
    if flag:
        argv += ["--engine-version", flag]
    r = CliRunner().invoke(main, [*argv, "--", "vllm", "serve", _MODEL, "--swap-space", "4"])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    planned = json.loads(r.stdout)
    report = _run(flag, tmp)
    (w,) = [w for w in report["workloads"] if w["name"] == "noimage"]
    assert (
        planned["engine_version"] == w["plan"]["engine_version"]
    )  # the plan's release (its fields come last)
    (d,) = [d for d in planned["diagnostics"] if d["rule"] == "KV205"]
    (c,) = [c for c in report["diagnostics"] if c["rule"] == "KV205" and c["object"].endswith("Pod/noimage")]
    assert d["message"] == c["message"]  # the parser read both with the same release


def test_dynamo_note_names_the_release_engine_version_gives(tmp: str) -> None:
    """A pinned Dynamo tag: the KV504 says which vLLM release kvlint applied, the newest it models without the
    flag and the flag's release with it (it used to say the newest either way)."""

    def note(flag: str | None) -> str:
        (d,) = [
            d
            for d in _run(flag, tmp)["diagnostics"]
            if d["rule"] == "KV504" and d["object"].endswith("Pod/dynamo")
        ]
        return d["message"]

    assert f"kvlint applied the rules of vLLM {FLAG}, the release --engine-version names" in note(FLAG)
    assert "the newest release it models, unless --engine-version names another" in note(None)


def test_dynamo_note_with_the_flag_keeps_the_release_the_image_carries(tmp: str) -> None:
    """A Dynamo release the support matrix lists, run with --engine-version: the KV504 says the flag's release
    was applied and still names the vLLM the image carries (it said 'the vllm version inside is not known',
    which the same note without the flag contradicts)."""
    (d,) = [
        d
        for d in _run(FLAG, tmp)["diagnostics"]
        if d["rule"] == "KV504" and d["object"].endswith("Pod/dynamomapped")
    ]
    carried = DYNAMO_ENGINES[DYNAMO_TAG][0]
    assert carried != FLAG
    assert (
        f"Dynamo release {DYNAMO_TAG}, which carries vLLM {carried} (Dynamo's support matrix)" in d["message"]
    )
    assert f"kvlint applied the rules of vLLM {FLAG}, the release --engine-version names" in d["message"]
    assert "version inside is not known" not in d["message"]


COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"


@pytest.mark.parametrize("flag", [None, FLAG], ids=["no-flag", "engine-version"])
@pytest.mark.parametrize(
    ("name", "pinned"),
    [
        (
            "kubernetes-sigs__lws__docs__examples__vllm__lws.yaml",
            None,
        ),  # image: <image-built-from-dockerfile>
        (
            "sgl-project__rbg__examples__deprecated__v1alpha1__multi-nodes__vllm.yaml",
            "0.10.0",
        ),  # vllm-openai:v0.10.0
    ],
)
def test_a_multinode_leader_is_read_with_the_release_of_its_own_analysis(
    name: str, pinned: str | None, flag: str | None
) -> None:
    """The leader a multi-node worker joins (whose layout the worker's GPUs are checked against) is read with
    the release the leader's own analysis uses: before, it was read without --engine-version."""
    from kvlint.options import Options
    from kvlint.pipeline import run_check

    r = run_check([str(COLLECTED / name)], Options(allow_hub=False, engine_version=flag))
    (worker,) = [c for c in r.containers if c.workload.role == "worker"]
    leaders = [c for c in r.containers if c.workload.role == "leader"]
    assert leaders and worker.serving.joins is not None and worker.serving.joins.leader is not None
    expected = pinned or flag
    assert {c.serving.version for c in leaders} == {expected}
    assert worker.serving.joins.leader.version == expected
    assert worker.serving.version == expected


def _agree(tmp: str, opts: Options) -> tuple[str | None, str | None, str]:
    """The parser's release, the container's and the plan's for the ``latest`` workload checked with ``opts``
    (kvlint.pipeline.run_check, the pipeline behind check and the webhook)."""
    from kvlint.pipeline import run_check
    from kvlint.report.jsonout import render_json

    text, _, _ = WORKLOADS["latest"]
    p = Path(tmp) / "latest.yaml"
    p.write_text(text)
    report = json.loads(render_json(run_check([str(p)], opts)))
    (w,) = report["workloads"]
    return _parser_release(report, "latest"), w["engine_version"], w["plan"]["engine_version"]


def test_the_webhook_takes_engine_version_as_check_does(tmp: str) -> None:
    """``kvlint webhook serve --engine-version v0.22.0``: the release is 0.22.0 for the option parser and the plan
    alike, as for ``kvlint check``; a raw ``v0.22.0`` was every release's options to the parser (KV205 'the image
    does not say which release runs') but 0.22.0 to the memory model."""
    import click

    from kvlint.webhook import cli as webhook_cli

    s = webhook_cli.build_settings(engine_version=f"v{FLAG}")
    assert s.options.engine_version == FLAG
    assert _agree(tmp, dataclasses.replace(s.options, accelerator="h100")) == (FLAG, FLAG, FLAG)
    with pytest.raises(click.BadParameter, match="not a release number"):
        webhook_cli.build_settings(engine_version="fast")


def test_simulate_and_verify_take_engine_version_as_check_does() -> None:
    """``kvlint simulate``/``verify`` build their options in one place, which now reads --engine-version as
    ``kvlint check`` does."""
    from click.testing import CliRunner

    from kvlint.capacity.cli import _make_options

    assert _make_options(None, None, f"v{FLAG}", (), True).engine_version == FLAG
    r = CliRunner().invoke(
        main, ["simulate", "--accelerator", "h100", "--engine-version", "fast", "--", "vllm", "serve", _MODEL]
    )
    assert r.exit_code == 2 and "'fast' is not a release number such as 0.11.0" in r.output


def test_config_engine_version_is_read_as_the_option_is(tmp_path: Path) -> None:
    """``engine_version`` in .kvlint.yaml: ``v0.22.0`` is 0.22.0, and a value the schema's pattern lets through
    but no release is (``0.11.0-foo``) is refused at its line, not read as a release nobody can order."""
    from kvlint.config import ConfigError, parse_config

    assert parse_config(f'engine_version: "v{FLAG}"\n').engine_version == FLAG
    with pytest.raises(
        ConfigError, match=r"^\.kvlint\.yaml:1:17: engine_version: '0\.11\.0-foo' is not a release"
    ):
        parse_config('engine_version: "0.11.0-foo"\n')


def test_a_dynamo_tag_is_not_the_vllm_release_its_options_are_read_with(tmp_path: Path) -> None:
    """``ai-dynamo/vllm-runtime:0.5.0`` runs a vLLM of its own choosing, not vLLM 0.5.0: a vLLM option newer than
    0.5.0 (--kv-transfer-config, Dynamo's disaggregation setting) is vLLM's, not "taken as Dynamo's own", which
    it was when the parser read the tag as the vLLM release (and the plan the newest)."""
    from kvlint.memory.versions import NEWEST_VLLM

    assert "--kv-transfer-config" in known_options(NEWEST_VLLM)
    assert "--kv-transfer-config" not in known_options("0.5.0")  # what made the old reading show
    p = tmp_path / "dynamo.yaml"
    p.write_text(
        _pod(
            "dynamo",
            "    image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.5.0\n"
            f"    command: [python3, -m, dynamo.vllm, --model, {_MODEL}, --kv-transfer-config, "
            """'{"kv_connector":"NixlConnector","kv_role":"kv_both"}']\n""",
        )
    )
    r = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--format", "json", str(p)])
    report = json.loads(r.stdout)
    (note,) = [d for d in report["diagnostics"] if d["rule"] == "KV504"]
    assert "taken as Dynamo's own" not in note["message"]
    assert not [d for d in report["diagnostics"] if d["rule"] == "KV205"]


def test_a_version_of_thousands_of_digits_names_no_release(tmp_path: Path) -> None:
    """Python's int() refuses a number of more than 4,300 digits: an image tag ``v1.<5,000 digits>`` raised
    ValueError in the option parser's release table, and the container was "KV503 kvlint could not read this
    container's command" and not sized (any error in its flags unreported). Such a tag names no release: KV208
    says so and the container is read and sized; parse_pep440 (which never raises) and version_tuple answer
    None, and --engine-version refuses the text with its own message, cut."""
    from kvlint.engines.options import version_tuple
    from kvlint.memory.versions import engine_version_option, parse_pep440
    from kvlint.pipeline import run_check

    digits = "9" * 5000
    assert parse_pep440(f"1.{digits}") is None and parse_pep440(f"v0.11.{digits}") is None
    assert version_tuple(f"1.{digits}") is None and version_tuple(f"0.11.0.post{digits}") is None
    with pytest.raises(ValueError, match=r"is not a release number") as err:
        engine_version_option(f"1.{digits}")
    assert len(str(err.value)) < 300
    text = (Path(__file__).resolve().parents[1] / "fixtures" / "webhook" / "b09-clean.yaml").read_text()
    path = tmp_path / "d.yaml"
    path.write_text(text.replace("vllm/vllm-openai:v0.11.0", f"vllm/vllm-openai:v1.{digits}"))
    result = run_check([str(path)], Options(allow_hub=False))
    assert not [d for d in result.diagnostics if d.rule == "KV503"], result.diagnostics
    (kv208,) = [d for d in result.diagnostics if d.rule == "KV208"]
    assert "names no vLLM release" in kv208.message
    (c,) = [c for c in result.containers if c.serving is not None]
    assert c.serving.model is not None and c.serving.model.value == "meta-llama/Llama-3.1-8B-Instruct"


def test_an_sglang_release_named_inline_in_a_tag_is_read_for_sglang_only(tmp_path: Path) -> None:
    """OME's GLM runtime (sgl-project/ome config/runtimes/srt/zai-org/glm-text-fp8-tp8-rt.yaml) runs SGLang on the
    SGLang model gateway image ``ghcr.io/lightseekorg/smg:1.3.2-sglang-v0.5.9``, whose tag names the SGLang it
    bundles (1.3.2 is the gateway's own version). The container was "KV208 the tag names no SGLang release" and
    planned with the newest release modelled; it is read with the release the tag names (step 3, an image kvlint
    does not know as SGLang's release image: --engine-version still wins), and a vLLM container on such an image
    gets no release from it."""
    from kvlint.engines.images import engine_release, engine_version

    image = "ghcr.io/lightseekorg/smg:1.3.2-sglang-v0.5.9"
    assert engine_version(image) == "0.5.9"
    assert engine_release(image, "sglang", None) == "0.5.9"
    assert engine_release(image, "sglang", "0.5.5") == "0.5.5"
    assert engine_release(image, "vllm", None) is None
    # the release images keep their own tags' reading
    assert engine_release("lmsysorg/sglang:v0.5.5.post3-cu126", "sglang", None) == "0.5.5.post3"
    p = tmp_path / "smg.yaml"
    p.write_text(
        _pod(
            "smg",
            f"    image: {image}\n    command: [python3, -m, sglang.launch_server, --model-path, {_MODEL}, "
            '--context-length, "8192"]\n',
        )
    )
    args = ["check", "--offline", "--no-config", "--accelerator", "h100", "--format", "json", str(p)]
    r = CliRunner().invoke(main, args)
    report = json.loads(r.stdout)
    (w,) = [w for w in report["workloads"] if w["name"] == "smg"]
    assert w["engine_version"] == "0.5.9"
    assert w["plan"] is not None and w["plan"]["engine_version"] == "0.5.9", w["plan"]
    assert not [d for d in report["diagnostics"] if d["rule"] == "KV208"]


def test_an_inline_sglang_release_is_not_read_for_an_image_of_another_engine() -> None:
    """An image whose name is another engine's (vLLM's ``.../vllm-openai``, TGI's ``text-generation-inference``) and
    whose tag also names an SGLang release inline keeps the release of its own tag: the inline reading
    (:func:`kvlint.engines.images.inline_engine`) ran before the tag's and made ``vllm-openai:v0.11.0-sglang-v0.5.9``
    vLLM 0.5.9 (step 1: over --engine-version too) and a TGI 3.0.1 image TGI 0.4.6."""
    from kvlint.engines.images import engine_release, engine_version

    vllm_image = "ghcr.io/acme/vllm-openai:v0.11.0-sglang-v0.5.9"
    assert engine_version(vllm_image) == "0.11.0"
    assert engine_release(vllm_image, "vllm", None) == "0.11.0"
    assert engine_release(vllm_image, "vllm", FLAG) == "0.11.0"
    assert engine_release(vllm_image, "sglang", None) is None
    tgi_image = "ghcr.io/huggingface/text-generation-inference:3.0.1-sglang0.4.6"
    assert engine_release(tgi_image, "tgi", None) == "3.0.1"
    # an image that names no engine but SGLang's inline release keeps it, for SGLang only
    assert engine_release("ghcr.io/acme/llm:2.1-sglang-v0.5.9", "sglang", None) == "0.5.9"
    assert engine_release("ghcr.io/acme/llm:2.1-sglang-v0.5.9", "vllm", None) is None


#: Image references of ../shared/corpus/manifests and fixtures/collected (and the trial's) -> the vLLM release their
#: tag pins for a container running vLLM: a repository kvlint does not know as a vLLM build pins it only when its
#: last path component names vLLM's image (``vllm``, ``vllm-openai``, ``vllm-openai-<build words>``).
CORPUS_READINGS = {
    # a private registry's copy of vLLM's image (fixtures/collected/zhaotyer__lws_usage__vllm_pd.yaml): vLLM's tag
    # (``nvidia/vllm`` in ``xpu-nvidia/vllm-openai`` is not NGC's image)
    "harbor.transwarp.io/aip-amd/xpu-nvidia/vllm-openai:v0.11.2": "0.11.2",
    "harbor.transwarp.io/aip/vllm/vllm-openai:v0.10.0-quart": "0.10.0",
    "aibrix-container-registry-cn-beijing.cr.volces.com/aibrix/vllm-openai-aibrix-kvcache-nixl:v0.10.2-nixl-0.7.1"
    "-ucx-1.19.0": "0.10.2",
    "intel/vllm:0.10.0-xpu": "0.10.0",
    # the image's own version (tlrmchlsmth/vllm-dp-lws installs vLLM from main at start; nm-vllm's releases;
    # KServe's release; a private build's 1.0.0)
    "quay.io/tms/vllm-dev-pplx:0.1.0": None,
    "ghcr.io/neuralmagic/nm-vllm-openai:v0.1.0": None,
    "kserve/vllmserver:v0.12.1": None,
    "acrllmproyecto.azurecr.io/llm-project/vllm-server:v1.0.0": None,
    "quay.io/rh-aiservices-bu/vllm-cpu-openai-ubi9:0.3": None,
    # builds whose publisher says the tag leads with the vLLM release (VLLM_RELEASE_TAG_BUILDS): AIBrix's mirror of
    # vllm/vllm-openai:v0.23.0, AWS's Neuron vLLM DLC (a vLLM Neuron plugin version 0.21.0.1.0.0 holds vLLM 0.21.0)
    "aibrix-public-release-cn-beijing.cr.volces.com/aibrix/llmd-vllm-openai:v0.23.0": "0.23.0",
    "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.13.0-neuronx-py312-sdk2.28.0-ubuntu24.04": "0.13.0",
    "public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.21.0.1.0.0-neuronx-py313-sdk2.31.0-ubuntu24.04": "0.21.0",
    # vLLM Ascend's release vX.Y.Z[rcN] runs vLLM X.Y.Z (its versioning policy's compatibility matrix)
    "quay.io/ascend/vllm-ascend:v0.11.0rc1-a3": "0.11.0",
    "openeuler/vllm-ascend:v0.8.5rc1": "0.8.5",
    # vLLM's own CPU release images on its ECR (the images vllm/vllm-openai-cpu:v<release>-x86_64 re-tags)
    "public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:v0.10.1": "0.10.1",
    "public.ecr.aws/q9t5s3a7/vllm-arm64-cpu-release-repo:v0.11.0": "0.11.0",
    # known builds whose tags are their own stay so (NGC, llm-d)
    "nvcr.io/nvidia/vllm:26.02-py3": None,
    "ghcr.io/llm-d/llm-d-cuda:v0.3.0": None,
    # an inline vLLM release in the name still pins it
    "public.ecr.aws/neuron/neuron-sdk2.20-vllm0.5.0-neuron:v1": "0.5.0",
}


@pytest.mark.parametrize("image", list(CORPUS_READINGS))
def test_a_tag_pins_vllm_only_on_an_image_named_for_it(image: str) -> None:
    from kvlint.engines.images import engine_release

    assert engine_release(image, "vllm", None) == CORPUS_READINGS[image]
