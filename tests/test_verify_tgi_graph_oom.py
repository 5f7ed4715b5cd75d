"""``kvlint verify`` reads TGI's "Decode cuda graph warmup failed".

TGI allocates the KV cache, then captures its decode CUDA graphs in what the wiggle room left; an out-of-memory there
is caught and logged (``logger.exception("Decode cuda graph warmup failed")``,
tgi@v1.4.1 - v3.3.7:server/text_generation_server/models/flash_causal_lm.py::FlashCausalLM.warmup) and the shard
serves without those graphs. The line (as huggingface/text-generation-inference#1695 shows it, ERROR level, a
traceback after it) was not read: verify said "the engine started" and nothing else, and the recorded case did not
say so either.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from kvlint.cli import main
from kvlint.options import Options
from kvlint.verify import parse_log, record_case, verify_log

ROOT = Path(__file__).resolve().parents[1]
TGI_20 = ROOT / "fixtures" / "logs" / "verify" / "tgi-2.0-rocm-mi300x-llama3-8b.log"
#: the line and the start of its traceback as TGI's launcher forwards them (text-generation-inference#1695)
OOM = (
    "2024-05-07T12:39:22.100000Z ERROR text_generation_launcher: Decode cuda graph warmup failed\n"
    "Traceback (most recent call last):\n"
    '  File "/opt/conda/bin/text-generation-server", line 8, in <module>\n'
    "    sys.exit(app())\n"
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB.\n"
)


def _with_oom() -> tuple[str, int]:
    """The TGI 2.0 fixture log with the capture's out-of-memory before "Setting max batch total tokens", and the
    line number of the message."""
    lines = TGI_20.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, ln in enumerate(lines) if "Setting max batch total tokens" in ln)
    return "".join([*lines[:at], OOM, *lines[at:]]), at + 1


def test_the_capture_oom_is_read_and_said() -> None:
    text, line = _with_oom()
    log = parse_log(text)
    assert log.warnings == {"tgi_decode_cuda_graph_warmup_failed": line}
    assert log.outcome == "ok"  # the shard started: not a start-up failure
    opts = Options(allow_hub=False, accelerator="mi300x")
    res = verify_log(log, opts)
    note = next(n for n in res.notes if "Decode cuda graph warmup failed" in n)
    assert note.startswith(f"line {line}:") and "--cuda-graphs" in note
    assert "Decode cuda graph warmup failed" in res.render_text()
    assert res.as_dict()["warnings"] == {"tgi_decode_cuda_graph_warmup_failed": line}
    # the same log without the line says nothing of it
    plain = verify_log(parse_log(TGI_20.read_text(encoding="utf-8")), opts)
    assert not any("cuda graph" in n.lower() for n in plain.notes)
    assert plain.as_dict()["warnings"] is None
    # the KV figures are compared as before
    assert [(f.key, f.reported, f.predicted) for f in res.figures] == [
        (f.key, f.reported, f.predicted) for f in plain.figures
    ]
    assert res.exit_code == plain.exit_code


def test_the_recorded_case_says_it(tmp_path: Path) -> None:
    text, line = _with_oom()
    log = parse_log(text)
    case = record_case(verify_log(log, Options(allow_hub=False, accelerator="mi300x")), log)
    assert case["outcome"] == "ok"
    assert (
        f"'Decode cuda graph warmup failed' (an out-of-memory in the capture after the KV cache was allocated) (line {line})"
        in case["notes"]
    )
    path = tmp_path / "tgi.log"
    path.write_text(text, encoding="utf-8")
    out = tmp_path / "case.yaml"
    r = CliRunner().invoke(
        main,
        [
            "verify",
            "--offline",
            str(path),
            "--accelerator",
            "mi300x",
            "--record",
            str(out),
            "--format",
            "json",
        ],
    )
    assert r.exit_code in (0, 1), r.output
    assert json.loads(r.stdout)["warnings"] == {"tgi_decode_cuda_graph_warmup_failed": line}
    (recorded,) = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert "Decode cuda graph warmup failed" in recorded["notes"]
