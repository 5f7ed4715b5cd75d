"""Tests of the rule catalogue (rules/*.yaml, rules/schema.json, kvlint/rules/catalog.py, docs/rules.md).

Data: the real rule files of this repository; DESIGN.md's rule table as copied to
fixtures/catalog/design-rule-table.md (SOURCE note inside; compared with ../shared/DESIGN.md when
that file is present).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import kvlint
from kvlint.rules import catalog as cat
from kvlint.rules.catalog import (
    RULES_DOC_URL,
    CatalogError,
    find_rules_dir,
    get_rule,
    load_catalog,
    render_rule_text,
    render_rules_markdown,
    validate_catalog,
)

#: The shared data folder beside the checkout (tests that read it skip when it is absent).
SHARED = Path(__file__).resolve().parents[1].parent / "shared"

REPO = Path(__file__).resolve().parents[1]
RULES = REPO / "rules"
DESIGN_TABLE = REPO / "fixtures" / "catalog" / "design-rule-table.md"
SHARED_DESIGN = SHARED / "DESIGN.md"
ROW = re.compile(r"^\|\s*(KV\d{3})\s*\|\s*([a-z0-9-]+)\s*\|\s*(error|warning|info)\s*\|")


#: Where fixtures/catalog/design-rule-table.md's copy of DESIGN.md's table ends (the rules added after it follow).
COPY_END = "<!-- END OF THE DESIGN.md COPY."


def design_rows(text: str, *, added: bool = False) -> dict[str, tuple[str, str]]:
    """id -> (name, severity) from the markdown rows of DESIGN.md's rule table: in the fixture, the rows of
    the copy (before :data:`COPY_END`), or with ``added`` those of the section after it."""
    rows = {}
    copy, _, rest = text.partition(COPY_END)
    for line in (rest if added else copy).splitlines():
        m = ROW.match(line)
        if m:
            rows[m.group(1)] = (m.group(2), m.group(3))
    return rows


def copy_catalog(tmp_path: Path, ids: tuple[str, ...] = ("KV103", "KV104")) -> Path:
    """A small catalogue in tmp_path: the real schema plus copies of a few real rule files."""
    d = tmp_path / "rules"
    d.mkdir()
    shutil.copy(RULES / "schema.json", d / "schema.json")
    for rule_id in ids:
        shutil.copy(RULES / f"{rule_id}.yaml", d / f"{rule_id}.yaml")
    return d


def edit_rule(path: Path, **changes: object) -> None:
    data = yaml.safe_load(path.read_text())
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))


# --------------------------------------------------------------------------------------------------
# the committed catalogue


def test_every_rule_file_validates_against_schema() -> None:
    assert validate_catalog(RULES) == []


def test_ids_unique_and_match_filenames() -> None:
    files = sorted(RULES.glob("*.yaml"))
    ids = [yaml.safe_load(p.read_text())["id"] for p in files]
    assert ids == [p.stem for p in files]
    assert len(set(ids)) == len(ids)
    catalog = load_catalog()
    assert sorted(catalog) == ids
    names = [r.name for r in catalog.values()]
    assert len(set(names)) == len(names)


def test_every_design_id_has_a_rule_with_its_name_and_severity() -> None:
    rows = design_rows(DESIGN_TABLE.read_text())
    assert (
        len(rows) == 37
    )  # KV001-002, KV101-107, KV201-208, KV301-304, KV401-407, KV501-503, KV601-604, KV701-702
    catalog = load_catalog()
    missing = sorted(set(rows) - set(catalog))
    assert not missing, f"rule files missing for {missing}"
    for rule_id, (name, severity) in rows.items():
        assert (catalog[rule_id].name, catalog[rule_id].severity) == (name, severity), rule_id


def test_the_design_table_and_the_rules_added_after_it_list_every_rule() -> None:
    """fixtures/catalog/design-rule-table.md lists every rule of the catalogue: DESIGN.md's table (copied as it
    is) and, after it, the rules added since, each with the name, severity and summary of its rules/KVnnn.yaml
    (KV108 and seven others were in neither). A new rule fails this until it is listed."""
    text = DESIGN_TABLE.read_text()
    copy, added = design_rows(text), design_rows(text, added=True)
    catalog = load_catalog()
    assert not set(copy) & set(added)
    assert sorted({**copy, **added}) == sorted(catalog), sorted(set(catalog) - set(copy) - set(added))
    for rule_id, (name, severity) in added.items():
        assert (catalog[rule_id].name, catalog[rule_id].severity) == (name, severity), rule_id
        assert f"| {catalog[rule_id].summary} |" in text, rule_id


@pytest.mark.skipif(not SHARED_DESIGN.exists(), reason="shared DESIGN.md not available")
def test_design_fixture_matches_shared_design() -> None:
    assert design_rows(DESIGN_TABLE.read_text()) == design_rows(SHARED_DESIGN.read_text())


def test_committed_docs_equal_generated() -> None:
    committed = (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == render_rules_markdown(load_catalog()), "run: python tools/gen_rules_doc.py"


def test_help_uris_point_at_existing_anchors() -> None:
    catalog = load_catalog()
    markdown = render_rules_markdown(catalog)
    headings = set(re.findall(r"^## (KV\d{3})$", markdown, flags=re.M))
    assert headings == set(catalog)
    for rule in catalog.values():
        assert rule.help_uri == f"{RULES_DOC_URL}#{rule.id.lower()}"
        assert f"(#{rule.id.lower()})" in markdown  # index row links to the section


def test_engine_source_references_are_pinned_to_a_version() -> None:
    engine_repo = re.compile(
        r"github\.com/(vllm-project/vllm|huggingface/text-generation-inference|sgl-project/sglang)/"
    )
    # source files pinned to a release tag; issue and pull-request numbers are stable identifiers already
    pinned = re.compile(r"/blob/v\d+\.\d+\.\d+(\.post\d+)?/|/(issues|pull)/\d+$")
    seen = 0
    for rule in load_catalog().values():
        for ref in rule.references:
            if engine_repo.search(ref.url):
                seen += 1
                assert pinned.search(ref.url), f"{rule.id}: {ref.url} is not pinned to a release tag"
    assert seen > 30


def test_examples_differ_from_fixed_and_parse() -> None:
    for rule in load_catalog().values():
        assert rule.example != rule.example_fixed, rule.id
        if rule.example_format == "yaml" and rule.id != "KV001":  # KV001's example is broken on purpose
            yaml.safe_load(rule.example)
        if rule.example_format == "yaml":
            yaml.safe_load(rule.example_fixed)
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load(get_rule("KV001").example)


def _pod_spec_examples() -> list[str]:
    """Rules whose example is a PodSpec fragment (a ``containers:`` list at the top), which kvlint can lint
    as a Pod; KV004's duplicate key is read from the raw text."""
    out = []
    for rule in load_catalog().values():
        try:
            doc = yaml.safe_load(rule.example)
        except yaml.YAMLError:
            continue
        if rule.id == "KV004" or (isinstance(doc, dict) and "containers" in doc):
            out.append(rule.id)
    return out


