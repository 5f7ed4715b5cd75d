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
_KWARG = re.compile(r"\b(repo_id|local_dir|revision)\s*=\s*" + _PY_VALUE)
#: the repository given as the first, positional, argument: ``snapshot_download("ORG/NAME", ...)``
_FIRST = re.compile(r"\s*" + _PY_VALUE)


def init_download(
    pod_spec: Any,
    ref: str,
    configmaps: Mapping[tuple[str | None, str], LDict] | None = None,
    namespace: str | None = None,
    container: Any = None,
) -> tuple[str, str] | None:
    """``(location, who)`` for the engine's model path ``ref`` (absolute, inside the container) when an init
    container of ``pod_spec`` copies a model to a directory holding it: the copy's source with the part of
    ``ref`` below the destination added (an ``s3://``, ``gs://``, ``tos://`` URI, a Hub id as ``hf://ORG/NAME``, or
    ``hf://ORG/NAME@REVISION`` for a revision the download names),
    and ``the init container NAME`` for the note. None when no init container's words copy to ``ref``, or the
    source still holds a variable kvlint cannot resolve. ``configmaps`` and ``namespace`` resolve the init
    container's env (:func:`kvlint.engines.command.container_env`). ``container``, the engine's container: ``ref``
    and the copy's destination are compared where they lie on the pod's volumes (each through its own container's
    ``volumeMounts``: an init container mounting the volume at ``/mnt/dl`` fills the engine's ``/models`` of the
    same volume; one writing to a path on no volume fills only its own file system, which the engine never sees);
    without it, as written. Never raises."""
    try:
        return _init_download(pod_spec, ref, configmaps, namespace, container)
    except (TypeError, AttributeError, ValueError, RecursionError):
        return None


def _init_download(
    pod_spec: Any,
    ref: str,
    configmaps: Mapping[tuple[str | None, str], LDict] | None,
    namespace: str | None,
    container: Any,
) -> tuple[str, str] | None:
    if not isinstance(ref, str) or not ref.startswith("/") or not isinstance(pod_spec, Mapping):
        return None
    inits = pod_spec.get("initContainers")
    if not isinstance(inits, list):
        return None
    from kvlint.engines.command import container_env

    target = posixpath.normpath(ref)
    on_volume = _on_volume(target, container) if isinstance(container, Mapping) else None
    if isinstance(container, Mapping) and on_volume is None:
        return None  # the engine's path is on no volume: no init container writes there
    for init in inits[:MAX_INIT_CONTAINERS]:
        if not isinstance(init, Mapping):
            continue
        words = [w for key in ("command", "args") for w in _strings(init.get(key))]
        if not words or sum(len(w) for w in words) > MAX_SCRIPT_CHARS:
            continue
        env, _locs = container_env(init, configmaps, namespace)
        # (a script's lines continued with a backslash are one command line)
        script = _shell_script(words)
        text = (script if script is not None else shlex.join(words)).replace("\\\n", " ")
        # (a Python snippet is read in the words as written: a command line's quoting would hide its quotes)
        for written_src, written_dest, appends_name in _copies(text, "\n".join(words)):
            src, dest = _expand(written_src, env), _expand(written_dest, env)
            if src is None or dest is None or not dest.startswith("/"):
                continue
            dest, here = posixpath.normpath(dest), target
            if on_volume is not None:
                # both paths as they lie on the volume: the same one, mounted wherever each container mounts it
                written = _on_volume(dest, init)
                if written is None or written[0] != on_volume[0]:
                    continue
                dest, here = written[1], on_volume[1]
            location = _location(src.rstrip("/"), dest, here, appends_name)
            if location is not None:
                return location, f"the init container {init.get('name') or '(unnamed)'}"
    return None


