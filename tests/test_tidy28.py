"""Mends of stop 28 (tidy28): checks made once and in one place, behaviour kept."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path

import pytest

import kvlint.render as render
from kvlint.pipeline import Options
from kvlint.stream import stream_check

ARGS = "tensor-parallel-size: 8\n"


def _fake_helm(tmp_path: Path) -> tuple[Path, Path]:
    """A ``helm`` on PATH that appends each argument it gets, a line each, to a log, and renders nothing."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "argv.txt"
    helm = bindir / "helm"
    helm.write_text(f'#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done >> {log}\n')
    helm.chmod(helm.stat().st_mode | stat.S_IEXEC)
    return bindir, log


def _chart(directory: Path) -> Path:
    (directory / "templates").mkdir(parents=True)
    (directory / "Chart.yaml").write_text(f"apiVersion: v2\nname: {directory.name}\nversion: 0.1.0\n")
    return directory


@pytest.mark.parametrize("streaming", [False, True])
def test_set_files_are_checked_once_per_run_whatever_the_charts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, streaming: bool
) -> None:
    """``--helm-set-file`` was checked before anything was read and again for each chart rendered (three
    checks for two charts); now once, and each chart's helm gets the words of that one check."""
    bindir, log = _fake_helm(tmp_path)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    one, two = _chart(tmp_path / "one"), _chart(tmp_path / "two")
    args = tmp_path / "args.yaml"
    args.write_text(ARGS)
    real = render.set_file_args
    calls: list[Sequence[str]] = []

    def counted(set_files: Sequence[str], max_bytes: int = render.DEFAULT_MAX_FILE_BYTES):  # type: ignore[no-untyped-def]
        calls.append(tuple(set_files))
        return real(set_files, max_bytes)

    monkeypatch.setattr(render, "set_file_args", counted)
    words = (f"serving_config={args}",)
    if streaming:
        stream_check([str(one), str(two)], Options(allow_hub=False, helm_set_file=words))
    else:
        render.load_inputs([str(one), str(two)], helm_set_file=words)
    assert calls == [words]
    argv = log.read_text().splitlines()
    assert argv.count(f"--set-file=serving_config={args.resolve()}") == 2


