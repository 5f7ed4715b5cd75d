"""Finding texts quote what the manifest wrote once, in its own spelling (tags51)."""

from __future__ import annotations

from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check


def _pod(tmp_path: Path, container: str, gpus: int = 1) -> Path:
    p = tmp_path / "pod.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers:\n  - name: engine\n"
        + container
        + f"    resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}\n"
    )
    return p


def test_kv503_names_a_script_run_alone_once(tmp_path: Path) -> None:
    """A container whose command is a script's path alone: KV503 said "runs the script /usr/local/bin/run.sh
    (/usr/local/bin/run.sh)"; the brackets hold the whole command only when it says more than the path."""
    alone = _pod(tmp_path, "    image: vllm/vllm-openai:v0.11.0\n    command: [/usr/local/bin/run.sh]\n")
    msgs = [
        d.message for d in run_check([str(alone)], Options(allow_hub=False)).diagnostics if d.rule == "KV503"
    ]
    assert any("runs the script /usr/local/bin/run.sh;" in m for m in msgs), msgs
    assert not any("(/usr/local/bin/run.sh)" in m for m in msgs), msgs
    shell = _pod(
        tmp_path, "    image: vllm/vllm-openai:v0.11.0\n    command: [bash, /usr/local/bin/run.sh, a]\n"
    )
    msgs = [
        d.message for d in run_check([str(shell)], Options(allow_hub=False)).diagnostics if d.rule == "KV503"
    ]
    assert any("runs the script /usr/local/bin/run.sh (bash /usr/local/bin/run.sh a);" in m for m in msgs), (
        msgs
    )


def test_kv403_quotes_the_sglang_option_as_the_manifest_spells_it(tmp_path: Path) -> None:
    """fixtures/collected/zhaotyer__lws_usage__k8s_sglang.yaml writes ``--tensor-parallel-size 16`` (SGLang's alias
    of --tp-size) on an 8-GPU pod: KV403 said "--tp-size 16 needs 16 GPUs"; it quotes the manifest's word."""
    p = _pod(
        tmp_path,
        "    image: lmsysorg/sglang:v0.5.5\n"
        "    command: [python3, -m, sglang.launch_server, --model-path, Qwen/Qwen2.5-7B-Instruct,"
        " --tensor-parallel-size, '16']\n",
        gpus=8,
    )
    kv403 = [
        d.message for d in run_check([str(p)], Options(allow_hub=False)).diagnostics if d.rule == "KV403"
    ]
    assert kv403 and all("--tensor-parallel-size 16" in m and "--tp-size" not in m for m in kv403), kv403
    short = _pod(
        tmp_path,
        "    image: lmsysorg/sglang:v0.5.5\n"
        "    command: [python3, -m, sglang.launch_server, --model-path, Qwen/Qwen2.5-7B-Instruct, --tp-size, '16']\n",
        gpus=8,
    )
    kv403 = [
        d.message for d in run_check([str(short)], Options(allow_hub=False)).diagnostics if d.rule == "KV403"
    ]
    assert kv403 and all("--tp-size 16" in m for m in kv403), kv403


def test_an_option_unknown_to_a_guessed_release_is_a_warning(tmp_path: Path) -> None:
    """The release read from the tag of an image kvlint does not know as vLLM's release image may be the image's
    own version: an option that release lacks is a KV205 warning saying the release is assumed, not an error;
    on vLLM's own image, or with --engine-version, it stays an error."""

    def kv205(image: str, **opts: object) -> list:
        p = _pod(
            tmp_path,
            f'    image: {image}\n    args: [--model, Qwen/Qwen2.5-7B-Instruct, --swap-space, "4"]\n',
        )
        r = run_check([str(p)], Options(allow_hub=False, **opts))  # type: ignore[arg-type]
        return [d for d in r.diagnostics if d.rule == "KV205" and "--swap-space" in d.message]

    (guessed,) = kv205("registry.example.com/ml/vllm-openai-rebuild:v0.28.0")
    assert guessed.severity == "warning", guessed
    assert "the release is assumed: kvlint read 0.28.0 from the tag v0.28.0" in guessed.message
    (pinned,) = kv205("vllm/vllm-openai:v0.28.0")
    assert pinned.severity == "error" and "assumed" not in pinned.message
    (named,) = kv205("registry.example.com/ml/vllm-openai-rebuild:v0.28.0", engine_version="0.28.0")
    assert named.severity == "error"
    # a build whose publisher says its tag is the vLLM release (AIBrix's mirror of vllm/vllm-openai:v0.23.0)
    (published,) = kv205("aibrix-public-release-cn-beijing.cr.volces.com/aibrix/llmd-vllm-openai:v0.28.0")
    assert published.severity == "error" and "assumed" not in published.message, published


