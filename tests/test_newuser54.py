"""New-user pass 54 (branch newuser54): what got in the way of a platform engineer trying kvlint on real manifests
from the README alone.

* KV501 on gateway-api-inference-extension's Qwen3-32B Deployment (no GPU named) listed "no memory left for the KV
  cache after 61.28 GiB/GPU of weights; vLLM refuses to start" five times, once per GPU of the default fleet:
  GPUs in a row with the same reason are now named together with that reason once.
* The sizing line said "(0 on the GPU they name)" when nothing was sized that way, or nothing at all (the
  AnticipatedD/AMD_Instinct Deployment that names no model).
* ``kvlint models show Qwen2.5-7B-Instruct`` (the name a model card titles) said "config.json not found" and how to
  provide one, not that the catalogue holds it as ``Qwen/Qwen2.5-7B-Instruct``.
"""

from __future__ import annotations

import re
from pathlib import Path

from kvlint.options import Options
from kvlint.pipeline import run_check

COLLECTED = Path(__file__).resolve().parents[1] / "fixtures" / "collected"
QWEN3_32B = (
    COLLECTED
    / "kubernetes-sigs__gateway-api-inference-extension__config__manifests__vllm__gpu-grpc-deployment.yaml"
)


def _kv501(path: Path) -> str:
    result = run_check([str(path)], Options(allow_hub=False))
    (kv501,) = [d for d in result.diagnostics if d.rule == "KV501"]
    return kv501.message


def test_kv501_names_each_fleet_gpu_once_and_a_shared_reason_once() -> None:
    text = QWEN3_32B.read_text()
    assert "Qwen/Qwen3-32B" in text and "nodeSelector" not in text
    message = _kv501(QWEN3_32B)
    fails = message.split("fails on ", 1)[1]
    # every GPU the 61 GiB of weights leave no room on is named, and the reason is said once for all of them
    reasons = re.findall(r"no memory left for the KV cache after [0-9.]+ GiB/GPU of weights", fails)
    assert len(reasons) == 1, fails
    named = fails.split(" (all: ", 1)[0]
    gpus = re.split(r", | and ", named)
    assert len(gpus) >= 2 and "NVIDIA L4" in gpus and "Tesla T4" in gpus, named
    # the GPUs it fits on keep their own figures
    fits = message.split("fits on ", 1)[1].split("; ", 1)[0]
    assert fits.count("KV tokens") == len(re.findall(r"(?:NVIDIA|Tesla|AMD) [^,(]+ \(", fits)) >= 1


def test_fleet_entries_groups_only_neighbours_with_the_same_figures() -> None:
    from kvlint.rules.families.resolution import fleet_entries

    assert fleet_entries([("A", "x")]) == "A (x)"
    assert fleet_entries([("A", "x"), ("B", "x")]) == "A and B (both: x)"
    assert fleet_entries([("A", "x"), ("B", "x"), ("C", "x"), ("D", "y")]) == "A, B and C (all: x), D (y)"
    # not neighbours: each keeps its own figures, in fleet order
    assert fleet_entries([("A", "x"), ("B", "y"), ("C", "x")]) == "A (x), B (y), C (x)"
    # no figures: names alone, never merged into a "(all: )"
    assert fleet_entries([("A", ""), ("B", "")]) == "A, B"


def test_the_sizing_line_says_only_the_ways_that_sized_something() -> None:
    from kvlint.sizing import summarise

    # AnticipatedD/AMD_Instinct's Deployment names no model: nothing is sized, and the line said
    # "sized 0 of 1 serving container (0 on the GPU they name); not sized: no model in the command 1"
    amd = COLLECTED / "AnticipatedD__AMD_Instinct__manifests__vllm-deployment.yaml"
    s = summarise(run_check([str(amd)], Options(allow_hub=False)))
    assert (s.serving, s.sized) == (1, 0)
    assert s.line().startswith("sized 0 of 1 serving container; not sized: ")
    # the Qwen3-32B Deployment names no GPU: sized against the fleet only, so no "0 on the GPU they name"
    s = summarise(run_check([str(QWEN3_32B)], Options(allow_hub=False)))
    assert (s.plan, s.fleet) == (0, 1)
    assert s.line() == "sized 1 of 1 serving container (1 against the fleet)"


