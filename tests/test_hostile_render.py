"""Hostile charts and kustomizations on the CLI: what ``kvlint check CHART|KUSTOMIZATION`` runs, reads and fetches.

A chart or kustomization in a pull request is written by whoever opened it; kvlint renders it (``helm
template``, ``kubectl kustomize``) on the CI runner. Nothing in it may make kvlint read files outside its tree,
fetch anything, run anything, hang or exhaust memory, or end in a traceback.
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from kvlint.cli import main

ROOT = Path(__file__).resolve().parent.parent
HAS_KUSTOMIZE = shutil.which("kubectl") is not None or shutil.which("kustomize") is not None


def _run_isolated(code: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter with this tree's kvlint, memory capped at 1 GiB (a read of ``/dev/zero``
    ends in MemoryError there, not in the test runner)."""
    prelude = "import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(
        [sys.executable, "-c", prelude + code], capture_output=True, text=True, timeout=timeout, env=env
    )


# ------------------------------------------------------------------------------------------ kustomize: origins


def test_kustomization_fields_of_the_wrong_type_are_not_a_traceback(tmp_path: Path) -> None:
    """The JSON 6902 source pass (:func:`kvlint.origins.json6902_patches`) runs on every kustomization named,
    built or not: ``patchesJson6902: 7`` raised TypeError out of ``kvlint check`` (a traceback, exit 1)."""
    from kvlint.origins import json6902_patches

    k = tmp_path / "k"
    k.mkdir()
    bodies = [
        "resources: 5\npatchesJson6902: 7\n",
        "patches: {a: 1}\nnamePrefix: [x]\nresources: [1, {a: b}]\n",
        "patches:\n- target: {kind: [D], name: x}\n  path: [a]\n- target: 3\n- 4\n",
    ]
    for body in bodies:
        (k / "kustomization.yaml").write_text(body)
        assert json6902_patches(str(k)) == []


@pytest.mark.skipif(not HAS_KUSTOMIZE, reason="no kustomize")
def test_kustomization_of_the_wrong_types_is_a_finding_in_every_format(tmp_path: Path) -> None:
    k = tmp_path / "k"
    k.mkdir()
    (k / "kustomization.yaml").write_text("resources: 5\npatchesJson6902: 7\n")
    for fmt in ("text", "sarif", "json"):
        res = CliRunner().invoke(main, ["check", "--offline", "--format", fmt, str(k)])
        assert res.exception is None or isinstance(res.exception, SystemExit), res.output
        assert res.exit_code == 1 and "KV001" in res.output, res.output