def _on_volume(path: str, container: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(volume name, absolute path inside the volume)`` of the absolute container path ``path``: through the
    ``volumeMounts`` entry of ``container`` with the longest ``mountPath`` holding it, its ``subPath`` prepended;
    None when no mount holds it, or the mount's ``subPathExpr`` is resolved only at run time."""
    mounts = container.get("volumeMounts")
    best: tuple[int, str, str] | None = None
    for m in mounts if isinstance(mounts, list) else ():
        if not isinstance(m, Mapping) or not isinstance(m.get("name"), str):
            continue
        mount = m.get("mountPath")
        if not isinstance(mount, str) or not mount.startswith("/"):
            continue
        mount = posixpath.normpath(mount).rstrip("/")
        if path != mount and not path.startswith(mount + "/"):
            continue
        if best is None or len(mount) > best[0]:
            if m.get("subPathExpr"):
                best = (len(mount), "", "")
                continue
            sub = m.get("subPath")
            rest = path[len(mount) :].lstrip("/")
            inside = posixpath.normpath(posixpath.join("/", sub if isinstance(sub, str) else "", rest))
            best = (len(mount), m["name"], inside)
    return (best[1], best[2]) if best is not None and best[1] else None


def _strings(v: Any) -> list[str]:
    return [str(w) for w in v] if isinstance(v, list) else []


def _shell_script(words: list[str]) -> str | None:
    """The script of ``sh -c SCRIPT [NAME ARG...]`` (``bash``, ``/bin/sh``; ``-c`` alone or in a cluster such as
    ``-ec``): the first word after the options, the words after it being the script's ``$0``, ``$1``... (POSIX
    ``sh -c``); None when ``words`` are not such a command."""
    if not words or posixpath.basename(words[0]) not in ("sh", "bash", "ash", "dash", "zsh"):
        return None
    command = False
    for i, w in enumerate(words[1:], start=1):
        if w == "--":
            return words[i + 1] if command and i + 1 < len(words) else None
        if not w.startswith("-"):
            return w if command else None
        command = command or (not w.startswith("--") and "c" in w)
    return None


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
    ``appends_name`` when the tool puts the source's last component under the destination (a recursive ``cp`` of a
    directory not ending in ``/``)."""
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
            out.append((_hub(kw["repo_id"], kw.get("revision")), kw["local_dir"], False))
    for line in re.split(r"[;\n]|&&|\|\|", text):
        try:
            toks = shlex.split(line, comments=True)
        except ValueError:
            continue
        out.extend(_copy_of(_command_words(toks)))
    return out


#: Shell words that may stand before a command on its line (``if ...; then CMD; fi``, ``exec CMD``).
_LEADING = frozenset({"then", "else", "do", "if", "elif", "while", "until", "!", "{", "(", "exec", "time", "nohup",
                      "command", "env"})  # fmt: skip
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
#: a word that ends the command's own words: a pipe, a background ``&``, a redirection (``>``, ``2>&1``, ``<f``)
_END = re.compile(r"^(?:\||&|\d*[<>])")


def _command_words(toks: list[str]) -> list[str]:
    """The words of the command a script's line ``toks`` runs: without the shell words before it (``then``,
    ``exec``, ``VAR=value`` assignments for it alone, ``timeout DURATION``), nor the pipes and redirections after
    it."""
    i = 0
    while i < len(toks):
        t = toks[i]
        if t in _LEADING or _ASSIGNMENT.match(t):
            i += 1
        elif t == "timeout":  # timeout [OPTIONS] DURATION COMMAND
            i += 1
            while i < len(toks) and toks[i].startswith("-"):
                i += 1
            i += 1
        else:
            break
    words = toks[i:]
    end = next((k for k, w in enumerate(words) if _END.match(w)), len(words))
    return words[:end]


def _hub(repo: str, revision: str | None) -> str:
    """The location of a download of the Hub repository ``repo`` at ``revision`` (a branch, tag or commit; None:
    the default branch): ``hf://ORG/NAME`` or ``hf://ORG/NAME@REVISION``."""
    return f"hf://{repo}@{revision}" if revision else f"hf://{repo}"


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
        # (the options that take a value, huggingface_hub commands/download.py; --local-dir-use-symlinks
        # {auto,True,False} in the releases that have it)
        ops = _operands(rest[1:], frozenset({"--local-dir", "--revision", "--cache-dir", "--token", "--repo-type",
                                             "--include", "--exclude", "--max-workers",
                                             "--local-dir-use-symlinks"}))  # fmt: skip
        dest = _option(rest, "--local-dir")
        if ops and _HUB_REPO.match(ops[0]) and dest:
            return [(_hub(ops[0], _option(rest, "--revision")), dest, False)]
    if tool == "git" and rest[:1] == ["clone"]:
        ops = _operands(rest[1:], frozenset({"--branch", "-b", "--depth", "--config", "-c"}))
        hub = _HUB_URL.match(ops[0]) if ops else None
        if hub and len(ops) == 2:
            return [(_hub(hub.group(1), _option(rest, "--branch") or _option(rest, "-b")), ops[1], False)]
    if tool == "aibrix_download":
        return _aibrix(rest)
    return []


def _aibrix(args: list[str]) -> list[tuple[str, str, bool]]:
    """The copy ``aibrix_download ARGS`` makes: AIBrix's downloader saves the model in ``--local-dir`` under a
    folder named ``--model-name``, else the URI's last component for object storage (``s3://``, ``tos://``,
    ``gs://``) and the ``ORG/NAME`` id itself for a Hub id (aibrix v0.3.0 python/aibrix/aibrix/downloader:
    ``base.py`` ``BaseDownloader.download_model`` joins ``local_path`` and ``model_name``; ``s3.py``/``tos.py``
    ``infer_model_name``, ``huggingface.py`` ``_parse_model_name_from_uri``). A Hub id is the model's exact id
    (``hf://ORG/NAME``)."""
    uri, local = _option(args, "--model-uri"), _option(args, "--local-dir")
    if not uri or not local:
        return []
    uri = uri.strip()
    hub = "://" not in uri and _HUB_REPO.match(uri.strip("/")) is not None
    name = _option(args, "--model-name") or (uri.strip("/") if hub else uri.strip("/").split("/")[-1])
    if not name or name.startswith("/"):
        return []
    source = f"hf://{uri.strip('/')}" if hub else uri
    return [(source, posixpath.join(local, name), False)]


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