@pytest.mark.parametrize("rule_id", _pod_spec_examples())
def test_documented_example_fires_and_the_fixed_example_does_not(rule_id: str, tmp_path: Path) -> None:
    """What ``kvlint explain`` shows is true: the example, linted as a Pod, gets the rule; the fixed one does
    not (offline, bundled catalogue, the version each example's image names)."""
    import textwrap

    from kvlint.options import Options
    from kvlint.pipeline import run_check

    rule = get_rule(rule_id)

    def rules_on(fragment: str, name: str) -> set[str]:
        p = tmp_path / name
        p.write_text(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n" + textwrap.indent(fragment, "  ")
        )
        return {d.rule for d in run_check([str(p)], Options(allow_hub=False)).diagnostics}

    assert rule_id in rules_on(rule.example, "example.yaml")
    assert rule_id not in rules_on(rule.example_fixed, "fixed.yaml")


def test_documented_parameters() -> None:
    assert get_rule("KV104").defaults() == {"min_concurrency": 2}
    band = get_rule("KV105").parameter("band")
    assert band.type == "number" and isinstance(band.default, float) and 0 < band.default < 1
    bw = get_rule("KV407").parameter("min_load_bandwidth_gib_s")
    assert bw.type == "number" and isinstance(bw.default, float) and bw.default > 0
    with pytest.raises(KeyError, match="KV104 has no parameter 'nope'.*min_concurrency"):
        get_rule("KV104").parameter("nope")


