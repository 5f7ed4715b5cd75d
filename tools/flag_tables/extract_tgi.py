"""Generate ``kvlint/engines/tgi_flags_data.py``: TGI launcher options per release.

Reads ``launcher/src/main.rs`` at every release tag ``vX.Y.Z`` of a clone of
https://github.com/huggingface/text-generation-inference (as text, with ``git show``; nothing is built) and
collects the fields of ``struct Args`` -- the clap ``#[derive(Parser)]`` struct whose fields are the launcher's
options: ``--<field in kebab case>`` and, when the attribute says ``env``, the environment variable ``<FIELD>``;
``short`` adds ``-<first letter>``. Usage::

    python tools/flag_tables/extract_tgi.py GIT_DIR kvlint/engines/tgi_flags_data.py

Habana's fork https://github.com/huggingface/tgi-gaudi carries TGI's own tags up to v1.2.0 and tags its releases
(``ghcr.io/huggingface/tgi-gaudi:<release>``) in the same ``vX.Y.Z`` form, some with the names of TGI releases at
other commits (its v2.0.0 is not TGI's). ``--fork-of UPSTREAM_GIT_DIR`` reads only the fork's own tags, those
whose commit is not the upstream tag's of that name::

    python tools/flag_tables/extract_tgi.py --fork-of TGI_GIT_DIR TGI_GAUDI_GIT_DIR \
        kvlint/engines/tgi_gaudi_flags_data.py

then ``ruff format`` the result. Run by hand when a TGI release should be covered; nothing here runs in tests.
"""

from __future__ import annotations

import re
import subprocess
import sys

_TAG = re.compile(r"v(\d+)\.(\d+)\.(\d+)")
_FIELD = re.compile(r"^\s*(?:pub\s+)?([a-z_][a-z0-9_]*)\s*:\s*(.+?),?\s*$")
_ATTR = re.compile(r"^\s*#\[(?:clap|arg)\((.*)\)\]\s*$")


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(
        ["git", "--git-dir", git_dir, *args], check=True, capture_output=True, text=True
    ).stdout


def args_fields(source: str) -> dict[str, dict[str, object]]:
    """``field -> {"type": rust type, "env": bool, "short": bool}`` of ``struct Args`` in ``source``."""
    lines = source.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("struct Args"))
    except StopIteration:
        raise SystemExit("no `struct Args` in launcher/src/main.rs") from None
    fields: dict[str, dict[str, object]] = {}
    attrs: list[str] = []
    for line in lines[start + 1 :]:
        if line.startswith("}"):
            break
        s = line.strip()
        if not s or s.startswith("//"):
            continue
        m = _ATTR.match(line)
        if m:
            attrs.append(m.group(1))
            continue
        if s.startswith("#["):
            raise SystemExit(f"unread attribute line: {line!r}")
        m = _FIELD.match(line)
        if not m:
            raise SystemExit(f"unread line in struct Args: {line!r}")
        words = [w.strip() for a in attrs for w in a.split(",")]
        if any(w.startswith(("long =", "long=", "short =", "short=", "alias", "name")) for w in words):
            raise SystemExit(f"option renamed by its attribute, not handled: {attrs!r} {line!r}")
        if "long" not in words:
            raise SystemExit(f"field without `long`: {line!r}")
        fields[m.group(1)] = {"type": m.group(2), "env": "env" in words, "short": "short" in words}
        attrs = []
    return fields


def kind(rust_type: str, action: bool) -> str:
    t = rust_type
    inner = re.fullmatch(r"Option<(.+)>", t)
    t = inner.group(1) if inner else t
    if t == "bool":
        return "boolvalue" if inner else "switch"
    if t in ("usize", "u64", "u32", "u16", "u8"):
        return "int"
    if t in ("f32", "f64"):
        return "float"
    return "str"


def _tag_commit(git_dir: str, tag: str) -> str | None:
    try:
        return _git(git_dir, "rev-parse", "--verify", "--quiet", f"{tag}^{{commit}}").strip() or None
    except subprocess.CalledProcessError:
        return None


