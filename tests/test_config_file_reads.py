"""A vLLM ``--config`` file mounted from a ConfigMap (kvlint.engines.vllm._config_file_flags) is read once for all
the containers that mount it, and one larger than a ConfigMap can hold is not read."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvlint.engines import vllm as V
from kvlint.options import Options
from kvlint.pipeline import run_check

ROOT = Path(__file__).resolve().parents[1]
#: a Deployment whose vLLM reads --config from a ConfigMap of the same file (its KV201 is at the ConfigMap's line)
FIXTURE = ROOT / "fixtures" / "pipeline" / "config-from-configmap.yaml"


def _containers(text: str, n: int) -> str:
    start, end = text.index("        - name: vllm"), text.index("      volumes:")
    one = text[start:end]
    return (
        text[:start] + "".join(one.replace("name: vllm", f"name: vllm{i}", 1) for i in range(n)) + text[end:]
    )


def test_containers_mounting_one_config_read_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each container read the file again with PyYAML's pure-Python reader: eleven containers mounting a 200 kB
    config took 35 CPU s. Counted: one reading for five containers, and each container still gets the finding
    on the file's line."""
    reads = []
    real = V._config_argv

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        reads.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(V, "_config_argv", counting)
    path = tmp_path / "five.yaml"
    path.write_text(_containers(FIXTURE.read_text(), 5))
    result = run_check([str(path)], Options(allow_hub=False))
    kv201 = [d for d in result.diagnostics if d.rule == "KV201"]
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "max-model-len: 200000" in t)
    assert len(kv201) == 5 and {d.loc.line for d in kv201} == {line}
    assert len(reads) == 1


def test_a_config_larger_than_a_configmap_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A --config file of more than 1 MiB comes from no ConfigMap the API server accepts; it was read (about 7 CPU s
    per MiB in pure Python, for each container). It is not read now, with a warning at the ConfigMap's key."""
    reads = []
    real = V._config_argv

    def counting(*args, **kwargs):  # type: ignore[no-untyped-def]
        reads.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(V, "_config_argv", counting)
    text = FIXTURE.read_text()
    pad = "".join(
        f"    # padding line {i:07d} of a config larger than a ConfigMap holds\n" for i in range(17000)
    )
    path = tmp_path / "big.yaml"
    path.write_text(
        text.replace("    gpu-memory-utilization: 0.9\n", "    gpu-memory-utilization: 0.9\n" + pad)
    )
    result = run_check([str(path)], Options(allow_hub=False))
    (note,) = [d for d in result.diagnostics if "more than a ConfigMap holds" in d.message]
    assert note.severity == "warning" and "not read" in note.message
    assert not [d for d in result.diagnostics if d.rule == "KV201"]
    assert not reads


def _script_manifest(n: int, lines: int) -> str:
    """A ConfigMap holding a start script of ``lines`` echo lines then vLLM, and a Deployment of ``n`` containers
    running it (``command: [/bin/sh, /scripts/start.sh]``), each asking for a context Llama 3.1 8B lacks."""
    script = "#!/bin/sh\n" + "".join(f"echo step {i}\n" for i in range(lines))
    script += "exec vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 200000\n"
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: scr\n  namespace: serving\ndata:\n  start.sh: |\n"
    cm += "".join(f"    {line}\n" for line in script.splitlines()) + "---\n"
    text = FIXTURE.read_text()
    dep = text[text.index("apiVersion: apps/v1") :]
    dep = (
        dep.replace(
            '["vllm", "serve", "--config", "/etc/vllm/config.yaml"]', '["/bin/sh", "/scripts/start.sh"]'
        )
        .replace("- {name: cfg, mountPath: /etc/vllm}", "- {name: scr, mountPath: /scripts}")
        .replace("configMap: {name: vllm-config}", "configMap: {name: scr}")
        .replace("        - name: cfg\n", "        - name: scr\n")
    )
    return cm + _containers(dep, n)


def test_mounted_scripts_are_read_up_to_a_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ConfigMap script is read again for each container running it (with its own env and arguments): one
    1 MiB script and thousands of container stanzas running it were hours of CPU. Past the process's budget of
    mounted-script characters (MOUNTED_SCRIPT_CHARS, set low here) a container's script is not read, with a KV503
    saying why; the containers read before keep their findings."""
    from kvlint.engines import command

    path = tmp_path / "scripts.yaml"
    path.write_text(_script_manifest(12, 400))
    size = len("#!/bin/sh\n" + "".join(f"echo step {i}\n" for i in range(400))) + len(
        "exec vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 200000\n"
    )
    monkeypatch.setattr(command, "_PROCESS_MOUNTED_LEFT", [5 * size + size // 2])
    result = run_check([str(path)], Options(allow_hub=False))
    assert len([d for d in result.diagnostics if d.rule == "KV201"]) == 5
    unread = [d for d in result.diagnostics if d.rule == "KV503" and "the most it reads" in d.message]
    assert len(unread) == 7, [d.message for d in result.diagnostics]
    assert command._PROCESS_MOUNTED_LEFT[0] == size // 2
    # a review has its own budget, apart from the process's
    with command.mounted_script_budget(2 * size):
        result = run_check([str(path)], Options(allow_hub=False))
    assert len([d for d in result.diagnostics if d.rule == "KV201"]) == 2
    assert command._PROCESS_MOUNTED_LEFT[0] == size // 2
