"""Hostile inputs to what landed at stop 25 (break26): verify's quoted log lines, the search for a values file's
chart in its checkout, and ``kvlint diff``'s run of ``kvlint check``."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kvlint.cli import main

ROOT = Path(__file__).resolve().parents[1]

# an OSC title sequence, BEL, a private-mode CSI (alternate screen: not the colour codes the parser strips), a
# backspace, a bidi override and a GitHub workflow command (the log's line breaks, \r included, end the line)
_INJECTED = " \x1b]0;owned\x07 \x1b[?1049h \x08::error::forged \u202e<img src=x>"


#: A published vLLM start-up log (Qwen2-7B-Instruct on an A100 80GB), the base of the hostile logs below
_GT210 = ROOT / "fixtures" / "logs" / "gt-210.log"


def _verify_args(log: Path) -> list[str]:
    """``kvlint verify`` of a variant of :data:`_GT210`, with the model and GPU it was published with."""
    return [
        "verify",
        "--offline",
        str(log),
        "--model",
        "Qwen/Qwen2-7B-Instruct",
        "--accelerator",
        "a100-80gb",
    ]


def _evil_log(tmp_path: Path) -> Path:
    text = _GT210.read_text()
    line = "GPU KV cache size: 93,872 tokens"
    assert line in text
    text = text.replace(line, line + _INJECTED)
    path = tmp_path / "evil.log"
    path.write_bytes(text.encode())
    return path


def test_verify_text_shows_a_quoted_lines_control_characters_escaped(tmp_path: Path) -> None:
    log = _evil_log(tmp_path)
    args = _verify_args(log)
    r = CliRunner().invoke(main, args)
    assert r.exit_code in (0, 1), r.output
    quoted = [ln for ln in r.output.split("\n") if "GPU KV cache size: 93,872 tokens" in ln]
    assert quoted, r.output
    for bad in ("\x1b", "\x07", "\x08", "\u202e"):
        assert bad not in r.output
    assert "\\x1b]0;owned\\x07" in quoted[0] and "\\x08::error::" in quoted[0]
    assert not any(ln.startswith("::") for ln in r.output.split("\n"))
    # JSON keeps the text as read (json escapes it)
    r = CliRunner().invoke(main, [*args, "--format", "json"])
    fig = next(f for f in json.loads(r.output)["figures"] if f["figure"] == "kv_tokens")
    assert "\x1b]0;owned\x07" in fig["log_text"]


def _checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    values = repo / "deploy" / "values.yaml"
    values.parent.mkdir()
    values.write_text("workload:\n  image:\n")
    return values


def _bare_chart(repo: Path, name: str) -> Path:
    chart = repo / "charts" / name
    chart.mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
    return chart


def test_repository_chart_does_not_follow_templates_linked_out_of_the_checkout(tmp_path: Path) -> None:
    """A ``templates`` directory, or a template, that is a symbolic link out of the checkout is not read: the
    search walked what the link named (``templates -> /`` walked the machine's whole file system)."""
    from kvlint.load import _charts_under, repository_chart

    values = _checkout(tmp_path)
    repo = values.parents[1]
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "deployment.yaml").write_text("{{ .Values.workload.image }}\n")
    (_bare_chart(repo, "dir-link") / "templates").symlink_to(outside, target_is_directory=True)
    _charts_under.cache_clear()
    assert repository_chart(str(values)) is None
    file_link = _bare_chart(repo, "file-link") / "templates"
    file_link.mkdir()
    (file_link / "deployment.yaml").symlink_to(outside / "deployment.yaml")
    _charts_under.cache_clear()
    assert repository_chart(str(values)) is None
    # the same template inside the checkout (a link within it too) is read
    inner = _bare_chart(repo, "inner") / "templates"
    inner.mkdir()
    (repo / "shared.yaml").write_text("{{ .Values.workload.image }}\n")
    (inner / "deployment.yaml").symlink_to(repo / "shared.yaml")
    _charts_under.cache_clear()
    assert repository_chart(str(values)) == str(inner.parent)