def test_render_helm_checks_words_it_is_given_unchecked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A caller of :func:`render_helm` that has not checked its words still gets them checked."""
    bindir, log = _fake_helm(tmp_path)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    chart = _chart(tmp_path / "chart")
    with pytest.raises(render.RenderError, match="one KEY=PATH pair"):
        render.render_helm(str(chart), set_files=("a=x,b=y",))
    assert not log.exists()  # refused before helm ran


def test_one_kubernetes_quantity_pattern() -> None:
    """The Kubernetes quantity grammar (``Ki``..``Ei``, an exponent, ``n``..``E``) is written once
    (:mod:`kvlint.k8s_quantity`); three modules wrote their own (HAMi's memory, the Dynamo operator's /dev/shm
    size, the OpenShift AI hardware profile's count). The byte quantities users type are another grammar."""
    root = Path(render.__file__).parent
    writers = sorted(
        str(p.relative_to(root))
        for p in root.rglob("*.py")
        if "Ki|Mi|Gi|Ti|Pi|Ei" in p.read_text(encoding="utf-8")
    )
    assert writers == ["k8s_quantity.py"]


@pytest.mark.parametrize(
    "text,whole,zero,written",
    [
        ("16k", 16000, False, True),
        ("1Ki", 1024, False, True),
        ("2e3", 2000, False, True),
        ("2000m", 2, False, True),
        ("1500m", None, False, True),  # not a whole number
        ("0Gi", 0, True, True),
        ("0e5", 0, True, True),
        ("-0.0", 0, True, True),
        ("1e12345", None, False, True),  # an exponent of five digits: not read as a whole int64
        ("1 Gi", None, False, False),  # no blanks in a quantity
        ("1GiB", None, False, False),
        ("Gi", None, False, False),
    ],
)
def test_the_quantity_readers_read_as_before(text: str, whole: int | None, zero: bool, written: bool) -> None:
    from kvlint.accelerators.sharing import _as_int64
    from kvlint.workloads.hardwareprofile import _quantity
    from kvlint.workloads.operators import _zero_quantity

    assert _as_int64(text) == whole
    assert _zero_quantity(text) is zero
    assert (_quantity(text) == text) is written


# --- one realpath-inside test (kvlint.paths.real_path_inside), and a link out through each reader using it ---
# Each tree below has a sibling whose name starts with the tree's own (``chart`` and ``chart-out``): a test of
# the real path by string prefix alone would take the sibling's files for the tree's.


def test_real_path_inside_by_whole_components(tmp_path: Path) -> None:
    from kvlint.paths import real_path_inside

    tree, sibling = tmp_path / "tree", tmp_path / "tree-out"
    (tree / "d").mkdir(parents=True)
    sibling.mkdir()
    (sibling / "x.yaml").write_text("a: 1\n")
    (tree / "out.yaml").symlink_to(sibling / "x.yaml")
    (tree / "self").symlink_to(tree)
    (tree / "in.yaml").symlink_to(tree / "d")
    assert real_path_inside(tree / "d", tree) and real_path_inside(tree / "in.yaml", tree, below=True)
    assert not real_path_inside(tree / "out.yaml", tree)
    assert not real_path_inside(sibling, tree)
    assert real_path_inside(tree / "self", tree) and not real_path_inside(tree / "self", tree, below=True)
    assert real_path_inside(sibling / "x.yaml", os.sep)  # everything is in /
    real = os.path.realpath(tree)
    assert real_path_inside(tree / "d", real, resolved=True)
    with pytest.raises(ValueError):
        real_path_inside("a\0b", tree)


def _tree_and_sibling(tmp_path: Path, name: str) -> tuple[Path, Path]:
    tree, sibling = tmp_path / name, tmp_path / f"{name}-out"
    tree.mkdir(parents=True)
    sibling.mkdir()
    return tree, sibling


def test_a_walk_does_not_read_a_link_out_of_the_directory(tmp_path: Path) -> None:
    from kvlint.load import load_paths

    tree, sibling = _tree_and_sibling(tmp_path, "manifests")
    (sibling / "secret.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: secret}\n")
    (tree / "leak.yaml").symlink_to(sibling / "secret.yaml")
    (tree / "own.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: own}\n")
    loaded = load_paths([str(tree)])
    assert [d.name for d in loaded.documents] == ["own"]
    (note,) = [f for f in loaded.findings if f.loc is not None and f.loc.file.endswith("leak.yaml")]
    assert note.rule == "KV001"


def test_a_chart_with_a_link_out_is_not_rendered_and_its_schema_link_not_read(tmp_path: Path) -> None:
    chart, sibling = _tree_and_sibling(tmp_path, "chart")
    _chart(chart)
    (sibling / "leak.txt").write_text("token\n")
    (sibling / "values.schema.json").write_text('{"$ref": "https://example.com/s.json"}')
    (chart / "leak.txt").symlink_to(sibling / "leak.txt")
    (chart / "values.schema.json").symlink_to(sibling / "values.schema.json")
    findings = render.chart_escapes(str(chart))
    assert sorted(os.path.basename(f.loc.file) for f in findings if f.loc is not None) == [
        "leak.txt",
        "values.schema.json",
    ]
    assert all("outside the chart" in f.message for f in findings)  # the schema's $ref is not read


def test_a_set_file_link_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    repo, sibling = _tree_and_sibling(tmp_path, "repo")
    (repo / ".git").mkdir()
    (sibling / "args.yaml").write_text(ARGS)
    (repo / "args.yaml").symlink_to(sibling / "args.yaml")
    with pytest.raises(render.RenderError, match="leads out of the repository"):
        render.set_file_args([f"serving_config={repo / 'args.yaml'}"])


def test_a_kustomization_patch_link_out_is_not_read(tmp_path: Path) -> None:
    from kvlint.origins import json6902_patches

    kdir, sibling = _tree_and_sibling(tmp_path, "overlay")
    ops = "- op: replace\n  path: /spec/replicas\n  value: 2\n"
    (sibling / "patch.yaml").write_text(ops)
    (kdir / "patch.yaml").symlink_to(sibling / "patch.yaml")
    (kdir / "own.yaml").write_text(ops)
    entry = "  - path: {}\n    target: {{kind: Deployment, name: {}}}\n"
    (kdir / "kustomization.yaml").write_text(
        "patches:\n" + entry.format("patch.yaml", "leaked") + entry.format("own.yaml", "own")
    )
    assert [name for _, name, *_ in json6902_patches(str(kdir))] == ["own"]


def test_a_discovered_configuration_model_dir_linked_out_is_refused(tmp_path: Path) -> None:
    from kvlint.config import ConfigError, load_config

    repo, sibling = _tree_and_sibling(tmp_path, "repo")
    (repo / ".git").mkdir()
    (repo / "models").symlink_to(sibling)
    (repo / ".kvlint.yaml").write_text("model_dirs: [models]\n")
    with pytest.raises(ConfigError, match="is outside the repository"):
        load_config(str(repo / ".kvlint.yaml"), discovered=True)


def test_a_checkout_path_through_a_link_is_refused(tmp_path: Path) -> None:
    from kvlint.workloads.gitops_local import contained

    repo, sibling = _tree_and_sibling(tmp_path, "checkout")
    (sibling / "values.yaml").write_text("a: 1\n")
    (repo / "values.yaml").symlink_to(sibling / "values.yaml")
    (repo / "own.yaml").write_text("a: 1\n")
    assert contained(str(repo), "values.yaml") == (None, "a path through a symbolic link")
    assert contained(str(repo), "own.yaml") == (os.path.join(str(repo), "own.yaml"), None)


def test_a_chart_whose_templates_link_out_of_the_checkout_is_not_read(tmp_path: Path) -> None:
    import kvlint.load as load

    repo, sibling = _tree_and_sibling(tmp_path, "repo")
    (repo / ".git").mkdir()
    templates = _chart(sibling / "chart") / "templates"
    (templates / "deployment.yaml").write_text("{{ .Values.workload.image }}\n")
    chart = repo / "charts" / "serving"
    chart.mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: serving\nversion: 0.1.0\n")
    (chart / "templates").symlink_to(templates)
    values = repo / "envs" / "values.yaml"
    values.parent.mkdir()
    values.write_text("workload:\n  image:\n")
    load._charts_under.cache_clear()
    try:
        assert load.repository_chart(str(values)) is None
        (chart / "templates").unlink()
        (chart / "templates").mkdir()
        (chart / "templates" / "deployment.yaml").write_text("{{ .Values.workload.image }}\n")
        load._charts_under.cache_clear()
        assert load.repository_chart(str(values)) == str(chart)
    finally:
        load._charts_under.cache_clear()


def test_a_pulled_model_file_linked_out_is_not_inside(tmp_path: Path) -> None:
    from kvlint.models.pulled import inside

    entry, sibling = _tree_and_sibling(tmp_path, "model")
    (sibling / "config.json").write_text("{}")
    (entry / "config.json").symlink_to(sibling / "config.json")
    assert not inside(entry / "config.json", entry, below=True)
    assert inside(entry, entry) and not inside(entry, entry, below=True)
    assert not inside(Path("a\0b"), entry)  # a NUL: not resolvable, so not inside


# --- the pool's result pipe lock (kvlint.stream): events only, never an amount of time ---


def _hold_lock(lock, held, done, leave_held: bool) -> None:  # type: ignore[no-untyped-def]
    """In a child process: take ``lock``, say so (``held``), then either wait for ``done`` and release it, or
    end holding it (as a worker killed after sending its last result)."""
    lock.acquire()
    held.set()
    if leave_held:
        os._exit(0)
    done.wait()
    lock.release()


def test_a_result_between_two_checks_keeps_a_live_worker_lock() -> None:
    """``ResultLockProbe`` frees the result lock only when it was taken at two checks with no result received
    between them: a live worker's hold seen at one check, and one seen after results came, are not one hold
    (the flag was kept across results, and the second hold was released under the live worker)."""
    import multiprocessing

    from kvlint.stream import ResultLockProbe

    ctx = multiprocessing.get_context("fork")
    lock, held, done = ctx.Lock(), ctx.Event(), ctx.Event()
    worker = ctx.Process(target=_hold_lock, args=(lock, held, done, False))
    worker.start()
    try:
        held.wait()
        probe = ResultLockProbe(lock)
        assert probe.check(3) is False  # taken: remembered
        assert probe.check(4) is False  # taken again, but a result came between: not one hold
        assert not lock.acquire(False), "the live worker's lock was released under it"
    finally:
        done.set()
        worker.join()
    assert worker.exitcode == 0  # its own release did not fail
    # a hold that outlives the worker: taken at two checks with no result between, it is freed
    held.clear()
    ended = ctx.Process(target=_hold_lock, args=(lock, held, done, True))
    ended.start()
    ended.join()
    assert held.is_set()
    probe = ResultLockProbe(lock)
    assert probe.check(6) is False
    assert probe.check(6) is True
    assert lock.acquire(False)
    lock.release()


_END_POOL_SCRIPT = """
import os, sys, threading
from kvlint import stream

failures = []
threading.excepthook = lambda args: failures.append(repr(args.exc_value))

def hold_result_lock(flag):
    # in a worker: take the result pipe's write lock, say so, and end holding it (a worker killed after its
    # last result); the pool's worker() frame holds the queue
    frame = sys._getframe()
    while 'outqueue' not in frame.f_locals:
        frame = frame.f_back
    frame.f_locals['outqueue']._wlock.acquire()
    open(flag, 'w').close()
    os._exit(0)

case, flag = sys.argv[1:3]
pool = stream._pool(2)
lock = pool._outqueue._wlock
if case == 'dead':
    pool.apply_async(hold_result_lock, (flag,))
    while not os.path.exists(flag):  # the event: a worker holds the lock and ends
        threading.Event().wait(0.01)
else:  # a thread of this process holds it (the pool's task thread did, writing its last message)
    lock.acquire()
stream._end_pool(pool)
if case == 'thread':
    print('still held by the thread' if not lock.acquire(False) else 'released under the thread')
    lock.release()  # the thread's own release
print('ended', failures)
"""


@pytest.mark.parametrize("case", ["dead", "thread"])
def test_ending_the_pool_leaves_the_result_lock_to_its_holder(tmp_path: Path, case: str) -> None:
    """``_end_pool`` ends a pool whose result pipe lock is held by a worker that ended holding it (no wait
    for the lock, which is never released), and leaves a hold of a thread of this process to that thread:
    it no longer frees the lock after a wait of 1 s whoever holds it (the pool's task thread, on a loaded
    machine), nor takes it for the pool's last messages."""
    import subprocess
    import sys

    flag = tmp_path / "held"
    env = {**os.environ, "PYTHONPATH": str(Path(render.__file__).parents[1])}
    proc = subprocess.run(
        [sys.executable, "-c", _END_POOL_SCRIPT, case, str(flag)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,  # a last-resort guard against a hang (as tests/test_stream.py's), not a bound on the time
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[-1] == "ended []", proc.stderr
    if case == "thread":
        assert lines[0] == "still held by the thread"
    else:
        assert flag.exists()


def test_models_pull_check_escapes_a_recorded_file_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``kvlint models pull --check`` quotes the file names an entry's provenance.json records; a NUL (or a
    terminal escape) in one was printed raw. It is escaped as reports escape file names
    (:func:`kvlint.report.escape.printable`); the JSON report keeps the name (JSON escapes it)."""
    import hashlib
    import json

    from click.testing import CliRunner

    from kvlint.cli import main
    from kvlint.models import pulled

    entry = tmp_path / ".kvlint" / "models" / "acme--x"
    entry.mkdir(parents=True)
    config = b'{"architectures": ["LlamaForCausalLM"]}'
    (entry / "config.json").write_bytes(config)
    files = {"config.json": {"sha256": hashlib.sha256(config).hexdigest()}}
    files["a\x00b\x1b[31m.json"] = {"sha256": "0" * 64}
    provenance = {"format": pulled.FORMAT, "id": "acme/x", "commit": "0" * 40, "files": files}
    (entry / pulled.PROVENANCE).write_text(json.dumps(provenance))
    monkeypatch.chdir(tmp_path)
    pulled.clear()
    try:
        text = CliRunner().invoke(main, ["models", "pull", "--check"])
        as_json = CliRunner().invoke(main, ["models", "pull", "--check", "--format", "json"])
    finally:
        pulled.clear()
    assert text.exit_code == 1, text.output
    assert "\x00" not in text.output and "\x1b" not in text.output
    assert "a\\x00b\\x1b[31m.json is not a file of the entry" in text.output
    (model,) = json.loads(as_json.stdout)["models"]
    assert model["message"] == "a\x00b\x1b[31m.json is not a file of the entry"