def test_versions_field() -> None:
    # KV603 fires from TGI 1.0 (router: "`max_total_tokens` must be <= `max_batch_total_tokens`"), not only 3.x
    assert get_rule("KV603").version_spec("tgi") == ">=1.0.0"
    assert get_rule("KV103").version_spec("vllm") is None


# --------------------------------------------------------------------------------------------------
# lookup and rendering


def test_get_rule_is_case_insensitive_and_unknown_id_is_a_clear_keyerror() -> None:
    assert get_rule("kv103") is get_rule("KV103")
    last = max(load_catalog())  # the highest id, not a fixed one: a new rule moves it
    with pytest.raises(KeyError, match=rf"unknown rule id 'KV999'.*KV001\.\.{last}"):
        get_rule("KV999")


def test_render_rule_text_sections() -> None:
    text = render_rule_text(get_rule("KV104"))
    lines = text.splitlines()
    assert lines[0] == "KV104 low-concurrency-at-max-len (warning)"
    order = ["What it does", "Why it matters", "How to fix", "Example", "Use instead", "References"]
    positions = [lines.index(s) for s in order + ["Parameters (.kvlint.yaml)"]]
    assert positions == sorted(positions)
    assert "    min_concurrency (number, default 2; greater than 0, at most 1,000,000)" in lines
    assert lines[-1] == f"Docs: {RULES_DOC_URL}#kv104"
    assert (
        max(len(line) for line in lines if not line.lstrip().startswith(("https://", "- ", "#", "args")))
        <= 100
    )
    assert "Parameters" not in render_rule_text(get_rule("KV103"))


def test_render_rule_text_keeps_bullets() -> None:
    text = render_rule_text(get_rule("KV206"))
    assert "\n    - `--dtype`: vLLM" in text


# --------------------------------------------------------------------------------------------------
# validation really fails on broken rules


def test_schema_rejects_missing_summary(tmp_path: Path) -> None:
    d = copy_catalog(tmp_path)
    edit_rule(d / "KV103.yaml", summary=None)
    errors = validate_catalog(d)
    assert len(errors) == 1
    assert errors[0].startswith(str(d / "KV103.yaml")) and "'summary' is a required property" in errors[0]
    with pytest.raises(CatalogError, match=r"KV103\.yaml: missing required key: summary"):
        load_catalog(d)


def test_schema_rejects_bad_severity(tmp_path: Path) -> None:
    d = copy_catalog(tmp_path)
    edit_rule(d / "KV104.yaml", severity="fatal")
    errors = validate_catalog(d)
    assert any("KV104.yaml: severity: 'fatal' is not one of" in e for e in errors), errors
    with pytest.raises(CatalogError, match="KV104.yaml: key 'severity' is 'fatal'"):
        load_catalog(d)
    with pytest.raises(CatalogError, match="rule catalogue is invalid"):
        load_catalog(d, strict=True)


def test_schema_rejects_nested_errors_with_their_path(tmp_path: Path) -> None:
    d = copy_catalog(tmp_path)
    edit_rule(
        d / "KV104.yaml",
        references=[{"title": "x engine", "url": "not a url"}],
        parameters=[
            {"name": "min_concurrency", "type": "integer", "default": "2", "description": "a string default"}
        ],
        versions={"vllm": "latest"},
        engines=["vllm", "trt"],
        colour="blue",
    )
    errors = "\n".join(validate_catalog(d))
    assert "references[0].url" in errors
    assert "parameters[0].default" in errors
    assert "versions.vllm" in errors
    assert "engines[1]" in errors
    assert "'colour' was unexpected" in errors


def test_id_must_match_filename_and_names_must_be_unique(tmp_path: Path) -> None:
    d = copy_catalog(tmp_path)
    edit_rule(d / "KV104.yaml", id="KV105", name="max-model-len-exceeds-kv-capacity")
    errors = validate_catalog(d)
    assert any("does not match the file name 'KV104.yaml'" in e for e in errors), errors
    assert any("is already used by" in e for e in errors), errors
    with pytest.raises(CatalogError, match="KV104.yaml: key 'id' is 'KV105'"):
        load_catalog(d)