@pytest.mark.parametrize("target", ["/dev/zero", "FIFO"])
def test_a_patch_path_that_never_ends_is_not_read(tmp_path: Path, target: str) -> None:
    """``path: /dev/zero`` in a kustomization was read whole (memory until the process was killed); a named
    pipe blocked the run for ever. Only regular files inside the kustomization's directory are read."""
    k = tmp_path / "k"
    k.mkdir()
    if target == "FIFO":
        os.mkfifo(k / "fifo.yaml")
        target = "fifo.yaml"
    (k / "kustomization.yaml").write_text(
        f"patchesJson6902:\n- target: {{kind: Deployment, name: x}}\n  path: {target}\n"
    )
    proc = _run_isolated(
        f"from kvlint.origins import json6902_patches; print(json6902_patches({str(k)!r}))", 30
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stderr


def test_a_patch_file_outside_the_kustomization_is_not_read(tmp_path: Path) -> None:
    """kustomize refuses a patch file outside the kustomization's directory (its default load restrictor):
    kvlint does not read one either, through ``..`` or a symbolic link."""
    from kvlint.origins import json6902_patches

    ops = "- op: add\n  path: /spec/replicas\n  value: 2\n"
    (tmp_path / "outside.yaml").write_text(ops)
    k = tmp_path / "k"
    k.mkdir()
    (k / "inside.yaml").write_text(ops)
    os.symlink(tmp_path / "outside.yaml", k / "link.yaml")
    entries = "".join(
        f"- target: {{kind: Deployment, name: {n}}}\n  path: {p}\n"
        for n, p in (
            ("a", "../outside.yaml"),
            ("b", "link.yaml"),
            ("c", str(tmp_path / "outside.yaml")),
            ("d", "inside.yaml"),
        )
    )
    (k / "kustomization.yaml").write_text("patchesJson6902:\n" + entries)
    assert [p[1] for p in json6902_patches(str(k))] == ["d"]


def test_a_deep_chain_of_bases_is_not_a_recursion_error(tmp_path: Path) -> None:
    from kvlint.origins import json6902_patches

    # A recursive walk would take at least one frame per level: under a recursion limit 100 frames above this
    # one, a chain of 250 bases proves the same as a chain past the default limit (1000), at a fraction of the
    # cost (every os call on a path N levels deep walks N components, so the chain costs N squared).
    d = tmp_path / "k"
    depth = 250
    cur = d
    for i in range(depth):
        cur.mkdir()
        last = i == depth - 1
        (cur / "kustomization.yaml").write_text(
            "patchesJson6902:\n- target: {kind: Deployment, name: x}\n  patch: |\n    - op: add\n      path: /a\n      value: 1\n"
            if last
            else "resources: [s]\n"
        )
        cur = cur / "s"
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(len(inspect.stack(0)) + 100)
        try:
            patches = json6902_patches(str(d))
        finally:
            sys.setrecursionlimit(limit)
        assert [p[1] for p in patches] == ["x"]
    finally:  # bottom up: pytest's own clean-up (shutil.rmtree) recurses once per level
        dirs = [d]
        while (dirs[-1] / "s").is_dir():
            dirs.append(dirs[-1] / "s")
        for sub in reversed(dirs):
            (sub / "kustomization.yaml").unlink()
            sub.rmdir()


# ------------------------------------------------------------------------------------------ kustomize: remote


def _kustomization(tmp_path: Path, body: str, name: str = "k") -> Path:
    k = tmp_path / name
    k.mkdir(parents=True, exist_ok=True)
    (k / "kustomization.yaml").write_text(body)
    return k


_GIT_LEAK_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.5
        command: [vllm, serve, $(M)]
        env:
        - name: M
          valueFrom: {configMapKeyRef: {name: leak, key: m}}
        resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize(
    ("files", "link"),
    [
        ("m=.git/config", None),
        ("m=./.GIT/config", None),
        ("m=leak", ".git/config"),
        ("m=sub/leak", "../.git"),
    ],
)
def test_a_kustomization_cannot_read_git_metadata(tmp_path: Path, files: str, link: str | None) -> None:
    """A kustomization at a repository's root generating a ConfigMap from ``.git/config`` (or a link to it),
    read by the engine's env as its model: KV502 printed a CI checkout's credentials. Such a path is refused
    like a remote reference, before kustomize runs (no kustomize needed to show it)."""
    from kvlint.render import remote_references

    k = _kustomization(
        tmp_path,
        "resources: [d.yaml]\nconfigMapGenerator:\n- name: leak\n  files: [" + files + "]\n"
        "generatorOptions: {disableNameSuffixHash: true}\n",
    )
    _git_config(k)
    (k / "d.yaml").write_text(_GIT_LEAK_DEPLOYMENT)
    if link is not None:
        target = k / files.split("=", 1)[1]
        target.parent.mkdir(exist_ok=True)
        os.symlink(link, target)
    (finding,) = remote_references(str(k))
    assert finding.loc is not None and finding.loc.line == 4 and "git's metadata" in finding.message
    if HAS_KUSTOMIZE:
        res = CliRunner().invoke(main, ["check", "--offline", str(k)])
        assert "bm90X2Zvcl90aGVfbG9n" not in res.output and "KV001" in res.output, res.output


@pytest.mark.parametrize(
    ("body", "line"),
    [
        ("resources:\n- deploy.yaml\n- https://github.com/org/repo//base?ref=v1\n", 3),
        ("resources:\n- github.com/org/repo/base?ref=v1\n", 2),
        ("bases:\n- git@github.com:org/repo.git//base\n", 2),
        ("components:\n- git::https://example.com/repo.git\n", 2),
        ("resources:\n- ssh://git@example.com/org/repo\n", 2),
        ("resources:\n- gh:org/repo/base\n", 2),
        ("resources:\n- file:///srv/repo\n", 2),
        ("resources:\n- https://dev.azure.com/org/proj/_git/repo\n", 2),
        ("patches:\n- target: {kind: Deployment}\n  path: http://example.com/p.yaml\n", 3),
        ("patchesStrategicMerge:\n- https://example.com/p.yaml\n", 2),
        ("configMapGenerator:\n- name: g\n  files:\n  - cfg=https://example.com/x.json\n", 4),
        ("secretGenerator:\n- name: g\n  env: https://example.com/.env\n", 3),
        ("generators:\n- https://example.com/gen.yaml\n", 2),
        ("openapi:\n  path: https://example.com/schema.json\n", 2),
    ],
)
def test_remote_references_are_found_at_their_line(tmp_path: Path, body: str, line: int) -> None:
    from kvlint.render import remote_references

    k = _kustomization(tmp_path, body)
    (found,) = remote_references(str(k))
    assert found.rule == "KV001" and found.loc is not None
    assert (found.loc.file, found.loc.line) == (str(k / "kustomization.yaml"), line)


def test_a_remote_reference_in_a_local_base_is_found(tmp_path: Path) -> None:
    from kvlint.render import remote_references

    (tmp_path / ".git").mkdir()  # a repository: ../base is inside it
    _kustomization(tmp_path, "resources:\n- https://example.com/x.yaml\n", "base")
    k = _kustomization(tmp_path, "resources:\n- ../base\n", "overlay")
    (found,) = remote_references(str(k))
    # (at the base's path normalised: not overlay/../base)
    assert found.loc is not None and found.loc.file == str(tmp_path / "base" / "kustomization.yaml")


def test_local_paths_and_values_that_hold_urls_are_not_remote(tmp_path: Path) -> None:
    from kvlint.render import remote_references

    (tmp_path / ".git").mkdir()  # a repository: ../base is inside it
    _kustomization(tmp_path, "resources: [deploy.yaml]\n", "base")
    k = _kustomization(
        tmp_path,
        "resources:\n- ../base\n- deploy.yaml\n- a@b.yaml\n"
        "commonAnnotations: {docs: 'https://example.com/docs'}\n"
        "images:\n- name: vllm\n  newName: ghcr.io/org/vllm\n"
        "configMapGenerator:\n- name: g\n  literals: [URL=https://example.com]\n  files: [cfg.json]\n"
        "patches:\n- target: {kind: Deployment}\n  patch: |\n    - op: add\n      path: /metadata/annotations/u\n"
        "      value: https://example.com\n",
        "overlay",
    )
    assert remote_references(str(k)) == []


def _fake_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``kustomize`` and ``git`` scripts first on PATH that record being run (in ``ran``)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    ran = tmp_path / "ran"
    for tool in ("kustomize", "git"):
        script = bin_dir / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{ran}"\nexit 1\n')
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return ran


def test_a_kustomization_with_a_remote_base_is_not_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``resources: [https://github.com/...]``: ``kubectl kustomize`` made an HTTP request to the URL, then ran
    ``git init``/``git fetch`` with it. Now a KV001 at the line, and the renderer is never started."""
    ran = _fake_tools(tmp_path, monkeypatch)
    k = _kustomization(tmp_path, "resources:\n- https://github.com/org/repo//base?ref=v1\n")
    res = CliRunner().invoke(main, ["check", "--offline", str(k)])
    assert res.exit_code == 1, res.output
    assert f"{k / 'kustomization.yaml'}:2:3: error KV001 resources names a remote reference" in res.output
    assert not ran.exists()


def _host_address() -> str | None:
    """A non-loopback address of this machine (the proxy is bypassed only for loopback ones), or None."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent: only the route is chosen
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else str(address)


@pytest.mark.skipif(
    not HAS_KUSTOMIZE or _host_address() is None, reason="no kustomize, or no non-loopback address"
)
def test_the_renderer_runs_with_fetching_cut_off(tmp_path: Path) -> None:
    """Defence in depth, for a reference :func:`remote_references` would not recognise: the renderer runs behind
    a proxy that refuses every connection, and git refuses every transport. Called below the pre-check, with a
    URL on an HTTP server of this machine that counts its requests."""
    import http.server
    import threading

    from kvlint.render import _run, kustomize_command

    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"a: b\n")

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("0.0.0.0", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://{_host_address()}:{server.server_address[1]}"
        k = _kustomization(
            tmp_path,
            f"configMapGenerator:\n- name: g\n  files:\n  - {url}/x.yaml\nresources:\n- {url}/r.yaml\n",
        )
        cmd = kustomize_command(str(k))
        assert cmd is not None
        out = _run(cmd, str(k / "kustomization.yaml"), "kustomize", 1 << 20)
    finally:
        server.shutdown()
        server.server_close()
    assert hits == []
    assert not isinstance(out, str) and out.findings[0].rule == "KV001"


# ------------------------------------------------------------------------------------------ helm charts

HAS_HELM = shutil.which("helm") is not None
_LEAKING_TEMPLATE = """apiVersion: apps/v1
kind: Deployment
metadata: {name: x}
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.8.0
        args: ["--model", {{ .Files.Get "leak" | trim | quote }}]
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def _chart(tmp_path: Path, name: str = "c") -> Path:
    chart = tmp_path / name
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
    (chart / "templates" / "d.yaml").write_text(_LEAKING_TEMPLATE)
    return chart


@pytest.mark.skipif(not HAS_HELM, reason="helm not installed")
def test_a_chart_cannot_read_a_file_outside_itself_through_a_symlink(tmp_path: Path) -> None:
    """``leak -> /outside/token`` and ``{{ .Files.Get "leak" }}`` as the model: helm followed the link, and
    KV502 printed the file's content ("no config.json for model '<content>'"), into a CI log."""
    secret = tmp_path / "outside" / "token"
    secret.parent.mkdir()
    secret.write_text("hf_not_for_the_log\n")
    chart = _chart(tmp_path)
    os.symlink(secret, chart / "leak")
    for fmt in ("text", "json", "sarif"):
        res = CliRunner().invoke(main, ["check", "--offline", "--format", fmt, str(chart)])
        assert res.exit_code == 1, res.output
        assert "hf_not_for_the_log" not in res.output
    res = CliRunner().invoke(main, ["check", "--offline", str(chart)])
    assert f"{chart / 'leak'}:1:1: error KV001 symbolic link to a path outside the chart" in res.output


def _git_config(root: Path) -> None:
    """A ``.git/config`` as actions/checkout leaves it (the token made up)."""
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text(
        '[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic bm90X2Zvcl90aGVfbG9n\n'
    )


@pytest.mark.skipif(not HAS_HELM, reason="helm not installed")
def test_a_chart_at_a_repository_root_cannot_read_git_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repository whose root is the chart: helm loads every file of the chart directory, .git included, so
    ``{{ .Files.Get ".git/config" }}`` as the model put a CI checkout's credentials (actions/checkout's
    extraheader) into KV502's message. helm now renders a copy without .git (removed afterwards); the chart
    still renders, located in its own templates."""
    import tempfile

    chart = _chart(tmp_path)
    _git_config(chart)
    (chart / "templates" / "d.yaml").write_text(_LEAKING_TEMPLATE.replace('"leak"', '".git/config"'))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    for fmt in ("text", "json", "sarif"):
        res = CliRunner().invoke(main, ["check", "--offline", "--format", fmt, str(chart)])
        assert "bm90X2Zvcl90aGVfbG9n" not in res.output and "extraheader" not in res.output, res.output
    res = CliRunner().invoke(main, ["check", "--offline", str(chart)])
    assert f"{chart / 'templates' / 'd.yaml'}:10:" in res.output, res.output
    assert "KV001" not in res.output and "1 workload" in res.output
    assert list(scratch.iterdir()) == []


@pytest.mark.skipif(not HAS_HELM, reason="helm not installed")
def test_a_chart_at_a_repository_root_keeps_its_helmignore(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rendered without its .git, the chart still has helm apply its .helmignore (an ignored directory, as large
    as a repository's data, is not read or copied: the chart is passed through links to its entries, and only
    a .git below the chart, a nested repository, makes kvlint copy the chart without it)."""
    from kvlint import render

    copies: list[str] = []
    real_copy = render._copy_without_git
    monkeypatch.setattr(render, "_copy_without_git", lambda c, t, n: copies.append(c) or real_copy(c, t, n))
    chart = _chart(tmp_path)
    _git_config(chart)
    (chart / "templates" / "d.yaml").write_text(_LEAKING_TEMPLATE.replace('"leak"', '"sub/.git/config"'))
    (chart / ".helmignore").write_text("big/\n")
    (chart / "big").mkdir()
    (chart / "big" / "x.yaml").write_text("{{ this does not parse\n")
    res = CliRunner().invoke(main, ["check", "--offline", str(chart)])
    assert "KV001" not in res.output and "1 workload" in res.output, res.output
    assert copies == []
    (chart / "sub").mkdir()
    _git_config(chart / "sub")
    (chart / "sub" / "values.yaml").write_text("a: 1\n")
    res = CliRunner().invoke(main, ["check", "--offline", str(chart)])
    assert "bm90X2Zvcl90aGVfbG9n" not in res.output and "1 workload" in res.output, res.output
    assert copies == [str(chart)]


def test_a_link_into_git_metadata_is_refused(tmp_path: Path) -> None:
    from kvlint.render import chart_escapes

    chart = _chart(tmp_path)
    _git_config(chart)
    os.symlink(".git/config", chart / "leak")
    os.symlink(str(chart / ".git"), chart / "templates" / "g")
    found = chart_escapes(str(chart))
    assert sorted(f.loc.file for f in found if f.loc) == [str(chart / "leak"), str(chart / "templates" / "g")]
    assert all("into a .git directory" in f.message for f in found)


def test_links_out_of_the_chart_are_found_and_links_inside_are_not(tmp_path: Path) -> None:
    from kvlint.render import chart_escapes

    outside = tmp_path / "outside"
    outside.mkdir()
    chart = _chart(tmp_path)
    os.symlink(outside, chart / "templates" / "more")  # a directory out of the chart: helm walks into it
    os.symlink("../../outside", chart / "templates" / "rel")
    os.symlink("d.yaml", chart / "templates" / "same.yaml")  # inside: fine
    os.symlink("templates", chart / "tpl")  # inside: fine
    found = chart_escapes(str(chart))
    assert sorted(f.loc.file for f in found if f.loc) == [
        str(chart / "templates" / "more"),
        str(chart / "templates" / "rel"),
    ]


def test_a_chain_of_links_out_of_the_chart_is_named_to_its_end(tmp_path: Path) -> None:
    """``hop -> first -> /outside/token``: the finding named only ``first``, a name inside the chart."""
    from kvlint.render import chart_escapes

    secret = tmp_path / "outside" / "token"
    secret.parent.mkdir()
    secret.write_text("t\n")
    chart = _chart(tmp_path)
    os.symlink(secret, chart / "first")
    os.symlink("first", chart / "hop")
    found = {f.loc.file: f.message for f in chart_escapes(str(chart)) if f.loc}
    assert f"outside the chart (first -> {secret}); " in found[str(chart / "hop")]


@pytest.mark.parametrize(
    ("ref", "refused"),
    [
        ("https://example.com/s.json", True),
        ("file:///etc/passwd", True),
        ("other.json", True),
        ("#/definitions/s", False),
    ],
)
def test_schema_references_out_of_the_schema_are_refused(tmp_path: Path, ref: str, refused: bool) -> None:
    """helm validates the values against ``values.schema.json`` and fetches an ``https://`` ``$ref`` (an HTTP
    request chosen by the chart), reads a ``file://`` one."""
    import json

    from kvlint.render import chart_escapes

    chart = _chart(tmp_path)
    schema = {"type": "object", "definitions": {"s": {"type": "string"}}, "properties": {"a": {"$ref": ref}}}
    (chart / "values.schema.json").write_text(json.dumps(schema))
    found = chart_escapes(str(chart))
    assert [f.loc.file for f in found if f.loc] == ([str(chart / "values.schema.json")] if refused else [])


# ------------------------------------------------------------------------------------------ renderer output


def _fake_renderer(tmp_path: Path, body: str) -> tuple[Path, dict[str, str]]:
    """A kustomization and a ``kustomize`` script first on PATH running ``body``; the environment to use."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "kustomize"
    script.write_text("#!/bin/sh\n" + body + "\n")
    script.chmod(0o755)
    k = _kustomization(tmp_path, "resources: [d.yaml]\n")
    return k, dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_a_renderer_that_never_stops_writing_is_cut_at_the_limit(tmp_path: Path) -> None:
    """stdout was read whole (``capture_output``) before its size was compared with ``--max-file-bytes``: a
    renderer writing without end filled memory until the timeout. It is now read as it comes and stopped just
    past the limit."""
    k, env = _fake_renderer(tmp_path, "exec yes 'apiVersion: v1'")
    code = (
        "import os, sys; os.environ['PATH'] = sys.argv[1]; from kvlint.cli import main; "
        f"main(['check', '--offline', '--max-file-bytes', '1048576', {str(k)!r}])"
    )
    prelude = "import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
    proc = subprocess.run(
        [sys.executable, "-c", prelude + code, env["PATH"]],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "kustomize build output of more than 1048576 bytes" in proc.stdout


def test_a_renderers_error_lines_are_quoted_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """kubectl kustomize quotes the offending value of a kustomization in its error, five times: a 2 MB resource
    name made a 10 MB KV001 message. Each quoted line is cut at RENDER_LINE_CHARS characters."""
    from kvlint.render import RENDER_LINE_CHARS

    k, env = _fake_renderer(
        tmp_path,
        "printf 'Error: accumulating %s\\n' \"$(head -c 2000000 /dev/zero | tr '\\0' A)\" >&2; exit 1",
    )
    monkeypatch.setenv("PATH", env["PATH"])
    res = CliRunner().invoke(main, ["check", "--offline", "--format", "json", str(k)])
    assert res.exit_code == 1, res.output[:2000]
    (finding,) = [f for f in json.loads(res.output)["diagnostics"] if f["rule"] == "KV001"]
    assert finding["message"].startswith("kustomize build failed: Error: accumulating AAAA")
    assert len(finding["message"]) < RENDER_LINE_CHARS + 100


@pytest.mark.skipif(not HAS_HELM or os.name != "posix", reason="helm, setrlimit")
def test_a_chart_that_makes_helm_allocate_gigabytes_is_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty-five doublings of a 16-character string (512 MiB) in a template: helm held ~2.5 GB to render a
    tiny document; ``until 3000000`` loops took it to 4 GB. A renderer's address space is now limited
    (:func:`kvlint.render._memory_limit`; the floor lowered here to 1 GiB, enough for Go to start), and running
    out of it is a KV001 saying so."""
    from kvlint import render

    monkeypatch.setattr(render, "RENDER_MEMORY_FLOOR", 1 << 30)
    chart = tmp_path / "mem"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: mem\nversion: 0.1.0\n")
    (chart / "templates" / "cm.yaml").write_text(
        '{{- $x := "AAAAAAAAAAAAAAAA" }}{{- range until 25 }}{{- $x = print $x $x }}{{- end }}\n'
        'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {n: "{{ len $x }}"}\n'
    )
    res = render.render_helm(str(chart), max_bytes=1 << 20)
    assert [f.message for f in res.findings] == [
        "helm template ran out of memory: it may use 1024 MiB (128 times --max-file-bytes, at least 1 GiB)"
    ]


_CONFIG_MAP = "printf 'apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: c}\\n'"


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
@pytest.mark.parametrize("ctype", [None, "C"])
def test_a_renderer_runs_under_its_limits_from_its_first_instruction(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ctype: str | None
) -> None:
    """The address-space limit was set with ``prlimit`` on the renderer's pid after it had started, and no CPU
    limit at all: a renderer (or a helper it forked at once) ran unlimited for milliseconds, and for ever when
    kvlint was killed. It now starts under both (kvlint.render._LIMITED_EXEC): the first command of a renderer
    script reads them, and everything else it sees is what ``subprocess`` gave it before: the environment
    (``LC_CTYPE`` unset or as set, though the Python that starts it coerces a C locale) and the signals
    ignored (none that the test process did not ignore)."""
    import resource

    from kvlint import render

    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.setenv("LANG", "C")  # Python's start-up would set LC_CTYPE=C.UTF-8 (PEP 538)
    if ctype is None:
        monkeypatch.delenv("LC_CTYPE", raising=False)
    else:
        monkeypatch.setenv("LC_CTYPE", ctype)
    seen = tmp_path / "seen"
    k, env = _fake_renderer(
        tmp_path,
        f'ulimit -v > {seen}; ulimit -t >> {seen}; echo "${{LC_CTYPE-unset}}" >> {seen}; '
        f"grep SigIgn /proc/$$/status >> {seen}; {_CONFIG_MAP}",
    )
    monkeypatch.setenv("PATH", env["PATH"])
    as_limit = render._memory_limit(1 << 20)
    cpu_limit = render._cpu_limit(render.RENDER_TIMEOUT_S)
    for which, value in ((resource.RLIMIT_AS, as_limit), (resource.RLIMIT_CPU, cpu_limit)):
        hard = resource.getrlimit(which)[1]
        if hard != resource.RLIM_INFINITY and hard < value:
            pytest.skip("this process's own hard limit is lower")
    res = render.render_kustomize(str(k), max_bytes=1 << 20)
    assert not res.findings and [d.data["kind"] for d in res.documents] == ["ConfigMap"]
    direct = subprocess.run(["/bin/sh", "-c", "grep SigIgn /proc/$$/status"], capture_output=True, text=True)
    assert seen.read_text().splitlines() == [
        str(as_limit // 1024),
        str(cpu_limit),
        ctype or "unset",
        direct.stdout.strip(),
    ]


def test_a_renderer_is_loaded_under_its_address_space_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The limit applies to the renderer's own start: under an address space of a few hundred bytes its program
    cannot even be mapped (the kernel refuses ``execve`` or stops the process), and that is a KV001; with the
    usual limit the same script renders. (With the limit set by ``prlimit`` once the renderer had started,
    this depended on whether the dynamic loader had mapped the C library before the call landed.)"""
    from kvlint import render

    k, env = _fake_renderer(tmp_path, _CONFIG_MAP)
    monkeypatch.setenv("PATH", env["PATH"])
    fine = render.render_kustomize(str(k), max_bytes=1 << 20)
    assert not fine.findings and len(fine.documents) == 1
    monkeypatch.setattr(render, "RENDER_MEMORY_FLOOR", 0)
    starved = render.render_kustomize(str(k), max_bytes=4)  # 512 bytes of address space
    assert [f.rule for f in starved.findings] == ["KV001"] and not starved.documents, starved.findings


def test_a_schema_reached_through_a_link_inside_the_chart_is_read(tmp_path: Path) -> None:
    """``values.schema.json -> schemas/s.json``: helm reads the target, so its ``$ref`` counts (it was skipped)."""
    import json

    from kvlint.render import chart_escapes

    chart = _chart(tmp_path)
    (chart / "schemas").mkdir()
    (chart / "schemas" / "s.json").write_text(
        json.dumps({"properties": {"a": {"$ref": "https://example.com/x"}}})
    )
    os.symlink("schemas/s.json", chart / "values.schema.json")
    assert [f.loc.file for f in chart_escapes(str(chart)) if f.loc] == [str(chart / "values.schema.json")]


def test_a_kustomization_file_that_cannot_be_checked_is_not_built(tmp_path: Path) -> None:
    """A kustomization file kvlint cannot read within its limits could name what kustomize fetches (and a named
    pipe would hold kustomize until the timeout): the tree is not built."""
    from kvlint.render import remote_references

    k = tmp_path / "k"
    k.mkdir()
    os.mkfifo(k / "kustomization.yaml")
    (found,) = remote_references(str(k))
    assert found.message == "kustomization file is not a regular file; not built"
    os.unlink(k / "kustomization.yaml")
    (k / "kustomization.yaml").write_text("resources:\n- deploy.yaml\n" + "#" * 2000 + "\n")
    (found,) = remote_references(str(k), max_bytes=1000)
    assert "more than the 1000-byte limit" in found.message
    assert remote_references(str(k)) == []


@pytest.mark.parametrize(
    "first",
    [
        "runtime: out of memory: cannot allocate 167772160-byte block (318308352 in use)\nfatal error: out of memory",
        "runtime: failed to create new OS thread (have 7 already; errno=12)\n"
        "runtime: may need to increase max user processes (ulimit -u)\nfatal error: newosproc",
        "runtime: mmap(0xc000400000, 67108864) returned 0, cannot allocate memory\nfatal error: runtime: cannot map pages",
    ],
)
def test_each_way_go_stops_at_the_address_space_limit_reads_as_out_of_memory(first: str) -> None:
    """Under kvlint's RLIMIT_AS a renderer written in Go stops in one of several ways, the first lines saying which,
    then a goroutine dump that ends the output: a failed allocation, a thread whose stack cannot be mapped (ENOMEM,
    errno 12, more likely on a loaded host where the runtime starts more threads), a failed mmap. Each is 'out of
    memory', not the dump's last lines quoted as the reason."""
    from kvlint.render import _ErrorTail

    tail = _ErrorTail()
    dump = "".join(f"goroutine {i} [running]:\nruntime/proc.go:{i} +0x1a\n" for i in range(50))
    tail.feed((first + "\n\n" + dump + "created by runtime.init.7 in goroutine 1\n").encode())
    assert tail.text() == "out of memory"
    other = _ErrorTail()
    other.feed(
        b"runtime: failed to create new OS thread (have 7 already; errno=11)\nfatal error: newosproc\n"
    )
    assert other.text() != "out of memory"  # EAGAIN: the process limit, not memory
