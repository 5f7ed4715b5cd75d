"""Init containers that fetch the model into a volume the engine then serves from a path.

A common hand-written pattern: an init container copies the model from object storage or the Hub into an
``emptyDir`` or a claim (``aws s3 sync s3://BUCKET/ORG/NAME/ /mnt/model/``, ``gsutil -m rsync -r gs://B/NAME
/models/NAME``, ``hf download ORG/NAME --local-dir /models/x``, ``git clone https://huggingface.co/ORG/NAME
/models/x``, AIBrix's ``aibrix_download --model-uri URI --local-dir /models/``), and the engine is given the
destination path (``--model /mnt/model``), which names no model. :func:`init_download` reads the init containers'
words for such a copy whose destination holds the engine's path and returns where the model comes from, which the
models stage resolves as it resolves KServe's storage URI (:func:`kvlint.models.resolve.resolve_stored_model`: by
the location's last component, an ASSUMPTION stated in the note).

Only the literal words are read: ``$(VAR)``, ``$VAR`` and ``${VAR}`` are replaced from the init container's env
as Kubernetes resolves it statically (literal values and ConfigMap keys among the inputs,
:func:`kvlint.engines.command.container_env`); a location still holding a variable is not used. Nothing is run.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping
from typing import Any

from kvlint.source import LDict

#: The longest script read for a copy (characters). [assumed] an init container's script is a few lines; a
#: longer one is not looked into (bounded work on hostile input).
MAX_SCRIPT_CHARS = 20_000

#: The most init containers looked into. [assumed] a pod has a handful.
MAX_INIT_CONTAINERS = 16

_VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_HUB_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")


def _is_hub_repo(repo_id: str) -> bool:
    """Whether ``repo_id`` is a Hub model repository id ``ORG/NAME`` as huggingface_hub accepts one
    (``huggingface_hub/utils/_validators.py`` ``validate_repo_id``: letters, digits, ``-``, ``_``, ``.``, no ``--``
    nor ``..``, at most 96 characters): a path (``/tmp/x``, ``../..``) is refused there, names no repository, and
    must not be looked up as a directory on the machine running kvlint."""
    return (
        len(repo_id) <= 96
        and _HUB_REPO.match(repo_id) is not None
        and ".." not in repo_id
        and "--" not in repo_id
    )


_HUB_URL = re.compile(r"^https?://(?:www\.)?(?:huggingface\.co|hf\.co)/([^/\s]+/[^/\s]+?)(?:\.git)?/?$")
#: ``snapshot_download(...)`` in a Python snippet, its arguments (one level of parentheses inside them)
_SNAPSHOT = re.compile(r"snapshot_download\s*\((?P<args>(?:[^()]|\([^()]{0,200}\)){0,2000})\)")
#: a ``repo_id=`` or ``local_dir=`` argument: a string literal, or the env variable the snippet reads
#: (``os.environ['X']``, ``os.environ.get('X')``, ``os.getenv('X')``)
_PY_VALUE = (
    r"(?:(?P<q1>['\"])(?P<v>[^'\"]*)(?P=q1)"
    r"|os\.(?:environ\s*\[|environ\.get\s*\(|getenv\s*\()\s*(?P<q2>['\"])(?P<env>[A-Za-z_][A-Za-z0-9_]*)(?P=q2))"
)
_KWARG = re.compile(r"\b(repo_id|local_dir)\s*=\s*" + _PY_VALUE)
#: the repository given as the first, positional, argument: ``snapshot_download("ORG/NAME", ...)``
_FIRST = re.compile(r"\s*" + _PY_VALUE)


def init_download(
    pod_spec: Any,
    ref: str,
    configmaps: Mapping[tuple[str | None, str], LDict] | None = None,
    namespace: str | None = None,
) -> tuple[str, str] | None:
    """``(location, who)`` for the engine's model path ``ref`` (absolute, inside the container) when an init
    container of ``pod_spec`` copies a model to a directory holding it: the copy's source with the part of
    ``ref`` below the destination added (an ``s3://``, ``gs://``, ``tos://`` URI, a Hub id as ``hf://ORG/NAME``),
    and ``the init container NAME`` for the note. None when no init container's words copy to ``ref``, or the
    source still holds a variable kvlint cannot resolve. ``configmaps`` and ``namespace`` resolve the init
    container's env (:func:`kvlint.engines.command.container_env`). Never raises."""
    try:
        return _init_download(pod_spec, ref, configmaps, namespace)
    except (TypeError, AttributeError, ValueError, RecursionError):
        return None


def _init_download(
    pod_spec: Any, ref: str, configmaps: Mapping[tuple[str | None, str], LDict] | None, namespace: str | None
) -> tuple[str, str] | None:
    if not isinstance(ref, str) or not ref.startswith("/") or not isinstance(pod_spec, Mapping):
        return None
    inits = pod_spec.get("initContainers")
    if not isinstance(inits, list):
        return None
    from kvlint.engines.command import container_env

    target = posixpath.normpath(ref)
    for init in inits[:MAX_INIT_CONTAINERS]:
        if not isinstance(init, Mapping):
            continue
        words = [w for key in ("command", "args") for w in _strings(init.get(key))]
        if not words or sum(len(w) for w in words) > MAX_SCRIPT_CHARS:
            continue
        env, _locs = container_env(init, configmaps, namespace)
        # (a script's lines continued with a backslash are one command line)
        text = (words[-1] if _is_shell(words) else shlex.join(words)).replace("\\\n", " ")
        # (a Python snippet is read in the words as written: a command line's quoting would hide its quotes)
        for written_src, written_dest, appends_name in _copies(text, "\n".join(words)):
            src, dest = _expand(written_src, env), _expand(written_dest, env)
            if src is None or dest is None or not dest.startswith("/"):
                continue
            location = _location(src.rstrip("/"), posixpath.normpath(dest), target, appends_name)
            if location is not None:
                return location, f"the init container {init.get('name') or '(unnamed)'}"
    return None


def _strings(v: Any) -> list[str]:
    return [str(w) for w in v] if isinstance(v, list) else []


def _is_shell(words: list[str]) -> bool:
    """``sh -c SCRIPT`` (``bash``, ``/bin/sh``, with ``-c`` among the options): the script is the last word."""
    return (
        len(words) >= 3
        and posixpath.basename(words[0]) in ("sh", "bash", "ash", "dash", "zsh")
        and any(w.startswith("-") and "c" in w for w in words[1:-1])
    )


def _expand(word: str, env: Mapping[str, str]) -> str | None:
    """``word`` with ``$(VAR)``, ``${VAR}`` and ``$VAR`` replaced from ``env``; None when one is not in it."""
    missing = False

    def sub(m: re.Match[str]) -> str:
        nonlocal missing
        name = m.group(1) or m.group(2) or m.group(3)
        if name not in env:
            missing = True
            return m.group(0)
        return env[name]

    out = _VAR.sub(sub, word)
    return None if missing or "$" in out else out


def _copies(text: str, python: str) -> list[tuple[str, str, bool]]:
    """``(source, destination, appends_name)`` of each copy the script or command ``text`` runs, and of each
    ``snapshot_download`` call in the words ``python`` (a ``python -c`` snippet, a shell script's heredoc):
    ``appends_name`` when the tool puts the source's last component under the destination (AIBrix's downloader,
    a recursive ``cp`` of a directory not ending in ``/``)."""
    out: list[tuple[str, str, bool]] = []
    for m in _SNAPSHOT.finditer(python):
        args = m.group("args")
        kw = {k.group(1): _py_value(k) for k in _KWARG.finditer(args)}
        first = _FIRST.match(args)
        if (
            "repo_id" not in kw
            and first is not None
            and not args.lstrip().startswith(("repo_id", "local_dir"))
        ):
            kw["repo_id"] = _py_value(first)
        if kw.get("repo_id") and kw.get("local_dir"):
            out.append((f"hf://{kw['repo_id']}", kw["local_dir"], False))
    for line in re.split(r"[;\n]|&&|\|\|", text):
        try:
            toks = shlex.split(line, comments=True)
        except ValueError:
            continue
        out.extend(_copy_of(toks))
    return out


def _py_value(m: re.Match[str]) -> str:
    """A matched Python argument (:data:`_PY_VALUE`) as a word: the literal, or ``${X}`` for the env variable
    ``X`` the snippet reads (resolved from the init container's env as a shell variable would be)."""
    return m.group("v") if m.group("v") is not None else "${" + m.group("env") + "}"


def _operands(toks: list[str], with_value: frozenset[str] = frozenset()) -> list[str]:
    """The words of ``toks`` that are not options (nor the values of the options in ``with_value``)."""
    out, skip = [], False
    for t in toks:
        if skip:
            skip = False
        elif t.startswith("-"):
            skip = t in with_value
        else:
            out.append(t)
    return out


def _copy_of(toks: list[str]) -> list[tuple[str, str, bool]]:
    """The copy one command line ``toks`` runs (see :func:`_copies`), if it is one kvlint reads."""
    if not toks:
        return []
    tool = posixpath.basename(toks[0])
    rest = toks[1:]
    if tool == "aws" and len(rest) >= 2 and rest[0] == "s3" and rest[1] in ("sync", "cp"):
        ops = _operands(
            rest[2:], frozenset({"--endpoint-url", "--exclude", "--include", "--region", "--profile"})
        )
        recursive = rest[1] == "sync" or "--recursive" in rest
        if len(ops) == 2 and ops[0].startswith("s3://") and recursive:
            return [(ops[0], ops[1], False)]
    if tool == "gsutil" or (tool == "gcloud" and rest[:1] == ["storage"]):
        sub = rest[1:] if tool == "gcloud" else rest
        sub = [t for t in sub if t != "-m"]
        if sub and sub[0] in ("cp", "rsync"):
            ops = _operands(sub[1:], frozenset({"-x"}))
            if len(ops) == 2 and ops[0].startswith("gs://"):
                src = ops[0]
                appends = sub[0] == "cp" and not src.endswith("/") and not src.endswith("*")
                return [(src.rstrip("*"), ops[1], appends)]
    if tool in ("huggingface-cli", "hf") and rest[:1] == ["download"]:
        ops = _operands(rest[1:], frozenset({"--local-dir", "--revision", "--cache-dir", "--token", "--repo-type",
                                             "--include", "--exclude", "--max-workers"}))  # fmt: skip
        dest = _option(rest, "--local-dir")
        if ops and _HUB_REPO.match(ops[0]) and dest:
            return [(f"hf://{ops[0]}", dest, False)]
    if tool == "git" and rest[:1] == ["clone"]:
        ops = _operands(rest[1:], frozenset({"--branch", "-b", "--depth", "--config", "-c"}))
        hub = _HUB_URL.match(ops[0]) if ops else None
        if hub and len(ops) == 2:
            return [(f"hf://{hub.group(1)}", ops[1], False)]
    if tool == "aibrix_download":
        uri, local = _option(rest, "--model-uri"), _option(rest, "--local-dir")
        if uri and local:
            return [(uri, local, True)]
    return []


def _option(toks: list[str], name: str) -> str | None:
    """The value of the option ``name`` (``--name VALUE`` or ``--name=VALUE``) in ``toks``, else None."""
    for i, t in enumerate(toks):
        if t == name and i + 1 < len(toks):
            return toks[i + 1]
        if t.startswith(name + "="):
            return t[len(name) + 1 :]
    return None


def _location(src: str, dest: str, target: str, appends_name: bool) -> str | None:
    """Where the engine's path ``target`` comes from when ``src`` is copied to ``dest``; None when ``dest`` does
    not hold ``target``, or ``src`` is a Hub download of no Hub repository id (:func:`_is_hub_repo`; a
    ``@REVISION`` after it aside)."""
    if src.startswith("hf://") and not _is_hub_repo(src[len("hf://") :].split("@", 1)[0]):
        return None
    if target == dest:
        return None if appends_name else src
    if not target.startswith(dest.rstrip("/") + "/"):
        return None
    rel = target[len(dest.rstrip("/")) + 1 :]
    name = posixpath.basename(src)
    if appends_name:
        if rel == name:
            return src
        if rel.startswith(name + "/"):
            return src + rel[len(name) :]
        return None
    return f"{src}/{rel}"
