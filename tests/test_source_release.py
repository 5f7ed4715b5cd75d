"""The engine release a script builds from the engine's source at a release tag. HabanaAI's Gaudi tutorial
(fixtures/collected/HabanaAI__Gaudi-tutorials__k8s__vllm-8b-cache-1-21.yaml) runs ``git clone -b
v0.7.2+Gaudi-1.21.0 https://github.com/HabanaAI/vllm-fork.git``, ``cd vllm-fork``, ``python3 setup.py install``,
then ``vllm serve``: the fork's setup.py (``get_vllm_version``, setuptools-scm) versions that build 0.7.2+gaudi...,
but kvlint read the command with vLLM 0.34.0 and said so (KV208). ``pip install git+...vllm-fork.git@TAG`` and
``vllm @ git+https://github.com/vllm-project/vllm@v0.8.5`` pinned nothing either."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines.requirements import read_requirement
from kvlint.pipeline import Options, run_check

HABANA = (
    Path(__file__).resolve().parents[1]
    / "fixtures/collected/HabanaAI__Gaudi-tutorials__k8s__vllm-8b-cache-1-21.yaml"
)
FORK = "https://github.com/HabanaAI/vllm-fork.git"


@pytest.mark.parametrize(
    ("req", "pin"),
    [
        (f"git+{FORK}@v0.7.2+Gaudi-1.21.0", ("vllm", "0.7.2")),
        (f"git+{FORK}@v0.8.5.post1+Gaudi-1.21.3#egg=vllm", ("vllm", "0.8.5.post1")),
        ("vllm @ git+https://github.com/vllm-project/vllm@v0.8.5", ("vllm", "0.8.5")),
        ("git+https://github.com/sgl-project/sglang.git@v0.4.6#subdirectory=python", ("sglang", "0.4.6")),
        (f"git+{FORK}@habana_main", ("vllm", None)),  # a branch: no release
        ("vllm @ git+https://github.com/vllm-project/vllm", ("vllm", None)),
        ("vllm @ git+https://github.com/someone/vllm@v0.8.5", ("vllm", None)),  # not a source kvlint knows
        ("git+https://github.com/someone/vllm@v0.8.5", None),
    ],
)
def test_vcs_requirement_of_an_engine_source(req: str, pin: tuple[str, str | None] | None) -> None:
    got = read_requirement(req)
    assert ((got.project, got.release) if got is not None else None) == pin


def _version(tmp_path: Path, script: str, image: str = "vllm/vllm-openai:v0.10.2") -> str | None:
    m = tmp_path / "p.yaml"
    body = "".join(f"      {line}\n" for line in script.splitlines())
    m.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - name: vllm\n"
        f"    image: {image}\n    command: [/bin/bash, -c]\n    args:\n    - |\n{body}"
        "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    )
    res = run_check([str(m)], Options(allow_hub=False))
    (c,) = [c for c in res.containers if c.serving is not None]
    return c.serving.version


SERVE = "vllm serve Qwen/Qwen2.5-0.5B-Instruct"


@pytest.mark.parametrize(
    ("script", "version"),
    [
        (
            f"git clone -b v0.7.2+Gaudi-1.21.0 {FORK}\ncd vllm-fork\npython3 setup.py install\n{SERVE}",
            "0.7.2",
        ),
        (
            f"git clone --depth 1 --branch=v0.8.5 https://github.com/vllm-project/vllm\ncd vllm\npip install -e .\n{SERVE}",
            "0.8.5",
        ),
        (
            f"git clone https://github.com/vllm-project/vllm && cd vllm && git checkout v0.8.5 && pip install .\n{SERVE}",
            "0.8.5",
        ),
        (f"pip install git+{FORK}@v0.7.2+Gaudi-1.21.0\n{SERVE}", "0.7.2"),
        # SGLang's Ascend NPU guide (docs/platforms/ascend_npu.md): its clone, then an editable install of python/
        (
            "git clone -b v0.5.3rc2 https://github.com/sgl-project/sglang.git\ncd sglang\n"
            "pip install -e python[srt_npu]\npython3 -m sglang.launch_server --model-path Qwen/Qwen2.5-0.5B-Instruct",
            "0.5.3rc2",
        ),
        # a branch, or a clone that is not installed: the image's release
        (f"git clone -b habana_main {FORK}\ncd vllm-fork\npip install -e .\n{SERVE}", "0.10.2"),
        (
            f"git clone -b v0.7.2+Gaudi-1.21.0 {FORK}\ncd vllm-fork\npip install -r requirements-hpu.txt\n{SERVE}",
            "0.10.2",
        ),
        # a later git command that moves the clone off the tag: the tree is no release's, the image's release holds
        (
            f"git clone -b v0.7.2+Gaudi-1.21.0 {FORK}\ncd vllm-fork\ngit fetch origin\n"
            f"git reset --hard origin/habana_main\npip install -e .\n{SERVE}",
            "0.10.2",
        ),
        (
            "git clone https://github.com/vllm-project/vllm\ncd vllm\ngit checkout v0.8.5\ngit pull origin main\n"
            f"pip install -e .\n{SERVE}",
            "0.10.2",
        ),
        (
            f"git clone -b v0.8.5 https://github.com/vllm-project/vllm\ncd vllm\ngit checkout -b dev main\npip install .\n{SERVE}",
            "0.10.2",
        ),
        (
            f"git clone -b v0.8.5 https://github.com/vllm-project/vllm\ncd vllm\ngit switch -c mine origin/main\npip install .\n{SERVE}",
            "0.10.2",
        ),
        # ... and ones that leave it there, or move it to a tag
        (
            f"git clone https://github.com/vllm-project/vllm\ncd vllm\ngit checkout -b mine v0.8.5\npip install .\n{SERVE}",
            "0.8.5",
        ),
        (
            f"git clone -b v0.8.5 https://github.com/vllm-project/vllm\ncd vllm\ngit checkout -- setup.py\npip install .\n{SERVE}",
            "0.8.5",
        ),
        # the install names the clone's directory, or another one
        (
            f"git clone -b v0.8.5 https://github.com/vllm-project/vllm /opt/vllm\npip install -e /opt/vllm\n{SERVE}",
            "0.8.5",
        ),
        (
            f"git clone -b v0.8.5 https://github.com/vllm-project/vllm /opt/vllm\npip install /workspace/myplugin\n{SERVE}",
            "0.10.2",
        ),
        # the install runs in the directory of the last `cd` before it (bash's working directory): another
        # project's clone there, a `cd` to the engine's clone, or one whose target is not known (no release)
        (
            "git clone https://github.com/acme/tool.git /opt/tool && git clone -b v0.5.0 "
            "https://github.com/vllm-project/vllm.git /opt/vllm-bench && cd /opt/tool && pip install . && "
            f"{SERVE}",
            "0.10.2",
        ),
        (
            "git clone -b v0.5.0 https://github.com/vllm-project/vllm.git /opt/vllm-bench && cd /workspace && "
            f"pip install -e .\n{SERVE}",
            "0.10.2",
        ),
        (
            'git clone -b v0.5.0 https://github.com/vllm-project/vllm.git /opt/vllm-bench && cd "$SRC" && '
            f"pip install -e .\n{SERVE}",
            "0.10.2",
        ),
        (
            f"git clone -b v0.8.5 https://github.com/vllm-project/vllm.git /opt/src/vllm\ncd /opt/src/vllm/\npip install -e .\n{SERVE}",
            "0.8.5",
        ),
        (
            f"git clone -b v0.8.5 https://github.com/vllm-project/vllm.git /opt/vllm\ncd /opt\npip install ./vllm\n{SERVE}",
            "0.8.5",
        ),
        (
            f"git clone -b v0.8.5 https://github.com/vllm-project/vllm.git\ncd vllm\ncd ..\npip install .\n{SERVE}",
            "0.10.2",
        ),
        # no `cd`: the install runs where the clone ran, the clone is its ./DIR
        (
            f"git clone -b v0.8.5 https://github.com/vllm-project/vllm.git\npip install -e .\n{SERVE}",
            "0.10.2",
        ),
        (
            f"git clone -b v0.8.5 https://github.com/vllm-project/vllm.git\npip install ./vllm\n{SERVE}",
            "0.8.5",
        ),
        (
            f"git clone -b v0.8.5 https://github.com/vllm-project/vllm.git src\npip install -e src\n{SERVE}",
            "0.8.5",
        ),
        (
            f"git clone -b v0.8.5 https://github.com/vllm-project/vllm.git .\npip install -e .\n{SERVE}",
            "0.8.5",
        ),
        (
            f"git clone -b v0.8.5 https://github.com/vllm-project/vllm.git /opt/vllm\npip install .\n{SERVE}",
            "0.10.2",
        ),
        # another project's clone built before the engine starts
        (
            f"git clone -b v1.0.0 https://github.com/LMCache/LMCache\ncd LMCache\npip install -e .\n{SERVE}",
            "0.10.2",
        ),
    ],
)
def test_script_building_the_engine_from_a_release_tag(tmp_path: Path, script: str, version: str) -> None:
    assert _version(tmp_path, script) == version


def test_habana_tutorial_is_read_with_the_forks_release() -> None:
    res = run_check([str(HABANA)], Options(allow_hub=False))
    (c,) = [c for c in res.containers if c.serving is not None]
    assert c.serving.version == "0.7.2"
    assert "git clone -b v0.7.2+Gaudi-1.21.0" in c.serving.installed_by
    rules = [d.rule for d in res.diagnostics]
    assert "KV208" not in rules, rules
    (kv205,) = [d for d in res.diagnostics if d.rule == "KV205"]
    assert "vLLM 0.7.2 option --weights-load-device" in kv205.message and kv205.severity == "warning"