def test_repository_chart_reads_a_bounded_number_of_templates(tmp_path: Path, monkeypatch) -> None:
    """One search opens at most ``_REPO_SCAN_FILES`` templates (counted: it opened every file of every chart)."""
    import builtins

    import kvlint.load as load

    values = _checkout(tmp_path)
    repo = values.parents[1]
    for c in range(6):
        templates = _bare_chart(repo, f"c{c}") / "templates"
        templates.mkdir()
        for t in range(40):
            (templates / f"t{t}.yaml").write_text("{{ .Values.unrelated }}\n")
    opened: list[str] = []
    real_open = builtins.open

    def counting_open(file, *a, **k):  # type: ignore[no-untyped-def]
        if "templates" in str(file):
            opened.append(str(file))
        return real_open(file, *a, **k)

    monkeypatch.setattr(load, "_REPO_SCAN_FILES", 50, raising=False)
    monkeypatch.setattr(builtins, "open", counting_open)
    load._charts_under.cache_clear()
    assert load.repository_chart(str(values)) is None
    load._charts_under.cache_clear()
    assert 0 < len(opened) <= 50 * load._REPO_CLIMB
    assert len(set(opened)) <= 50


def test_repository_chart_reads_a_bounded_number_of_characters(tmp_path: Path, monkeypatch) -> None:
    """A read past ``_REPO_SCAN_CHARS`` characters of templates is not made (each file was read to 1 MiB)."""
    import kvlint.load as load

    values = _checkout(tmp_path)
    templates = _bare_chart(values.parents[1], "big") / "templates"
    templates.mkdir()
    (templates / "deployment.yaml").write_text("#" * 5000 + "\n{{ .Values.workload.image }}\n")
    load._charts_under.cache_clear()
    assert load.repository_chart(str(values)) == str(templates.parent)
    monkeypatch.setattr(load, "_REPO_SCAN_CHARS", 1000, raising=False)
    load._charts_under.cache_clear()
    assert load.repository_chart(str(values)) is None
    load._charts_under.cache_clear()


def _excluded_reference(path: str, exclude: list[str]) -> bool:
    """``kvlint.load._excluded`` as it matched before (each form against each glob with fnmatch)."""
    import fnmatch
    import os

    norm = os.path.normpath(path)
    forms = {path, norm, os.path.abspath(norm), os.path.basename(norm)}
    for g in exclude:
        glob = g.rstrip("/") or g
        globs = {glob, os.path.normpath(glob)}
        if not any(ch in glob for ch in "*?[") and not os.path.isabs(glob):
            globs.add(os.path.abspath(glob))
        if any(fnmatch.fnmatch(f, gl) for f in forms for gl in globs):
            return True
    return False