def test_models_show_suggests_the_catalogued_id_a_near_miss_means() -> None:
    from click.testing import CliRunner

    from kvlint.cli import main

    runner = CliRunner()
    # the repository name without its org, as a model card's title writes it: exit 2, naming the catalogued id
    r = runner.invoke(main, ["models", "show", "--offline", "Qwen2.5-7B-Instruct"])
    assert r.exit_code == 2
    m = re.search(r"did you mean (\S+)\?", r.output)
    assert m is not None, r.output
    # what it suggests is an id `models show` prints
    ok = runner.invoke(main, ["models", "show", "--offline", m.group(1)])
    assert ok.exit_code == 0 and m.group(1) in ok.output
    # a misspelt name: the nearest first
    r = runner.invoke(main, ["models", "show", "--offline", "Qwen/Qwen2.5-7B-Instrct"])
    assert r.exit_code == 2 and "did you mean Qwen/Qwen2.5-7B-Instruct or " in r.output
    # nothing close: no suggestion, the message says where kvlint looked as before
    r = runner.invoke(main, ["models", "show", "--offline", "nonexistent/model"])
    assert r.exit_code == 2 and "did you mean" not in r.output and "config.json not found" in r.output


def test_explain_kv103_states_the_block_sizes_the_memory_model_uses() -> None:
    """`kvlint explain KV103` said "block size 16 by default" while `kvlint plan` of an unpinned image (vLLM 0.34.0)
    printed "block_size=64: vLLM default from 0.34.0": the rule text states every default the plan can pick."""
    from click.testing import CliRunner

    from kvlint.cli import main
    from kvlint.memory.defaults import default_block_size
    from kvlint.memory.versions import NEWEST_VLLM, parse_version

    text = " ".join(CliRunner().invoke(main, ["explain", "KV103"]).output.split())
    releases = ["0.6.0", "0.11.0", NEWEST_VLLM]
    dense = {default_block_size(parse_version(v), False, "9.0", None) for v in releases}
    assert len({n for n, _ in dense}) > 1  # the default changed between the releases kvlint models
    for n, why in dense:
        since = re.search(r"from (\d+\.\d+\.\d+)", why)
        said = f"{n} from vLLM {since.group(1)}" if since else f"block size {n} by default"
        assert said in text, (said, text[:400])
    for cc, gpu in (("9.0", "Hopper"), ("10.0", "Blackwell")):
        n, _ = default_block_size(parse_version(NEWEST_VLLM), True, cc, None)
        assert f"{n} on {gpu}" in text


def test_a_named_path_that_exclude_leaves_out_is_said_so(tmp_path: Path, monkeypatch) -> None:
    """`kvlint check charts/sub/c.yaml` under a .kvlint.yaml with `exclude: ["charts/*"]` (the README's example)
    linted nothing and warned "no .yaml, .yml or .json files found in charts/sub/c.yaml", for a .yaml file."""
    from click.testing import CliRunner

    from kvlint.cli import main

    manifest = QWEN3_32B.read_text()
    (tmp_path / "charts" / "sub").mkdir(parents=True)
    (tmp_path / "charts" / "sub" / "c.yaml").write_text(manifest)
    (tmp_path / "generated").mkdir()
    (tmp_path / "generated" / "g.yaml").write_text(manifest)
    (tmp_path / "empty").mkdir()
    (tmp_path / "b.yaml").write_text(manifest)
    (tmp_path / ".kvlint.yaml").write_text('exclude: ["charts/*", "generated"]\n')
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def warned(*args: str) -> str:
        r = runner.invoke(main, ["check", "--offline", *args])
        assert r.exit_code == 0, r.output
        assert "0 files" in r.stdout
        return r.stderr.strip()

    said = warned("charts/sub/c.yaml")
    assert said.startswith(
        "kvlint: warning: charts/sub/c.yaml is not linted: it matches 'charts/*' (exclude in "
    )
    assert ".kvlint.yaml" in said and "no .yaml" not in said
    said = warned("charts")  # a directory whose manifests the glob leaves out
    assert said.startswith("kvlint: warning: charts is not linted: the manifest files in it match 'charts/*'")
    said = warned("generated", "empty")
    assert "generated is not linted: it matches 'generated'" in said
    assert "no .yaml, .yml or .json files found in empty" in said  # an empty directory as before
    said = warned("--exclude", "b.yaml", "b.yaml")
    assert said == "kvlint: warning: b.yaml is not linted: it matches 'b.yaml' (--exclude)"
    # without the configuration the file is linted
    r = runner.invoke(main, ["check", "--offline", "--no-config", "charts/sub/c.yaml"])
    assert "1 file" in r.stdout and not r.stderr.strip()