def test_broken_yaml_names_file_and_line(tmp_path: Path) -> None:
    d = copy_catalog(tmp_path)
    (d / "KV104.yaml").write_text("id: KV104\nname: [unclosed\n")
    errors = validate_catalog(d)
    assert len(errors) == 1 and re.search(r"KV104\.yaml:\d+:\d+: invalid YAML", errors[0]), errors
    with pytest.raises(CatalogError, match=r"KV104\.yaml:\d+:\d+: invalid YAML"):
        load_catalog(d)


def test_empty_directory_is_an_error(tmp_path: Path) -> None:
    d = tmp_path / "rules"
    d.mkdir()
    shutil.copy(RULES / "schema.json", d / "schema.json")
    assert validate_catalog(d) == [f"{d}: no rule files (KVnnn.yaml) found"]
    with pytest.raises(CatalogError, match="no rule files"):
        load_catalog(d)


# --------------------------------------------------------------------------------------------------
# locating the catalogue, start-up cost, packaging, generator


def test_find_rules_dir_in_checkout() -> None:
    assert find_rules_dir() == RULES


def test_find_rules_dir_when_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site-packages"
    pkg_rules = copy_catalog(tmp_path)
    (site / "kvlint").mkdir(parents=True)
    monkeypatch.setattr(kvlint, "__file__", str(site / "kvlint" / "__init__.py"))
    asked = []

    def files(name: str) -> Path:
        asked.append(name)
        return pkg_rules

    monkeypatch.setattr(cat.resources, "files", files)
    assert find_rules_dir() == pkg_rules
    assert asked == ["kvlint._rules"]
    assert sorted(load_catalog(find_rules_dir())) == ["KV103", "KV104"]


def test_pyproject_ships_rules_as_kvlint_rules_package() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    setuptools_cfg = pyproject["tool"]["setuptools"]
    assert setuptools_cfg["package-dir"]["kvlint._rules"] == "rules"
    assert "kvlint._rules" in setuptools_cfg["packages"]
    data = setuptools_cfg["package-data"]["kvlint._rules"]
    assert "*.yaml" in data and "*.json" in data


def test_loading_does_not_import_jsonschema() -> None:
    code = (
        "import sys; from kvlint.rules.catalog import load_catalog; "
        "assert len(load_catalog()) >= 37; assert 'jsonschema' not in sys.modules, 'jsonschema imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


def test_generator_check_mode(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "tools"))
    try:
        import gen_rules_doc
    finally:
        sys.path.remove(str(REPO / "tools"))
    out = tmp_path / "rules.md"
    assert gen_rules_doc.main(["--check", "--output", str(out)]) == 1  # missing
    assert gen_rules_doc.main(["--output", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == (REPO / "docs" / "rules.md").read_text(encoding="utf-8")
    assert gen_rules_doc.main(["--check", "--output", str(out)]) == 0
    out.write_text(out.read_text() + "edited by hand\n")
    assert gen_rules_doc.main(["--check", "--output", str(out)]) == 1


def test_kv103_figures_quoted_in_the_catalogue_are_what_kvlint_computes(tmp_path: Path) -> None:
    """KV103's fix text and example quote kvlint's own figures for its example (Llama-3.1-8B on an L4, vLLM
    0.11.0): the available KV GiB, vLLM's estimate of the largest length and kvlint's proposal."""
    import textwrap

    from kvlint.options import Options
    from kvlint.pipeline import run_check

    rule = get_rule("KV103")
    p = tmp_path / "example.yaml"
    p.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nspec:\n" + textwrap.indent(rule.example, "  ")
    )
    (f,) = [d for d in run_check([str(p)], Options(allow_hub=False)).diagnostics if d.rule == "KV103"]
    available = re.search(r"about (\d+\.\d+) GiB available", rule.example)
    estimate = re.search(r"own estimate is ([\d,]+) tokens and kvlint proposes ([\d,]+)", rule.fix)
    assert available and estimate
    assert f"has about {available.group(1)} GiB" in f.message
    assert f"--max-model-len {estimate.group(2).replace(',', '')} fits" in (f.fix or "")
    assert f"estimate of the maximum is {estimate.group(1)}" in (f.fix or "")