def test_excluded_matches_as_fnmatch_did(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    globs = ["charts/", "*.tmpl.yaml", "./a/b.yaml", "../x/y.json", str(tmp_path / "abs" / "c.yaml"), "d[1].yaml",
             str(tmp_path / "e[[]1].yaml"), "gen/", "/", "values.yaml", "sub/*/v.yaml", "f?.json"]  # fmt: skip
    paths = ["charts", "charts/x.yaml", "a/b.yaml", "./a/b.yaml", "a/c.yaml", "../x/y.json", str(tmp_path / "abs/c.yaml"),
             "abs/c.yaml", "d1.yaml", "d[1].yaml", str(tmp_path / "e[1].yaml"), "gen", "gen/z.yaml", "/",
             "deep/values.yaml", "sub/q/v.yaml", "f1.json", "x.tmpl.yaml", "other.yaml", "a//b.yaml"]  # fmt: skip
    from kvlint.load import _excluded

    for p in paths:
        for k in range(len(globs)):
            sub = globs[k:] + globs[:1]
            assert _excluded(p, sub) == _excluded_reference(p, sub), (p, sub)


def test_excluded_looks_literal_globs_up_without_matching_each(monkeypatch) -> None:
    """``kvlint diff`` passes each file git ignores as an ``--exclude``: one path against 5,000 of them made
    tens of thousands of fnmatch calls (counted), for every file read."""
    import kvlint.load as load

    calls = [0]
    real = load.fnmatch.fnmatch

    def counting(name: str, pat: str) -> bool:
        calls[0] += 1
        return real(name, pat)

    monkeypatch.setattr(load.fnmatch, "fnmatch", counting)
    exclude = [f"/repo/gen/out-{i}.json" for i in range(5000)]
    assert load._excluded("/repo/gen/out-4999.json", exclude)
    assert not load._excluded("/repo/deploy/a.yaml", exclude)
    assert calls[0] <= 10


def _git(cwd: Path, *args: str) -> None:
    import shutil
    import subprocess

    import pytest

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_diff_refuses_more_ignored_files_than_a_command_line_holds(tmp_path: Path, monkeypatch) -> None:
    """Past the bound, ``kvlint diff`` says what to do (a command line past ARG_MAX ended in an OSError
    traceback: 30,000 ignored .json files in a real checkout)."""
    import pytest

    import kvlint.prdiff as prdiff

    _git(tmp_path, "init", "-q")
    (tmp_path / ".gitignore").write_text("*.json\n")
    for i in range(6):
        (tmp_path / f"out-{i}.json").write_text("{}")
    assert len(prdiff.ignored_excludes(str(tmp_path))) == 12
    monkeypatch.setattr(prdiff, "MAX_IGNORED_EXCLUDES", 5, raising=False)
    with pytest.raises(ValueError, match="git ignores more than 5 directories and manifest files"):
        prdiff.ignored_excludes(str(tmp_path))


def test_run_check_json_says_when_the_command_line_is_refused(tmp_path: Path) -> None:
    import pytest

    from kvlint.prdiff import run_check_json

    with pytest.raises(ValueError, match="cannot run true check: Argument list too long"):
        run_check_json(["true"], ["x" * (1 << 18)], str(tmp_path), str(tmp_path / "r.json"))
    with pytest.raises(ValueError, match="cannot run /nonexistent/kvlint check"):
        run_check_json(["/nonexistent/kvlint"], [], str(tmp_path), str(tmp_path / "r.json"))


def test_pp_layer_partition_with_huge_entries_is_refused_as_sglang_refuses_it() -> None:
    """Two 4,300-digit counts (each within Python's int parsing limit) sum past what Python writes as text: the
    plan ended in "ValueError: Exceeds the limit (4300 digits)" with a fix about config.json."""
    import pytest

    from kvlint.memory.sglang import PP_PARTITION_REFUSED, PlanError, pp_stage_layers

    raw = "9" * 4300 + "," + "9" * 4300
    with pytest.raises(PlanError) as err:
        pp_stage_layers(16, 2, (0, 5, 23), {PP_PARTITION_REFUSED: raw})
    assert str(err.value).startswith(PP_PARTITION_REFUSED) and "over 10^18" in str(err.value)
    assert len(str(err.value)) < 600


def test_complex_keys_split_their_document_once() -> None:
    """A document of thousands of complex keys (``[k]: v``) split its whole text into lines for each one
    (quadratic: 40,000 keys took 14 s of CPU). Counted: the splits of a string longer than 10,000 characters,
    seen by a profile hook of C calls; the findings are unchanged."""
    import sys

    from kvlint.load import load_text

    keys = 300
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata:\n"
    text += "".join(f"  [k{i}]: v{'x' * 40}\n" for i in range(keys)) + "  {{PLACE}}: v\n"
    splits = [0]

    def hook(frame, event, arg):  # type: ignore[no-untyped-def]
        if event == "c_call" and getattr(arg, "__name__", "") == "split":
            target = getattr(arg, "__self__", None)
            if isinstance(target, str) and len(target) > 10_000:
                splits[0] += 1

    before = sys.getprofile()
    sys.setprofile(hook)
    try:
        result = load_text(text, "cm.yaml")
    finally:
        sys.setprofile(before)
    kv001 = [f for f in result.findings if f.rule == "KV001" and "invalid map key" in f.message]
    kv002 = [f for f in result.findings if f.rule == "KV002" and "{{PLACE}}" in f.message]
    assert len(kv001) == keys and kv002
    assert {f.loc.line for f in kv001} == set(range(5, 5 + keys))
    assert splits[0] <= 3


def test_mustache_placeholder_after_quoted_ones_on_one_line() -> None:
    """The quotes before each placeholder are counted on from the previous one, as the whole prefix was."""
    from kvlint.load import _mustache_on

    line = "a: \"{{X}}\" '{{Y}}' {{Z}}: 1"
    assert _mustache_on("head\n" + line, 1, len(line) - 1) == "{{Z}}"
    assert _mustache_on("head\n" + line, 1, 3) is None  # before the first placeholder
    odd = 'a: "{{X}} {{Y}}'
    assert _mustache_on(odd, 0, len(odd)) is None
    assert _mustache_on(odd, 0, len(odd), odd.split("\n")) is None


def test_parse_log_reads_past_a_number_python_cannot_convert() -> None:
    """A 5,000-digit block count (past Python's 4,300-digit int conversion limit) raised ValueError out of
    parse_log, which never raises; the line gives no figure and the rest of the log is read."""
    from kvlint.verify import parse_log

    text = (ROOT / "fixtures" / "logs" / "gt-293.log").read_text()
    line = "KV-cache blocks: 1069251, size: 1"
    assert line in text
    log = parse_log(text.replace(line, "KV-cache blocks: " + "9" * 5000 + ", size: 1"))
    assert "kv_cache_blocks" not in log.figures
    assert log.figures.get("max_batch_total_tokens") == parse_log(text).figures["max_batch_total_tokens"]


def test_verify_refuses_absurd_figures_instead_of_failing_on_them(tmp_path: Path) -> None:
    """A 4,000-digit token count and a 400-digit GiB (a float that reads as inf) are not figures: verify
    compared them and ended in OverflowError (int too large to convert to float)."""
    import re

    text = _GT210.read_text()
    text = re.sub(
        r"Available KV cache memory: [\d.]+ GiB", "Available KV cache memory: " + "9" * 400 + " GiB", text
    )
    text = text.replace("GPU KV cache size: 93,872 tokens", "GPU KV cache size: " + "9" * 4000 + " tokens")
    log = tmp_path / "absurd.log"
    log.write_text(text)
    r = CliRunner().invoke(main, [*_verify_args(log), "--format", "json"])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    figures = {f["figure"]: f for f in json.loads(r.output)["figures"]}
    assert "kv_tokens" not in figures and "kv_cache_gib" not in figures
    assert figures["weights_gib"]["log_line"] == 20  # the other lines are still read


def test_verify_json_stays_json_with_an_absurd_failure_line(tmp_path: Path) -> None:
    """A refusal line whose GiB has 400 digits read as inf, written as ``Infinity`` (not JSON) and ``.inf``."""
    text = _GT210.read_text()
    text += (
        "(EngineCore_0 pid=1812) ERROR 09-04 01:04:30 [core.py:1] ValueError: To serve at least one request with "
        f"the models's max seq len ({'9' * 400}), ({'9' * 400} GiB KV cache is needed, which is larger than the "
        "available KV cache memory (5.01 GiB). Based on the available memory, the estimated maximum model length "
        f"is {'9' * 500}.\n"
    )
    log = tmp_path / "absurd-failure.log"
    log.write_text(text)
    r = CliRunner().invoke(main, [*_verify_args(log), "--format", "json"])
    doc = json.loads(r.output, parse_constant=lambda c: _not_json(c))
    assert doc["failure"]["kind"] == "kv_needed_exceeds_available"
    assert doc["failure"]["kv_available_gib"] == 5.01 and "kv_needed_gib" not in doc["failure"]


def _not_json(constant: str) -> None:
    raise AssertionError(f"not JSON: {constant}")


def test_values_set_keys_fix_names_no_hostile_key_and_at_most_a_dozen(tmp_path: Path) -> None:
    """The fix's ``--set KEY=VALUE`` words come from the file's keys: a key ``$(touch ...)`` was written into the
    command to copy as is, a key holding " and " / ", " was split into several, and 3,000 empty keys were all
    listed."""
    from kvlint.pipeline import Options, run_check

    values = tmp_path / "values.yaml"
    values.write_text(
        'workload:\n  framework:\n  image:\n  "$(touch /tmp/owned)":\n  "a and b, c":\n'
        + "".join(f"  k{i}:\n" for i in range(3000))
    )
    result = run_check([str(values)], Options(allow_hub=False))
    (d,) = [x for x in result.diagnostics if x.rule == "KV002"]
    text = d.message + " " + (d.fix or "")
    assert "$(" not in text and "a and b" not in text and "--set b=VALUE" not in text
    assert "--set workload.framework=VALUE --set workload.image=VALUE" in (d.fix or "")
    assert (d.fix or "").count("--set ") == 12 and "workload.k9=VALUE" in (d.fix or "")


def test_paths_in_suggested_commands_are_one_shell_word(tmp_path: Path) -> None:
    """A fix is a command users copy into a shell: a values file in a directory a pull request named
    ``$(touch pwned) x`` is quoted there (was written as is: the command substitution ran, the space split the
    path), while an ordinary path is left as written."""
    from kvlint.wording import shell_word

    assert shell_word("charts/vllm/values.yaml") == "charts/vllm/values.yaml"
    assert shell_word("$(touch pwned) x/values.yaml") == "'$(touch pwned) x/values.yaml'"
    hostile = tmp_path / "$(touch pwned) x"
    hostile.mkdir()
    values = hostile / "values.yaml"
    values.write_text("replicaCount: 1\nimage:\n  repository: vllm/vllm-openai\n  tag: v0.11.0\n")
    result = CliRunner().invoke(main, ["check", "--offline", "--no-config", "--format", "json", str(values)])
    fixes = [
        d["fix"] for d in json.loads(result.output)["diagnostics"] if "helm template" in (d.get("fix") or "")
    ]
    assert fixes, result.output
    assert all(f"'{values}'" in line for line in fixes), fixes