def test_models_show_offers_only_remedies_it_takes() -> None:
    """`kvlint models show` told a user to "provide it with --model-dir DIR", an option it did not take, to map it
    in .kvlint.yaml model_paths (which it did not read) or to annotate a workload (it reads no manifest)."""
    from click.testing import CliRunner

    from kvlint.cli import main

    models = Path(__file__).resolve().parents[1] / "fixtures" / "models"
    runner = CliRunner()
    for ref in ("nonexistent/model", "/models/llama", "Qwen2.5-7B-Instruct"):
        r = runner.invoke(main, ["models", "show", "--offline", ref])
        assert r.exit_code == 2
        said = " ".join(r.output.split())
        assert "config.json not found" in said and "--model-dir DIR holding" in said
        assert "kvlint.io/model" not in said and "model_paths" not in said, said
    # a hub id can be pulled; a path cannot, and the catalogue's ids are no suggestion for it
    r = runner.invoke(main, ["models", "show", "--offline", "nonexistent/model"])
    assert "`kvlint models pull nonexistent/model`" in r.output
    r = runner.invoke(main, ["models", "show", "--offline", "/models/llama"])
    assert "models pull" not in r.output and "did you mean" not in r.output
    # and --model-dir, which the message offers, is taken
    r = runner.invoke(main, ["models", "show", "--offline", "--model-dir", str(models), "acme/tiny-qwen3"])
    assert r.exit_code == 0, r.output
    assert "acme--tiny-qwen3/config.json" in r.output


def test_plan_offers_remedies_a_typed_command_can_use(tmp_path: Path) -> None:
    """`kvlint plan -- vllm serve /models/llama` told the user to map the path in .kvlint.yaml model_paths (plan
    does not read it) or to annotate "the workload" (a typed command has none); the --model-dir remedy it offers
    sizes the command."""
    from click.testing import CliRunner

    from kvlint.cli import main

    runner = CliRunner()
    r = runner.invoke(
        main, ["plan", "--offline", "--accelerator", "l4", "--", "vllm", "serve", "/models/llama"]
    )
    assert r.exit_code == 2 and "KV502" in r.output
    said = " ".join(r.output.split())
    assert "kvlint.io/model" not in said and "model_paths" not in said and "workload" not in said, said
    m = re.search(r"--model-dir DIR holding (\S+)/config\.json", said)
    assert m is not None, said
    (tmp_path / m.group(1)).mkdir()
    models = Path(__file__).resolve().parents[1] / "fixtures" / "models"
    (tmp_path / m.group(1) / "config.json").write_text(
        (models / "acme--tiny-qwen3" / "config.json").read_text()
    )
    args = ["plan", "--offline", "--accelerator", "l4", "--model-dir", str(tmp_path), "--"]
    r = runner.invoke(main, [*args, "vllm", "serve", "/models/llama", "--max-model-len", "4096"])
    assert r.exit_code == 0 and "KV502" not in r.output, r.output


def test_models_pull_check_counts_one_model_in_the_singular() -> None:
    """`kvlint models pull --check` of a manifest naming one bundled model said "1 models available offline"."""
    from click.testing import CliRunner

    from kvlint.cli import main

    r = CliRunner().invoke(main, ["models", "pull", "--check", str(QWEN3_32B)])
    assert r.exit_code == 0, r.output
    assert "1 model available offline (1 from kvlint's bundled catalogue)" in r.output


