"""``--helm-set-file KEY=PATH``, helm's ``--set-file`` for the charts kvlint renders: AI-Hypercomputer/gpu-recipes'
READMEs install their inference chart with ``--set-file serving_config=serving-args.yaml`` (the serving arguments
the chart puts in a ConfigMap). The file's text reaches the rendered objects; each option is one ``--set-file=``
word given to helm with the file's real path; a word helm would split, a path that is no regular file or that leaves
its repository through a symbolic link is refused with a message and exit code 2, never a traceback."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.pipeline import Options, run_check
from kvlint.render import RenderError, load_inputs, render_helm, set_file_args

TREES = Path(__file__).resolve().parents[1] / "fixtures" / "collected" / "trees"
GR_CHART = (
    TREES / "gpu-recipes-inference" / "src" / "helm-charts" / "a3ultra" / "inference-templates" / "deployment"
)
GR_VLLM = (
    TREES / "gpu-recipes-inference" / "inference" / "a3ultra" / "single-host-serving" / "vllm" / "values.yaml"
)
# made up for the test, in the shape of gpu-recipes' serving-args.yaml (one "flag: value" per line)
ARGS = "tensor-parallel-size: 8\nmax-model-len: 32768\n"

needs_helm = pytest.mark.skipif(shutil.which("helm") is None, reason="helm is not installed")


@needs_helm
def test_the_file_text_is_the_value_helm_renders(tmp_path: Path) -> None:
    args = tmp_path / "serving-args.yaml"
    args.write_text(ARGS)
    config = "templates/serving-config-configmap.yaml"
    assert ".Values.serving_config" in (GR_CHART / config).read_text()
    loaded = load_inputs(
        [str(GR_CHART)],
        helm_values=(str(GR_VLLM),),
        helm_set=("workload.image=vllm/vllm-openai:v0.8.5",),
        helm_set_file=(f"serving_config={args}",),
    )
    (cm,) = [d for d in loaded.documents if d.kind == "ConfigMap" and d.name.endswith("-config")]
    assert cm.data["data"]["serving-configuration"].strip() == ARGS.strip()
    without = load_inputs([str(GR_CHART)], helm_values=(str(GR_VLLM),))
    (cm,) = [d for d in without.documents if d.kind == "ConfigMap" and d.name.endswith("-config")]
    assert cm.data["data"]["serving-configuration"].strip() == "config: null"
    # the whole run takes the option too (the Deployment is read; the ConfigMap is not a workload)
    result = run_check(
        [str(GR_CHART)],
        Options(allow_hub=False, helm_values=(str(GR_VLLM),), helm_set_file=(f"serving_config={args}",)),
    )
    assert result.workloads == 1


def _fake_helm(tmp_path: Path) -> tuple[Path, Path]:
    """A ``helm`` on PATH that writes each argument it gets on a line of its own and renders nothing."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "argv.txt"
    helm = bindir / "helm"
    helm.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done > {log}\n')
    helm.chmod(helm.stat().st_mode | stat.S_IEXEC)
    return bindir, log


def test_each_option_is_one_set_file_word_with_the_real_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bindir, log = _fake_helm(tmp_path)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: chart\nversion: 0.1.0\n")
    args = tmp_path / "my args.yaml"
    args.write_text(ARGS)
    monkeypatch.chdir(tmp_path)
    render_helm(str(chart), set_files=("serving_config=my args.yaml",))
    argv = log.read_text().splitlines()
    assert f"--set-file=serving_config={args.resolve()}" in argv
    assert len(argv[argv.index("--") + 1 :]) == 2  # the release and the chart, nothing else


def test_words_helm_would_split_or_read_elsewhere_are_refused(tmp_path: Path) -> None:
    args = tmp_path / "args.yaml"
    args.write_text(ARGS)
    with pytest.raises(RenderError, match="one KEY=PATH pair"):
        set_file_args([f"a={args},b={args}"])
    with pytest.raises(RenderError, match="one KEY=PATH pair"):
        set_file_args([str(args)])
    with pytest.raises(FileNotFoundError, match="no such file"):
        set_file_args([f"a={tmp_path / 'missing.yaml'}"])
    with pytest.raises(RenderError, match="not a regular file"):
        set_file_args([f"a={tmp_path}"])
    with pytest.raises(RenderError, match="larger than the 4 bytes"):
        set_file_args([f"a={args}"], max_bytes=4)
    # "-" is standard input to helm; here it is the file of that name, given by its absolute path
    (tmp_path / "-").write_text(ARGS)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert set_file_args(["a=-"]) == [f"a={(tmp_path / '-').resolve()}"]
    finally:
        os.chdir(cwd)


def test_a_link_out_of_the_repository_is_refused_and_the_target_itself_is_read(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    outside = tmp_path / "secret.txt"
    outside.write_text("token\n")
    (repo / "configs").mkdir()
    (repo / "configs" / "args.yaml").symlink_to(outside)
    (repo / "configs" / "inside.yaml").write_text(ARGS)
    (repo / "configs" / "alias.yaml").symlink_to(repo / "configs" / "inside.yaml")
    with pytest.raises(RenderError, match="leads out of the repository"):
        set_file_args([f"serving_config={repo / 'configs' / 'args.yaml'}"])
    assert set_file_args([f"serving_config={repo / 'configs' / 'alias.yaml'}"]) == [
        f"serving_config={(repo / 'configs' / 'inside.yaml').resolve()}"
    ]
    assert set_file_args([f"serving_config={outside}"]) == [f"serving_config={outside.resolve()}"]


def test_the_cli_says_what_is_wrong_with_exit_code_2(tmp_path: Path) -> None:
    args = tmp_path / "args.yaml"
    args.write_text(ARGS)
    runner = CliRunner()
    out = runner.invoke(
        main, ["check", "--offline", str(tmp_path), "--helm-set-file", f"serving_config={args}"]
    )
    assert out.exit_code == 2 and "apply to chart directories" in out.output
    assert out.exception is None or isinstance(out.exception, SystemExit)
    out = runner.invoke(main, ["check", "--offline", str(GR_CHART), "--helm-set-file", f"a={args},b=c"])
    assert out.exit_code == 2 and "one KEY=PATH pair" in out.output
    assert "Traceback" not in out.output