def main(git_dir: str, out: str, upstream: str | None = None) -> None:
    tags = sorted(
        (tuple(int(g) for g in m.groups()), t)
        for t in _git(git_dir, "tag").split()
        if (m := _TAG.fullmatch(t))
    )
    if upstream is not None:
        # the fork's own releases only: a tag at the upstream tag's commit is TGI's release, read in TGI's table
        tags = [(v, t) for v, t in tags if _tag_commit(git_dir, t) != _tag_commit(upstream, t)]
    repo_url = (
        "https://github.com/huggingface/tgi-gaudi (its own release tags, not TGI's)"
        if upstream is not None
        else "https://github.com/huggingface/text-generation-inference"
    )
    title = "tgi-gaudi (Habana's TGI fork)" if upstream is not None else "TGI"
    versions: list[str] = []
    commits: list[str] = []
    per: list[dict[str, dict[str, object]]] = []
    for _v, tag in tags:
        try:
            src = _git(git_dir, "show", f"{tag}:launcher/src/main.rs")
        except subprocess.CalledProcessError:
            continue  # before the launcher
        versions.append(tag[1:])
        commits.append(_git(git_dir, "rev-parse", f"{tag}^{{commit}}").strip()[:8])
        per.append(args_fields(src))
    names = sorted({f for fields in per for f in fields})
    masks = {f: sum(1 << i for i, fields in enumerate(per) if f in fields) for f in names}
    kinds = {}
    for f in names:
        last = next(fields[f] for fields in reversed(per) if f in fields)
        kinds[f] = kind(str(last["type"]), False)
    no_env = sorted({f for fields in per for f, d in fields.items() if not d["env"]})
    with open(out, "w", encoding="utf-8") as fh:
        w = fh.write
        w(
            f'"""{title} launcher options per release, generated from the launcher source (do not edit by hand).\n\n'
        )
        w(
            "SOURCE: the fields of ``struct Args`` (clap ``#[derive(Parser)]``) in ``launcher/src/main.rs`` of\n"
        )
        w(f"{repo_url} at each release tag in :data:`VERSIONS`\n")
        w(
            "(commits in :data:`COMMITS`), read as text. Generator: ``tools/flag_tables/extract_tgi.py``. Each field\n"
        )
        w(
            "is the option ``--<field in kebab case>`` and, unless listed in :data:`NO_ENV`, the environment variable\n"
        )
        w("``<FIELD>``; clap stops the launcher at an option its release does not declare and ignores an\n")
        w('environment variable no field reads.\n"""\n\n')
        w("from __future__ import annotations\n\n")
        w(f"#: {title} releases read, oldest first; bit i of a field's mask means present in VERSIONS[i].\n")
        w("VERSIONS: tuple[str, ...] = (\n" + "".join(f'    "{v}",\n' for v in versions) + ")\n\n")
        w("#: The tag's commit (abbreviated) for each of :data:`VERSIONS`.\n")
        w("COMMITS: tuple[str, ...] = (\n" + "".join(f'    "{c}",\n' for c in commits) + ")\n\n")
        w("#: ``Args`` field -> release mask (bit i = VERSIONS[i]).\n")
        w(
            "FIELD_MASKS: dict[str, int] = {\n"
            + "".join(f'    "{f}": {masks[f]:#x},\n' for f in names)
            + "}\n\n"
        )
        w("#: ``Args`` field -> kind of its newest declaration (int | float | str | switch | boolvalue).\n")
        w(
            "FIELD_KINDS: dict[str, str] = {\n"
            + "".join(f'    "{f}": "{kinds[f]}",\n' for f in names)
            + "}\n\n"
        )
        w("#: Fields declared without ``env`` (no environment variable reads them).\n")
        w("NO_ENV: frozenset[str] = frozenset({" + ", ".join(f'"{f}"' for f in no_env) + "})\n")


if __name__ == "__main__":
    if sys.argv[1] == "--fork-of":
        main(sys.argv[3], sys.argv[4], upstream=sys.argv[2])
    else:
        main(sys.argv[1], sys.argv[2])