SGLANG_72B_ON_L4 = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: sg
spec:
  template:
    spec:
      nodeSelector:
        cloud.google.com/gke-accelerator: nvidia-l4
      containers:
      - name: sglang
        image: lmsysorg/sglang:{tag}
        command: ["python3", "-m", "sglang.launch_server", "--model-path", "Qwen/Qwen2.5-72B-Instruct"]
        resources:
          limits:
            nvidia.com/gpu: 1
"""


def test_kv703_is_not_the_cause_when_the_weights_alone_do_not_fit(tmp_path: Path) -> None:
    """lintasarta's SGLang chart (fixtures/collected/trees) with --accelerator h200, and a 72B model on one L4: KV101
    (135 GiB of weights on a 22 GiB GPU) was joined by a KV703 blaming the request-to-token table, "0.00 GiB"
    at "1 rows" on 0.5.23, whose fix was "set --max-running-requests well below 0"."""
    for tag in ("v0.4.2", "v0.5.5", "v0.5.23"):
        f = tmp_path / f"sg-{tag}.yaml"
        f.write_text(SGLANG_72B_ON_L4.format(tag=tag))
        diags = run_check([str(f)], Options(allow_hub=False)).diagnostics
        rules = {d.rule for d in diags}
        assert "KV101" in rules and "KV703" not in rules and "KV701" not in rules, (tag, rules)


def test_kv202_names_the_rule_the_report_holds_when_the_weights_do_not_fit(tmp_path: Path) -> None:
    """The same 72B model on one L4: KV202 said "SGLang has no usable KV pool whatever the context length (KV701)",
    a rule the report does not hold (KV701 leaves weights larger than the GPU to KV101)."""
    f = tmp_path / "sg.yaml"
    f.write_text(SGLANG_72B_ON_L4.format(tag="v0.5.5"))
    diags = run_check([str(f)], Options(allow_hub=False)).diagnostics
    rules = {d.rule for d in diags}
    (kv202,) = [d for d in diags if d.rule == "KV202"]
    named = set(re.findall(r"\((KV\d{3})\)", kv202.message))
    assert named and named <= rules, (named, rules, kv202.message)


def test_kv501_fix_of_a_container_that_fits_no_fleet_gpu_says_the_named_gpu_gives_the_remedies(
    tmp_path: Path,
) -> None:
    """A model that fits none of the fleet (lintasarta's SGLang chart: 164.88 GiB of weights per GPU) got the fix
    "name the GPU (h200 in these examples) ..." alone, as if naming H200 made it fit. The fix now says that it fits
    none as configured and that the findings on the named GPU say what to change; naming the example GPU gives a
    capacity error with its remedy."""
    rules = Path(__file__).resolve().parents[1] / "fixtures" / "rules"
    text = (rules / "KV501" / "vllm.yaml").read_text().split("\n---\n", 1)[0] + "\n"
    f = tmp_path / "w.yaml"
    f.write_text(text.replace("meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-405B"))
    (kv501,) = [d for d in run_check([str(f)], Options(allow_hub=False)).diagnostics if d.rule == "KV501"]
    assert "it fits none of them" in kv501.message
    fix = " ".join((kv501.fix or "").split())
    assert fix.startswith(
        "it fits none of these GPUs as configured, so once its GPU is named the capacity findings"
    )
    m = re.search(r"--accelerator (\S+) ", fix)
    assert m is not None, fix
    named = run_check([str(f)], Options(allow_hub=False, accelerator=m.group(1))).diagnostics
    capacity = [d for d in named if d.rule.startswith("KV1") and d.severity == "error"]
    assert capacity and all(d.fix for d in capacity), [(d.rule, d.fix) for d in named]
    # a container that fits somewhere keeps the plain fix
    (kv501,) = [
        d for d in run_check([str(QWEN3_32B)], Options(allow_hub=False)).diagnostics if d.rule == "KV501"
    ]
    assert (kv501.fix or "").startswith("name the GPU (")