def test_a_release_the_image_maker_publishes_is_not_a_guess(tmp_path: Path) -> None:
    """rayproject/ray-llm:2.52.0 (fixtures/collected ray-service.llm-serve.yaml) carries the vLLM its Ray release
    requires (0.11.0, RAY_LLM_VLLM), which refuses --device as every later release does: KV205 stays an error."""
    p = _pod(
        tmp_path,
        "    image: rayproject/ray-llm:2.52.0-py311-cu128\n"
        "    command: [vllm, serve, Qwen/Qwen2.5-7B-Instruct, --device, cuda]\n",
    )
    kv205 = [d for d in run_check([str(p)], Options(allow_hub=False)).diagnostics if d.rule == "KV205"]
    assert kv205 and all(d.severity == "error" and "assumed" not in d.message for d in kv205), kv205


def test_a_script_that_installs_vllm_from_its_source_branch_replaces_the_tags_release(tmp_path: Path) -> None:
    """``pip install git+https://github.com/vllm-project/vllm.git@main`` before ``vllm serve`` on
    vllm/vllm-openai:v0.8.5 runs vLLM's newest code, not 0.8.5: an option newer than 0.8.5 is no KV205 error, and
    KV208 says the release is not known; a release tag (``@v0.11.0``) pins that release."""

    def run(url: str) -> tuple[str | None, list]:
        p = _pod(
            tmp_path,
            "    image: vllm/vllm-openai:v0.8.5\n    command: [/bin/sh, -c]\n    args:\n    - |\n"
            f"      pip install {url}\n"
            "      vllm serve Qwen/Qwen2.5-7B-Instruct --async-scheduling\n",
        )
        r = run_check([str(p)], Options(allow_hub=False))
        (cr,) = r.containers
        return cr.serving.version, [d for d in r.diagnostics if d.rule in ("KV205", "KV208")]

    for url in (
        "git+https://github.com/vllm-project/vllm.git@main",
        "git+https://github.com/vllm-project/vllm.git",
        # a PEP 508 direct reference, with or without blanks around the @, and an editable clone
        "'vllm @ git+https://github.com/vllm-project/vllm.git@main'",
        "vllm@git+https://github.com/vllm-project/vllm.git",
        "--no-deps -e git+https://github.com/vllm-project/vllm.git#egg=vllm",
    ):
        version, found = run(url)
        assert version is None, url
        assert not [d for d in found if d.rule == "KV205"], found
        (kv208,) = [d for d in found if d.rule == "KV208"]
        # the branch head is the newest code, a development version, not the newest release (engines52)
        assert "installs vLLM from its source repository at a branch or commit" in kv208.message, kv208
        assert "newest vLLM release" not in kv208.message and "upgrades" not in kv208.message, kv208
        assert "git+...@vX.Y.Z" in (kv208.fix or ""), kv208
    # pip install -U vllm still upgrades to the newest release
    ((kv208,),) = [[d for d in run("-U vllm")[1] if d.rule == "KV208"]]
    assert (
        "upgrades vLLM without pinning a release" in kv208.message and "newest vLLM release" in kv208.message
    )
    assert run("git+https://github.com/vllm-project/vllm.git@v0.11.0")[0] == "0.11.0"
