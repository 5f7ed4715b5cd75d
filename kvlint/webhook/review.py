"""AdmissionReview in, AdmissionReview out: the webhook's logic, free of any web framework.

The API server POSTs an ``admission.k8s.io/v1`` ``AdmissionReview`` whose ``request`` carries the object
under review; the webhook answers with the same ``apiVersion``/``kind`` and a ``response`` whose ``uid``
echoes ``request.uid`` (Kubernetes docs, "Dynamic Admission Control", section "Response"). This module:

* :func:`parse_review` validates the envelope (clear :class:`ReviewError` -> HTTP 400, never a crash);
* :func:`skip_reason` says when a review needs no linting, so Kubernetes' own controllers are never
  denied: DELETE/CONNECT; subresources such as ``status``/``scale``; exempt namespaces; objects whose
  controlling owner is a kind kvlint reviews itself (:data:`REVIEWED_KINDS`: the ReplicaSet a Deployment
  rolls out, the Job a CronJob starts, the Pods of any of them) when a trusted controller identity writes
  them and the owner is not the object itself (:func:`owner_exemption`); UPDATEs that change nothing
  kvlint reads (only ``status``, ``replicas``, ``paused``, ``suspend``, or metadata other than the
  annotations kvlint reads and the labels: a scale-down, a finalizer, ``kubectl rollout restart``, ``kubectl
  rollout pause``);
* :func:`lint_review` runs the same pipeline as ``kvlint check`` (:func:`kvlint.pipeline.run_documents`)
  on the object, offline (``allow_hub=False``: no network call on the request path; no model path looked
  up on the server's own disk);
* :func:`build_response` turns diagnostics into a verdict for the configured mode, and
  :func:`failure_response` answers when the time budget ran out or kvlint failed (fail open or closed).

Limits of what an admission response may carry, from ``k8s.io/api/admission/v1/types.go``
(``AdmissionResponse.Warnings``: "Limit warnings to 120 characters if possible. Warnings over 256
characters and large numbers of warnings may be truncated.") and the Kubernetes docs page "Dynamic
Admission Control" (individual warnings over 256 characters may be truncated by the API server; once
more than 4096 characters of warnings are added from all sources, further ones are ignored). kvlint
keeps each warning at most :data:`MAX_WARNING_CHARS` and its warnings together at most
:data:`MAX_WARNINGS_TOTAL_CHARS`, half the shared 4096 so other webhooks keep room.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from kvlint.kinds import reviewed_kinds, reviewed_versions
from kvlint.report.escape import printable
from kvlint.statement import clip, squeeze
from kvlint.types import Diagnostic, is_internal_error
from kvlint.webhook.request_options import check_review_size, webhook_options

Mode = Literal["enforce", "warn", "audit"]
FailureMode = Literal["open", "closed"]

MODES: tuple[str, ...] = ("enforce", "warn", "audit")
FAILURE_MODES: tuple[str, ...] = ("open", "closed")

#: API versions of AdmissionReview answered (the response always repeats the request's).
API_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
#: The operations an AdmissionReview request names (k8s.io/api admission/v1 types.go, ``Operation``: Create,
#: Update, Delete, Connect, spelt in upper case on the wire). Any other is refused with HTTP 400
#: (:func:`parse_review`), so the API server applies the webhook's failurePolicy to it as to any failed call:
#: answering ``allowed`` would admit, unreviewed, whatever a client or a later API server sent under it.
ADMISSION_OPERATIONS = ("CREATE", "UPDATE", "DELETE", "CONNECT")

#: One warning's maximum length in characters (the API server may truncate above 256).
MAX_WARNING_CHARS = 256
#: What joins a finding's message and its fix in one admission warning (:func:`format_warning`).
WARNING_FIX_SEPARATOR = "; fix: "
#: All of kvlint's warnings of one response together, in characters (API server ignores beyond 4096).
MAX_WARNINGS_TOTAL_CHARS = 2048
#: Deny message cap in characters; the full report is one ``kvlint check`` away.
MAX_MESSAGE_CHARS = 4096
#: Default request body cap: etcd stores objects up to 1.5 MiB (its ``--max-request-bytes`` default), and
#: an UPDATE review carries ``object`` and ``oldObject`` plus the envelope.
DEFAULT_MAX_REQUEST_BYTES = 3 * 2**20

#: The kinds kvlint reviews, ``(API group, kind) -> (resource, scope)``: the kinds ``kvlint check`` reads a pod
#: template from (:data:`kvlint.kinds.WORKLOAD_KINDS`, the one list the CLI, this module and the Helm chart
#: under ``deploy/`` share) but those it says the webhook must not review. The webhook configuration sends
#: these, and an object whose controlling owner is one of them is not reviewed again (its owner was).
REVIEWED_KINDS: dict[tuple[str, str], tuple[str, str]] = reviewed_kinds()

#: ``(API group, kind) -> versions`` the reviewed kinds are served in (:data:`kvlint.kinds.SERVED_VERSIONS`,
#: read in each operator's CustomResourceDefinitions): an owner reference of another version exempts nothing.
REVIEWED_VERSIONS: dict[tuple[str, str], tuple[str, ...]] = reviewed_versions()

#: The built-in controllers of ``kube-controller-manager`` that create or update objects of a reviewed kind under
#: an owner of a reviewed kind: the deployment controller (a Deployment's ReplicaSets), the ReplicaSet,
#: ReplicationController, StatefulSet, DaemonSet and Job controllers (their Pods) and the CronJob controller
#: (its Jobs). Each runs as the service account ``kube-system:<name>`` when the controller manager runs with
#: ``--use-service-account-credentials`` (kubernetes ``plugin/pkg/auth/authorizer/rbac/bootstrappolicy/
#: controller_policy.go``, ``buildControllerRoles``: the role ``system:controller:<name>`` bound to the service
#: account ``<name>`` in ``kube-system``; these seven are the roles that may create, update or patch pods,
#: replicasets or jobs).
BUILTIN_CONTROLLERS: tuple[str, ...] = (
    "cronjob-controller",
    "daemon-set-controller",
    "deployment-controller",
    "job-controller",
    "replicaset-controller",
    "replication-controller",
    "statefulset-controller",
)

#: Who may write an object that its controlling owner's review exempts, by default (``request.userInfo.username``
#: patterns, :func:`trusted_controller`): the controller manager's own identity (its controllers without
#: ``--use-service-account-credentials``) and the service accounts of :data:`BUILTIN_CONTROLLERS` in
#: ``kube-system``, and no one else. Every service account (``system:serviceaccount:*``) was trusted before, and
#: anyone who can create a Pod can run it as a service account of its namespace and write with its token, so
#: a forged ``ownerReferences`` entry was exempt. An operator's service account (KServe, LWS, KubeRay, Dynamo...)
#: is trusted only when the admin adds it (``--trusted-controller``; the chart's ``trustedOperators``); until
#: then the objects the operator writes under a reviewed owner are reviewed like any other.
DEFAULT_TRUSTED_CONTROLLERS: tuple[str, ...] = (
    "system:kube-controller-manager",
    *(f"system:serviceaccount:kube-system:{name}" for name in BUILTIN_CONTROLLERS),
)

#: Keys whose value never changes what kvlint reports for one pod: the scale of a workload (HPA, KEDA and
#: the deployment controller write them; but a raised count is reviewed, :func:`counts_not_lowered`, as KV106 counts
#: the replicas sharing a time-sliced GPU), the status, and whether it runs at all: a Deployment's ``paused``
#: (``kubectl rollout pause``/``resume``) and the ``suspend`` of a Job, CronJob, JobSet, RayCluster or RayJob
#: (``kubectl patch cronjob --suspend``, Kueue admitting a Job). No reader or rule reads the last two; an
#: object kvlint finds an error in (created before kvlint, in ``warn`` or ``audit`` mode, admitted unchecked
#: past its budget) could not be paused or suspended, nor a Kueue-queued Job started, in ``enforce``.
_SCALE_KEYS = frozenset({"replicas", "minReplicas", "maxReplicas", "status", "paused", "suspend"})
#: The exception: a KubeRay worker group's pod count is the GPUs a Ray placement group spans (KV403: tensor x
#: pipeline parallel bundles on the group's pods, :func:`kvlint.workloads.rayserve._ray_pod`), read from
#: ``maxReplicas``, else from ``replicas`` when the Ray autoscaler is off (``enableInTreeAutoscaling`` not true;
#: with it on, the autoscaler writes ``replicas`` and kvlint does not read it). An UPDATE of a RayService that
#: took its GPU group from two pods to one was admitted unreviewed though the engine no longer fits it.
_RAY_GROUPS = "workerGroupSpecs"

Pipeline = Callable[[Any, Any], Any]
"""``(LoadResult, Options) -> CheckResult``; :func:`kvlint.pipeline.run_documents` by default."""


class ReviewError(Exception):
    """A request the webhook cannot answer as an admission review.

    ``status`` is the HTTP status to answer with (400 malformed, 413 too large, 415 not JSON);
    ``str(exc)`` the human-readable reason, returned in the body as ``{"error": ...}``.
    """

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class WebhookSettings:
    """What the admin configured (``kvlint webhook serve`` flags, ``--config`` .kvlint.yaml).

    Attributes:
        mode: ``enforce`` (deny on error findings), ``warn`` (never deny; errors become warnings),
            ``audit`` (never deny, no warnings; verdicts only in logs, metrics and audit annotations).
        failure_mode: what to answer when a review cannot be completed in ``timeout_seconds`` or kvlint
            fails internally: ``open`` allows with a warning, ``closed`` denies.
        timeout_seconds: per-review time budget in seconds (waiting for a free worker included),
            enforced: a worker still linting when it runs out is killed and replaced; keep it below the
            ValidatingWebhookConfiguration's ``timeoutSeconds``.
        max_request_bytes: request bodies above this many bytes are not decoded: answered per
            ``failure_mode`` when their head names the request's ``uid`` (read to their end unheld, up to four
            times this), HTTP 413 otherwise.
        workers: review worker processes (reviews linted at once).
        exempt_namespaces: namespaces never linted (defence in depth behind ``namespaceSelector``).
        trusted_controllers: ``request.userInfo.username`` patterns (an exact name, or a prefix ending in
            ``*``) whose writes of an object controlled by a reviewed owner are exempt
            (:func:`owner_exemption`); empty: every object is reviewed whatever its owner.
        options: pipeline options; :func:`webhook_options` forces ``allow_hub=False`` and
            ``allow_local_paths=False``. Their ``max_review_size`` (``--max-review-size``, pod templates and
            containers per object) must be within ``MIN_REVIEW_SIZE`` .. ``MAX_REVIEW_SIZE_LIMIT`` of
            :mod:`kvlint.webhook.request_options`, or None (no cap), else ValueError.
        worker_memory_bytes: address-space cap of each review worker process (None: no cap).
        header_timeout_seconds: a request's headers must arrive within this many seconds of the connection
            (or its previous response); slower connections are closed.
        body_timeout_seconds: a request's body must arrive within this many seconds of its headers
            (HTTP 408 otherwise).
        max_inflight: reviews decoded and linted at once in the server process (0: the workers plus 2);
            the others wait, their bodies read, until a slot frees or their budget runs out (then answered
            per ``failure_mode``, undecoded, with the ``uid`` read from the body's head; HTTP 503 when it has
            none, and the API server applies ``failurePolicy``). Decoding a 3 MiB body of small JSON values takes
            ~100 MiB, so this bounds the server's memory. A slot is taken once the body is in, so a client
            sending its body slowly holds none; the bodies being read or waiting for a slot hold at most
            :attr:`body_buffer_bytes` in all (HTTP 503 beyond).
        allow_existing_violations: in ``enforce`` mode, an UPDATE is denied only for error findings its
            ``oldObject`` did not already have (matched by :func:`~kvlint.fingerprint.identity`: rule,
            workload, container, engine setting; never by position or figures), the old object linted
            with the same options within what is left of the same budget; the errors it already had are
            sent as warnings marked ``(error, pre-existing)``. As Kyverno's ``allowExistingViolations``
            (default true since Kyverno 1.13): an object created before kvlint, or in ``warn`` mode, can
            still be changed (an env var, a label in the template) without fixing it first. False: any
            error denies, as on CREATE. When the old object's lint does not finish within the budget the
            UPDATE is judged as if it had no findings (every error denies).
    """

    mode: Mode = "enforce"
    failure_mode: FailureMode = "open"
    timeout_seconds: float = 2.0
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES
    workers: int = 2
    exempt_namespaces: tuple[str, ...] = ("kube-system",)
    trusted_controllers: tuple[str, ...] = DEFAULT_TRUSTED_CONTROLLERS
    options: Any = None
    worker_memory_bytes: int | None = 512 * 2**20
    header_timeout_seconds: float = 5.0
    body_timeout_seconds: float = 10.0
    max_inflight: int = 0
    allow_existing_violations: bool = True

    @property
    def inflight_slots(self) -> int:
        """:attr:`max_inflight`, or the workers plus 2 when it is 0."""
        return self.max_inflight or self.workers + 2

    @property
    def body_buffer_bytes(self) -> int:
        """Bytes of request bodies the server holds at once before they are decoded (being read, or read and
        waiting for an in-flight slot): four times the bodies the slots decode at once
        (:attr:`inflight_slots` x :attr:`max_request_bytes`; 48 MiB by default, half a decoded 3 MiB body)."""
        return 4 * self.inflight_slots * self.max_request_bytes

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if self.failure_mode not in FAILURE_MODES:
            raise ValueError(f"failure mode must be open or closed, not {self.failure_mode!r}")
        if not self.timeout_seconds > 0:
            raise ValueError(f"timeout must be > 0 seconds, not {self.timeout_seconds}")
        if self.max_request_bytes < 1024:
            raise ValueError(f"max request size must be at least 1024 bytes, not {self.max_request_bytes}")
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, not {self.workers}")
        if self.max_inflight < 0:
            raise ValueError(f"max in-flight reviews must be >= 0 (0: workers + 2), not {self.max_inflight}")
        if not self.header_timeout_seconds > 0 or not self.body_timeout_seconds > 0:
            raise ValueError("header and body timeouts must be > 0 seconds")
        if self.worker_memory_bytes and self.worker_memory_bytes < 128 * 2**20:
            # a negative cap too: setrlimit refuses it in each worker, which then ran with none, while the start-up
            # check of the container's memory limit (kvlint.webhook.server.memory_bound) counted it as given
            raise ValueError(
                f"worker memory must be at least 128 MiB (0: no cap), not {self.worker_memory_bytes} bytes"
            )
        if self.options is None:
            object.__setattr__(self, "options", webhook_options())
        check_review_size(getattr(self.options, "max_review_size", None))


def exemptions_enforceable(options: Any) -> bool:
    """Whether these pipeline options can switch ``kvlint.io/ignore`` annotations off (the pipeline
    knows ``exemptions_allowed``)."""
    return hasattr(options, "exemptions_allowed")


@dataclass
class Review:
    """The parts of an AdmissionReview request kvlint uses.

    ``raw_request`` is the request mapping as sent; ``object``/``old_object`` the objects (None for
    DELETE/CONNECT or when absent); ``kind`` the object's kind (``request.kind.kind``); ``username`` who sent
    it (``request.userInfo.username``).
    """

    api_version: str
    uid: str
    operation: str
    kind: str
    namespace: str | None
    name: str
    sub_resource: str | None
    dry_run: bool
    object: dict[str, Any] | None
    old_object: dict[str, Any] | None
    raw_request: dict[str, Any] = field(repr=False, default_factory=dict)
    #: ``request.userInfo.username``: who sent the request ("" when not given).
    username: str = ""

    @property
    def ref(self) -> str:
        """``Kind/namespace/name`` of the object under review (parts omitted when empty)."""
        return "/".join(x for x in (self.kind, self.namespace, self.name) if x)


#: How much of a body is searched for the request's ``uid`` and ``apiVersion`` (the request's own fields come
#: first) by :func:`review_from_head`.
_RAW_HEAD_CHARS = 64 * 1024

#: The ``uid`` of a request as :func:`review_from_head` reads it (a UUID from the API server); another one is not
#: read from a head (the review is then not answered before it is decoded).
_HEAD_UID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
#: Text that holds no bracket outside a string (strings whole), and a run of brackets: what a skipped value's
#: nesting is counted over, a run at a time.
_NON_BRACKETS = re.compile(r'(?:[^"\[\]{}]+|"[^"\\]*(?:\\.[^"\\]*)*")*', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]+")
#: White space, as JSON has it.
_SPACE = re.compile(r"[ \t\n\r]*")


class _Cut(Exception):
    """The head ends (or stops being JSON) where the scan is."""


def _space(text: str, i: int) -> int:
    return _SPACE.match(text, i).end()  # type: ignore[union-attr]


def _string_at(text: str, i: int) -> tuple[str, int]:
    """The JSON string whose opening quote is ``text[i]`` and the index after it; _Cut when it does not end in
    ``text`` or is not a JSON string."""
    try:
        return json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined,no-any-return]
    except (ValueError, IndexError):
        raise _Cut from None


#: The C scanner of Python's JSON decoder, called on one value (it builds the value; :func:`_skip_value`).
_scan_value = (json.scanner.c_make_scanner or json.scanner.py_make_scanner)(json.JSONDecoder())  # type: ignore[attr-defined]
#: How far past a value's start its nesting is counted when it nests too deeply for the decoder
#: (:func:`_skip_nested`); past it the scan ends there.
_NESTED_SCAN_CHARS = 4096


def _skip_value(text: str, i: int) -> int:
    """The index after the JSON value at ``text[i]`` (white space skipped first); _Cut when it does not end in
    ``text`` or is not JSON. Read by the JSON decoder's C scanner (a 60 KiB object in a fraction of a millisecond);
    a value nesting too deeply for it has its nesting counted (:func:`_skip_nested`)."""
    i = _space(text, i)
    if i >= len(text):
        raise _Cut
    try:
        return _scan_value(text, i)[1]  # type: ignore[no-any-return]
    except (StopIteration, ValueError):
        raise _Cut from None
    except RecursionError:
        return _skip_nested(text, i, min(len(text), i + _NESTED_SCAN_CHARS))


def _skip_nested(text: str, i: int, end: int) -> int:
    """The index after the array or object at ``text[i]``, its nesting counted (not recursed into) a run of
    brackets at a time, within ``text[:end]``; _Cut when it does not close there."""
    text = text[:end]
    depth = 0
    while True:
        i = _NON_BRACKETS.match(text, i).end()  # type: ignore[union-attr]
        run = _BRACKETS.match(text, i)
        if run is None:
            raise _Cut  # the head ends (or an unclosed string does)
        brackets = run.group()
        closes = brackets.count("]") + brackets.count("}")
        if closes == 0 or depth - closes > 0:  # the run does not close the value: taken whole
            depth += len(brackets) - 2 * closes
            i = run.end()
            continue
        for c in brackets:
            i += 1
            depth += 1 if c == "{" or c == "[" else -1
            if depth == 0:
                return i


def _walk(text: str, i: int, visit: Callable[[str, int], int]) -> int:
    """Visit each member of the JSON object whose ``{`` is ``text[i]``: ``visit(key, index of its value)`` returns
    the index after the value. Returns the index after the object; _Cut where ``text`` ends or is not JSON."""
    n = len(text)
    i += 1
    while True:
        i = _space(text, i)
        if i >= n:
            raise _Cut
        c = text[i]
        if c == "}":
            return i + 1
        if c == ",":
            i += 1
            continue
        if c != '"':
            raise _Cut
        key, i = _string_at(text, i)
        i = _space(text, i)
        if i >= n or text[i] != ":":
            raise _Cut
        i = visit(key, i + 1)


def head_names(head: str) -> tuple[str | None, str | None]:
    """The ``request.uid`` and the top-level ``apiVersion`` of an AdmissionReview as decoding its JSON gives them
    (of a key given twice, the last, as ``json.loads``, so :func:`parse_review`, and the API server's Go decoder
    take it), read from ``head``, the first part of a body, without decoding it: a scan of the top-level object
    and of its ``request`` object, other values skipped (their nesting counted, not recursed into); where
    ``head`` ends the scan ends, with what it found so far. A value skipped is read by the JSON decoder's C
    scanner: a head of 64 KiB costs at most about what decoding 64 KiB costs, which the event loop already spends
    on a small body when no worker is free (``kvlint.webhook.app.LOOP_DECODE_BYTES``). None for a name not found, not a string, or (a uid)
    not of the characters of :data:`_HEAD_UID`. The first ``"uid"`` anywhere in the head was taken before:
    another one than :func:`parse_review`'s when ``request.uid`` was given twice (the answer from the head named
    the first, the answer from the decoded body the second), or when another ``uid`` (an object's, a user's)
    came before it."""
    found: list[str | None] = [None, None]

    def in_request(key: str, at: int) -> int:
        end = _skip_value(head, at)
        if key == "uid":
            at = _space(head, at)
            uid = _string_at(head, at)[0] if head.startswith('"', at) else None
            found[0] = uid if uid is not None and _HEAD_UID.fullmatch(uid) else None
        return end

    def top(key: str, at: int) -> int:
        if key == "request":
            found[0] = None  # a later request object replaces an earlier one whole
            at = _space(head, at)
            if head.startswith("{", at):
                return _walk(head, at, in_request)
            return _skip_value(head, at)
        end = _skip_value(head, at)
        if key == "apiVersion":
            at = _space(head, at)
            found[1] = _string_at(head, at)[0] if head.startswith('"', at) else None
        return end

    start = _space(head, 0)
    if head.startswith("{", start):
        try:
            _walk(head, start, top)
        except _Cut:
            pass
    return found[0], found[1]


class ReviewTooDeep(Exception):
    """The request nests more deeply than the server's JSON decoder or its own code can follow: answered as a
    KV001 finding (:func:`too_deep_response`), never as an internal error (which fail-open would admit) nor
    as HTTP 400 (which the API server's ``failurePolicy: Ignore`` would admit). ``review`` has the request's
    ``uid`` and ``apiVersion`` and nothing else when the body could not be decoded."""

    def __init__(self, review: Review) -> None:
        super().__init__("request nests too deeply")
        self.review = review


def review_from_head(body: bytes | str) -> Review | None:
    """A bare :class:`Review` (``uid``, ``apiVersion``, nothing else) read from the first 64 KiB of a request
    body without decoding it, or None when no uid is found there: for a body that nests too deeply to decode,
    and for one answered before it is decoded (more reviews in flight than the server decodes at once). The API
    server's encoder writes the AdmissionReview's fields in the order of its Go struct (``k8s.io/api``
    ``admission/v1`` ``AdmissionReview``: ``kind``, ``apiVersion``, then ``request`` with ``uid`` first, the
    objects after), so the request's ``uid`` is in the head; it is read as decoding the body would read it
    (:func:`head_names`: ``request.uid``, the last of two), so an answer from the head names the uid the answer
    from the decoded body names, or none."""
    head = body[:_RAW_HEAD_CHARS]
    text = head.decode("utf-8", "replace") if isinstance(head, bytes) else head
    uid, api = head_names(text)
    if uid is None:
        return None
    return Review(
        api_version=api if api in API_VERSIONS else API_VERSIONS[0],
        uid=uid,
        operation="",
        kind="",
        namespace=None,
        name="",
        sub_resource=None,
        dry_run=False,
        object=None,
        old_object=None,
    )


def too_deep_response(review: Review, settings: WebhookSettings) -> tuple[dict[str, Any], Verdict]:
    """The answer for an object nesting more deeply than kvlint reads: a KV001 error (denied in ``enforce``,
    a warning in ``warn``), as the loader reports nesting beyond :data:`kvlint.load.MAX_DEPTH` levels."""
    from kvlint.load import MAX_DEPTH
    from kvlint.source import Loc
    from kvlint.webhook.worker import LintOutcome

    diag = Diagnostic(
        "KV001",
        "error",
        f"the object nests deeper than {MAX_DEPTH} levels of mappings and lists: kvlint does not read it (no "
        "Kubernetes object nests so deeply)",
        Loc(review_label(review), 1, 1),
        object=review.ref,
    )
    return build_response(review, settings, LintOutcome([diag], 0))


def _utf8(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8: False when it holds a lone surrogate (U+D800-U+DFFF), which
    Python's JSON decoder makes of an unpaired ``\\ud800`` escape."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


#: Longest JSON integer :func:`_decode` converts to an int when the body holds one Python refuses to convert
#: (more than 4,300 digits): kvlint's YAML loader keeps the text of a number of more than
#: ``kvlint.load.MAX_NUMBER_CHARS`` (100) characters as a string, and so does the review decoder.
_MAX_NUMBER_CHARS = 100


def _long_int(text: str) -> int | str:
    """``int(text)``, or ``text`` itself when it is longer than :data:`_MAX_NUMBER_CHARS` characters."""
    return text if len(text) > _MAX_NUMBER_CHARS else int(text)


def _decode(body: bytes | str) -> Any:
    """The JSON value of ``body``. An integer of more than 4,300 digits, which Python's decoder refuses ("Exceeds
    the limit (4300 digits) for integer string conversion", ``sys.get_int_max_str_digits``), is kept as its text,
    as kvlint's loader keeps every number of more than 100 characters (:data:`_MAX_NUMBER_CHARS`): such a review
    is answered with findings instead of HTTP 400, which the API server would meet with the webhook's
    ``failurePolicy``. The body is decoded a second time only after the first decoding failed, so well-formed
    reviews keep the decoder's C fast path for numbers.

    Raises:
        ValueError: (UnicodeDecodeError included) not JSON. RecursionError: nested too deeply."""
    try:
        return json.loads(body)
    except UnicodeDecodeError:
        raise
    except ValueError:
        return json.loads(body, parse_int=_long_int)


#: The most characters of a request's own value an HTTP 400 answer quotes (and its log line, which logs the
#: answer's text): a wrong ``apiVersion`` or ``kind`` of a megabyte was quoted whole, a 1 MB answer and a 1 MB log
#: line for every such request (the kubelet rotates a container's log at 10 MiB by default: a few requests pushed
#: the log of the reviews before out of reach).
QUOTED_CHARS = 80


def _json_type(value: Any) -> str:
    """The JSON name of ``value``'s type, as the request spelled it: ``object``, ``array``, ``string``,
    ``number``, ``boolean`` or ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


#: What :func:`_quoted` is given for a key the request does not hold.
_ABSENT: Any = object()


def _quoted(value: Any) -> str:
    """``value`` as an HTTP 400 answer quotes it, in at most :data:`QUOTED_CHARS` characters of its own and a few
    of ours: a string's ``repr`` (its first :data:`QUOTED_CHARS` characters and how long it is when longer),
    anything else its JSON type (``a JSON array``), :data:`_ABSENT` ``nothing``; never the whole value, whatever
    its size."""
    if value is _ABSENT:
        return "nothing"
    if isinstance(value, str):
        if len(value) <= QUOTED_CHARS:
            return repr(value)
        return f"{value[:QUOTED_CHARS]!r}... ({len(value):,} characters)"
    return f"a JSON {_json_type(value)}"


def parse_review(body: bytes | str) -> Review:
    """Validate an AdmissionReview request body (JSON) and extract what kvlint needs.

    Raises:
        ReviewError: (HTTP 400) not JSON, not an object, wrong ``apiVersion``/``kind``, no
            ``request``, missing or non-string ``uid``/``operation``, an ``operation`` other than those of
            :data:`ADMISSION_OPERATIONS` (exactly as spelt there), a ``uid`` holding a lone surrogate
            (it could not be echoed: see the comment in the code), ``object`` not a mapping.
        ReviewTooDeep: the body nests too deeply for the JSON decoder and its head holds the request's uid.
    """
    try:
        data = _decode(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ReviewError(f"request body is not valid JSON: {exc}") from None
    except RecursionError:
        bare = review_from_head(body)
        if bare is not None:
            raise ReviewTooDeep(bare) from None
        raise ReviewError("request body nests too deeply") from None
    if not isinstance(data, dict):
        raise ReviewError(f"expected an AdmissionReview object, got {_quoted(data)}")
    api_version = data.get("apiVersion", _ABSENT)
    if api_version not in API_VERSIONS:
        raise ReviewError(
            f"apiVersion must be one of {', '.join(API_VERSIONS)}, got {_quoted(api_version)} "
            "(set admissionReviewVersions: [v1] in the ValidatingWebhookConfiguration)"
        )
    if data.get("kind") != "AdmissionReview":
        raise ReviewError(f"kind must be AdmissionReview, got {_quoted(data.get('kind', _ABSENT))}")
    req = data.get("request")
    if not isinstance(req, dict):
        raise ReviewError("AdmissionReview has no request object")
    uid = req.get("uid")
    if not isinstance(uid, str) or not uid:
        raise ReviewError("request.uid must be a non-empty string")
    if not uid.isascii() and not _utf8(uid):
        # a lone surrogate (JSON "\ud800"): the uid cannot be echoed. The response is UTF-8 JSON (RFC 8259
        # section 8.1), which cannot hold it, and its escape would not match either: the API server's Go
        # decoder reads an unpaired surrogate escape as U+FFFD, and its encoder never writes one (it writes
        # invalid UTF-8 as U+FFFD), so no API server sends such a uid and no echo of it could equal the uid
        # it compares the response's with (k8s.io/apiserver .../webhook/request/admissionreview.go,
        # VerifyAdmissionResponse: "expected response.uid=%q, got %q"). Malformed, as a missing uid is.
        raise ReviewError(
            "request.uid must be a non-empty string of Unicode characters (it holds a lone surrogate)"
        )
    operation = req.get("operation")
    if not isinstance(operation, str) or not operation:
        raise ReviewError("request.operation must be a non-empty string")
    if operation not in ADMISSION_OPERATIONS:
        raise ReviewError(
            f"request.operation must be one of {', '.join(ADMISSION_OPERATIONS)}, got {_quoted(operation)}"
        )
    obj = req.get("object")
    old = req.get("oldObject")
    for key, value in (("object", obj), ("oldObject", old)):
        if value is not None and not isinstance(value, dict):
            raise ReviewError(f"request.{key} must be an object or null, got {_quoted(value)}")
    kind_info = req.get("kind")
    kind = kind_info.get("kind") if isinstance(kind_info, dict) else None
    if not isinstance(kind, str):
        kind = str(obj.get("kind", "")) if isinstance(obj, dict) else ""
    ns = req.get("namespace")
    name = req.get("name")
    if not name and isinstance(obj, dict) and isinstance(obj.get("metadata"), dict):
        name = obj["metadata"].get("name") or obj["metadata"].get("generateName") or ""
    sub = req.get("subResource")
    user = req.get("userInfo")
    username = user.get("username") if isinstance(user, dict) else None
    return Review(
        api_version=str(api_version),
        uid=uid,
        operation=operation,
        kind=kind,
        namespace=str(ns) if ns else None,
        name=str(name or ""),
        sub_resource=str(sub) if sub else None,
        dry_run=req.get("dryRun") is True,
        object=obj,
        old_object=old,
        raw_request=req,
        username=username if isinstance(username, str) else "",
    )


#: The annotations kvlint reads besides its own (``kvlint.io/``): KAITO's ``kaito.sh/runtime``
#: (:data:`kvlint.workloads.kaito.KAITO_RUNTIME_ANNOTATION`; ``transformers`` runs the preset on a runtime
#: kvlint does not size, any other value on vLLM, which it does) and KServe's managed DRA annotations on an
#: LLMInferenceService (:data:`kvlint.workloads.llmisvc.MANAGED_DRA_CLASS`, ``MANAGED_DRA_COUNT``: they request
#: the pod's GPUs, KV405 and KV501), and OpenShift AI's hardware profile annotations on an InferenceService
#: (:data:`kvlint.workloads.hardwareprofile.PROFILE_NAME`, ``PROFILE_NAMESPACE``: the profile may give the GPUs,
#: so a container requesting none is a KV405 info naming it rather than a warning), and KubeRay's
#: ``ray.io/overwrite-container-cmd`` (:data:`kvlint.workloads.base.RAY_OVERWRITE_CMD_ANNOTATION`: "true" runs the
#: Ray container's own command or image entrypoint, which kvlint then sizes, instead of KubeRay's ``ray start``). An
#: UPDATE that changes one of them is reviewed.
READ_ANNOTATIONS: frozenset[str] = frozenset(
    {
        "kaito.sh/runtime",
        "serving.kserve.io/exp-dra-device-class",
        "serving.kserve.io/exp-dra-device-count",
        "opendatahub.io/hardware-profile-name",
        "opendatahub.io/hardware-profile-namespace",
        "ray.io/overwrite-container-cmd",
    }
)


def _holds_engine_text(value: Any) -> bool:
    """An annotation's value is a serving container held as text (a multi-line string with an ``image:`` line
    naming a serving engine, llm-d's ``dual-pod.llm-d.ai/server-patch``): KV503 says kvlint does not read it
    (:func:`kvlint.workloads.operators.embedded_container_note`), so an UPDATE that adds or changes it is
    reviewed."""
    if not (isinstance(value, str) and "\n" in value and "image" in value):
        return False
    from kvlint.workloads.operators import engine_image_in_text

    return engine_image_in_text(value) is not None


def _kvlint_meta(meta: Any) -> dict[str, Any]:
    """The parts of a ``metadata`` mapping kvlint reads: ``kvlint.io/`` annotations (the prefix in any case: KV005
    names ``KVLINT.IO/IGNORE``), the other annotations it
    reads (:data:`READ_ANNOTATIONS`), those holding a serving container as text (:func:`_holds_engine_text`) and
    the labels."""
    meta = meta if isinstance(meta, dict) else {}
    ann = meta.get("annotations")
    ann = ann if isinstance(ann, dict) else {}
    return {
        "annotations": {
            k: v
            for k, v in ann.items()
            if str(k)[:10].lower() == "kvlint.io/" or k in READ_ANNOTATIONS or _holds_engine_text(v)
        },
        "labels": meta.get("labels") or {},
    }


def lint_relevant(obj: Any, _top: bool = True) -> Any:
    """What of ``obj`` can change kvlint's findings: everything but ``status``, the scale keys
    (``replicas``, ``minReplicas``, ``maxReplicas``; but a KubeRay worker group's pod count, :data:`_RAY_GROUPS`),
    ``paused`` and ``suspend`` at any depth, and metadata
    other than the annotations kvlint reads (``kvlint.io/``, :data:`READ_ANNOTATIONS`) and the labels (the
    object's own and its pod templates'). Two versions of an object with equal projections get the same
    findings, so an UPDATE between them needs no review."""
    if isinstance(obj, dict):
        out: dict[str, Any] = {}
        for k, v in obj.items():
            if k in _SCALE_KEYS:
                continue
            if k == "metadata" and isinstance(v, dict):
                out[k] = _kvlint_meta(v)
                continue
            if k == _RAY_GROUPS and isinstance(v, list):
                counted = (
                    ("maxReplicas",)
                    if obj.get("enableInTreeAutoscaling") is True
                    else ("maxReplicas", "replicas")
                )
                out[k] = [_ray_group(g, counted) for g in v]
                continue
            out[k] = lint_relevant(v, False)
        return out
    if isinstance(obj, list):
        return [lint_relevant(v, False) for v in obj]
    return obj


def _ray_group(group: Any, counted: tuple[str, ...]) -> Any:
    """:func:`lint_relevant` of a KubeRay worker group, keeping the scale keys kvlint reads as its pod count
    (``counted``: :data:`_RAY_GROUPS`)."""
    out = lint_relevant(group, False)
    if isinstance(group, dict) and isinstance(out, dict):
        for k in counted:
            if k in group:
                out[k] = group[k]
    return out


def owner_group_version(api_version: Any) -> tuple[str, str] | None:
    """``(group, version)`` of an ownerReference's ``apiVersion`` as Kubernetes parses it
    (``k8s.io/apimachinery`` ``schema.ParseGroupVersion``, which ``validateOwnerReference`` applies before a
    validating webhook is called): ``group/version``; ``version`` and ``/version`` are the core group ``""``;
    None for anything with more than one ``/`` (refused by the API server). The chart's owner filter
    (``kvlint.notOwnedCondition`` in ``deploy/helm/kvlint-webhook/templates/_helpers.tpl``) reads it the same
    way; tests/test_chart.py evaluates it against this function's caller."""
    text = str(api_version or "")
    if text.count("/") > 1:
        return None
    if "/" not in text:
        return "", text
    group, version = text.split("/", 1)
    return group, version


def owner_group(api_version: Any) -> str | None:
    """The API group of an ownerReference's ``apiVersion`` (:func:`owner_group_version`), or None."""
    gv = owner_group_version(api_version)
    return None if gv is None else gv[0]


def _names_itself(ref: dict[str, Any], obj: dict[str, Any], meta: dict[str, Any]) -> bool:
    """Whether the owner reference ``ref`` names the object ``obj`` itself: its ``uid``, or its kind and name.
    The API server has filled ``metadata.uid`` (and the name a ``generateName`` gives) before a validating
    webhook sees a CREATE (``k8s.io/apiserver`` ``pkg/registry/generic/registry/store.go``, ``Store.Create``:
    ``rest.FillObjectMetaSystemFields`` before ``createValidation``), so both forms are caught on CREATE and
    UPDATE. The chart's owner filter tests the same (``kvlint.notOwnedCondition``)."""
    if "uid" in meta and ref.get("uid") == meta["uid"]:
        return True
    return (
        "kind" in obj
        and "name" in meta
        and ref.get("kind") == obj["kind"]
        and ref.get("name") == meta["name"]
    )


def reviewed_owner(obj: dict[str, Any] | None) -> str | None:
    """``Kind/name`` of the object's controlling owner when kvlint reviews that kind
    (:data:`REVIEWED_KINDS`) in a version it is served in (:data:`REVIEWED_VERSIONS`), else None. Only the
    ``controller: true`` reference counts: that is the object whose controller creates and updates this one.
    A reference to the object itself (:func:`_names_itself`) never counts: an UPDATE that made a reviewed
    object its own controller was exempt from then on. Nor does a version the kind is not served in
    (``apps/v999``): the garbage collector cannot resolve such an owner, so it never deletes the object, and
    no existing owner was needed to forge one."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    refs = meta.get("ownerReferences") if isinstance(meta, dict) else None
    for ref in refs if isinstance(refs, list) else []:
        if not isinstance(ref, dict) or ref.get("controller") is not True:
            continue
        gv = owner_group_version(ref.get("apiVersion"))
        if gv is None:
            continue
        key = (gv[0], str(ref.get("kind", "")))
        if gv[1] in REVIEWED_VERSIONS.get(key, ()):
            assert isinstance(obj, dict) and isinstance(meta, dict)
            if _names_itself(ref, obj, meta):
                continue
            return f"{key[1]}/{ref.get('name', '')}"
    return None


def trusted_controller(username: str, trusted: Iterable[str]) -> bool:
    """Whether ``username`` (``request.userInfo.username``) matches one of the ``trusted`` patterns: equal to
    it, or, for a pattern ending in ``*``, starting with what precedes the ``*``. An empty pattern matches
    nothing."""
    for pattern in trusted:
        if pattern.endswith("*"):
            if username.startswith(pattern[:-1]):
                return True
        elif pattern and username == pattern:
            return True
    return False


#: The prefix every service account's username has (``system:serviceaccount:NAMESPACE:NAME``, Kubernetes
#: ``serviceaccount.MakeUsername``).
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


def trust_pattern_warnings(trusted: Iterable[str]) -> list[str]:
    """One warning for each of the ``trusted`` patterns (as :func:`trusted_controller` reads them) that trusts more
    than its author likely meant, for the server to log at start-up; [] when none does:

    * a trailing ``*`` that does not follow a ``:``: it crosses a name boundary, so
      ``system:serviceaccount:kserve*`` also matches the namespace ``kserve-evil`` (and ``*`` alone every
      requester);
    * a pattern that matches every service account (``system:serviceaccount:*`` or a shorter prefix of it): any
      user who can create a Pod can use a service account's token, so such a pattern exempts owned objects
      written by anyone (docs/webhook.md, trustedControllers)."""
    out = []
    for pattern in trusted:
        if not pattern.endswith("*"):
            continue
        prefix = pattern[:-1]
        if SERVICE_ACCOUNT_PREFIX.startswith(prefix):
            out.append(
                f"--trusted-controller {pattern!r} trusts every service account: anyone who can create a Pod can "
                "write as one, so their owned objects would not be reviewed; trust the operators' own accounts "
                "(system:serviceaccount:NAMESPACE:NAME) instead"
            )
        elif not prefix.endswith(":"):
            out.append(
                f"--trusted-controller {pattern!r}: the * follows {prefix.rsplit(':', 1)[-1]!r} within a name, so it "
                f"also matches longer names ({prefix}-other...); end the prefix with ':' to trust one namespace"
            )
    return out


def owner_exemption(review: Review, settings: WebhookSettings) -> str | None:
    """``Kind/name`` of the reviewed owner whose review exempts this request's object, or None: the object's
    controlling owner is a kind kvlint reviews (:func:`reviewed_owner`, never the object itself) and the
    request comes from a trusted controller identity (``settings.trusted_controllers``,
    :func:`trusted_controller`). ``ownerReferences`` are written by whoever writes the object, so a user's
    own reference to an existing Deployment does not exempt the user's Pod."""
    if not settings.trusted_controllers or not trusted_controller(
        review.username, settings.trusted_controllers
    ):
        return None
    return reviewed_owner(review.object)


#: The annotation the kubelet gives the mirror pod of a static pod (``k8s.io/api`` ``core/v1``
#: ``MirrorPodAnnotationKey``).
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
#: The prefix of a kubelet's username (``system:node:<node name>``); the NodeRestriction admission plugin lets
#: a kubelet create mirror pods only, bound to its own node.
NODE_USER_PREFIX = "system:node:"


def mirror_pod(review: Review) -> bool:
    """Whether the review is a kubelet (``system:node:*``) creating the mirror pod of a static pod (a Pod with
    :data:`MIRROR_POD_ANNOTATION`). The kubelet runs a static pod from its manifest directory whatever the API
    server answers: denying the mirror pod stops nothing, hides the pod from the API (and the GPUs it holds from
    the scheduler) and has the kubelet retry the creation for ever."""
    if review.kind != "Pod" or not review.username.startswith(NODE_USER_PREFIX):
        return False
    meta = review.object.get("metadata") if isinstance(review.object, dict) else None
    ann = meta.get("annotations") if isinstance(meta, dict) else None
    return isinstance(ann, dict) and MIRROR_POD_ANNOTATION in ann


def skip_reason(review: Review, settings: WebhookSettings) -> str | None:
    """Why this review is allowed without linting, or None when it must be linted.

    Skipped: operations other than CREATE/UPDATE; subresources (``status``, ``scale``...: a controller
    writing status or an autoscaler scaling must never be blocked); namespaces in
    ``settings.exempt_namespaces``; no object; objects controlled by an owner of a kind kvlint reviews,
    written by a trusted controller identity (:func:`owner_exemption`: the owner was linted, and denying its
    controller's writes would stop a rollout or a scale-down half way); a kubelet's mirror pods
    (:func:`mirror_pod`); UPDATEs whose object equals
    ``oldObject`` in everything kvlint reads (:func:`lint_relevant`) and raises no replica count
    (:func:`counts_not_lowered`: a scale-down is skipped, a scale-up reviewed).
    """
    if review.operation not in ("CREATE", "UPDATE"):
        return f"operation {review.operation} is not linted"
    if review.sub_resource:
        return f"subresource {review.sub_resource} is not linted"
    if review.namespace and review.namespace in settings.exempt_namespaces:
        return f"namespace {review.namespace} is exempt"
    if review.object is None:
        return "request has no object"
    owner = owner_exemption(review, settings)
    if owner is not None:
        return f"controlled by {owner}, which kvlint reviews"
    if mirror_pod(review):
        return "mirror pod of a static pod: the kubelet runs it whatever the answer"
    if (
        review.operation == "UPDATE"
        and review.old_object is not None
        and lint_relevant(review.object) == lint_relevant(review.old_object)
        and not counts_not_lowered(review.object, review.old_object)
    ):
        return "update changes only replicas, status, paused, suspend or metadata"
    return None


#: The scale keys whose value is a pod or replica count kvlint reads (:data:`_SCALE_KEYS` less ``status``,
#: ``paused`` and ``suspend``): KV106 counts a workload's ``replicas`` (a KServe predictor's or KubeAI Model's
#: ``minReplicas`` when it has none) among the engines sharing one time-sliced GPU, and KV206 refuses a
#: LeaderWorkerSet whose ``replicas`` x ``size`` exceeds int32.
_COUNT_KEYS = ("replicas", "minReplicas", "maxReplicas")


#: Where :func:`counts_not_lowered` looks for no count: the status and metadata (the controllers' to write), and a
#: KubeRay worker group, whose counts :func:`lint_relevant` keeps as far as kvlint reads them (the Ray autoscaler
#: writes its ``replicas``, which kvlint does not read then).
_UNCOUNTED = frozenset({"status", "metadata", _RAY_GROUPS})


def counts_not_lowered(obj: Any, old: Any) -> bool:
    """Whether some count of :data:`_COUNT_KEYS` in ``obj`` (at any depth outside :data:`_UNCOUNTED`) is
    not the same as, or an integer below, the one at the same path of ``old``: raised, added, removed, or not an
    integer. Such an UPDATE is reviewed even when nothing else kvlint reads changed (:func:`skip_reason`): a
    Deployment on a GPU time-shared by up to four pods, each engine claiming 0.3 of it, passes at ``replicas: 1``
    and is a KV106 error at 4 (four engines claim more than the device), and the UPDATE from 1 to 4 was admitted
    unreviewed though the same object at 4 is denied on CREATE. A count only lowered (a scale-down) adds no
    finding and stays unreviewed. Iterative: the objects nest as deeply as the decoder let them."""
    stack: list[tuple[Any, Any]] = [(obj, old)]
    while stack:
        new_v, old_v = stack.pop()
        if isinstance(new_v, dict):
            old_d = old_v if isinstance(old_v, dict) else {}
            for k in _COUNT_KEYS:
                if k in new_v or k in old_d:
                    n: Any = new_v.get(k)
                    o: Any = old_d.get(k)
                    # same type as well as equal: True == 1, but only 1 is a count
                    same = type(n) is type(o) and n == o
                    lowered = type(n) is int and type(o) is int and n < o
                    if not same and not lowered:
                        return True
            stack.extend(
                (v, old_d.get(k)) for k, v in new_v.items() if k not in _COUNT_KEYS and k not in _UNCOUNTED
            )
        elif isinstance(new_v, list):
            old_l = old_v if isinstance(old_v, list) else []
            stack.extend((v, old_l[i] if i < len(old_l) else None) for i, v in enumerate(new_v))
    return False


def _prepared_object(review: Review) -> dict[str, Any]:
    """The object as kvlint lints it: ``metadata.managedFields`` dropped (size only), and
    ``metadata.namespace`` filled from ``request.namespace`` when the object leaves it out."""
    assert review.object is not None
    obj = dict(review.object)
    meta = obj.get("metadata")
    meta = dict(meta) if isinstance(meta, dict) else {}
    meta.pop("managedFields", None)
    if review.namespace and not meta.get("namespace"):
        meta["namespace"] = review.namespace
    obj["metadata"] = meta
    return obj


def review_label(review: Review) -> str:
    """The file name the object is linted under: ``<admission Kind/ns/name>.json``, each part stripped of
    path separators, ``..`` and control characters, so no location can name a file of the server."""

    def part(text: str | None) -> str:
        text = str(text or "")
        if text.isprintable() and "/" not in text and "\\" not in text:  # the usual name: nothing to replace
            cleaned = text[:253]
        else:
            cleaned = "".join(c if c.isprintable() and c not in "/\\" else "_" for c in text)[:253]
        return cleaned.replace("..", "__")

    return f"<admission {'/'.join(part(x) for x in (review.kind, review.namespace, review.name) if x)}>.json"


def prepared_object(review: Review) -> dict[str, Any]:
    """The object as the workers lint it (see :func:`_prepared_object`)."""
    return _prepared_object(review)


def lint_review(review: Review, options: Any, pipeline: Pipeline | None = None) -> Any:
    """Run the ``kvlint check`` pipeline on the object under review, in this process, and return its
    ``CheckResult`` (the server runs :func:`kvlint.webhook.worker.lint_object` in a worker process instead).

    The object is serialised as indented JSON and read by :func:`kvlint.load.load_text` (so every value
    carries a position, as from a file) under :func:`review_label`. ``options`` must have
    ``allow_hub=False``. Raises whatever the pipeline raises.
    """
    from kvlint.webhook.worker import lint_object

    return lint_object(_prepared_object(review), review_label(review), options, pipeline)


def _flat(text: str) -> str:
    """One line of plain text: :func:`~kvlint.statement.squeeze` then :func:`printable` (each returns
    ``text`` as it is when it has nothing to change)."""
    return printable(squeeze(text))


def _clip(text: str, limit: int) -> str:
    """``text`` on one line without control characters, cut to ``limit`` characters with ``...`` when
    longer (kubectl prints warnings to the user's terminal)."""
    return clip(_flat(text), limit)


def _where(d: Diagnostic) -> str:
    return f" [container {d.container}]" if d.container else ""


def format_warning(d: Diagnostic, note: str = "") -> str:
    """One admission warning for a diagnostic: ``KV202 [container vllm]: message; fix: fix``, at most
    :data:`MAX_WARNING_CHARS` characters (the fix is dropped first, then the message cut). No
    ``Warning:`` prefix (kubectl adds it). The fix follows ``; fix:`` as in the deny message's ``fix:`` lines
    and the text report (``message Fix: fix`` ran the two together: "...the start-up fit check Fix: set...")."""
    head = printable(f"{d.rule}{note}{_where(d)}: ")
    msg = _flat(d.message)
    fix = _flat(d.fix)
    if len(head) + len(msg) + (len(fix) + len(WARNING_FIX_SEPARATOR) if fix else 0) <= MAX_WARNING_CHARS:
        return f"{head}{msg}{WARNING_FIX_SEPARATOR}{fix}" if fix else f"{head}{msg}"
    # _clip(head + msg), the message not scanned again: it is flat already (printable's output is printable
    # again as it is, character by character), so only the head, which ends with a space, has any to squeeze
    base = squeeze(head)
    return clip(f"{base} {msg}" if msg else base, MAX_WARNING_CHARS)


def _limit_warnings(items: Iterable[str], weights: Sequence[int]) -> list[str]:
    """Keep warnings within :data:`MAX_WARNINGS_TOTAL_CHARS`, ending with a count of the findings left out.
    ``items`` yields the ``len(weights)`` warnings in order, ``weights`` the findings each counts as (above 1 for
    the finding for the rest past the first 50 of a rule in a container, :mod:`kvlint.findcap`: its 70 left out
    were counted as 1); it is read only as far as they are kept (plus one), so a review with thousands of
    findings formats a few of them, not all.

    A text already kept is not repeated: the API server keeps one warning of each text (``k8s.io/apiserver``
    ``pkg/endpoints/filters/warning.go``, ``recorder.AddWarning``: "dedupe if already warned"), so a repeat
    (the same finding in a leader's and a worker's container of one name) would only take room from the
    findings after it."""
    out: list[str] = []
    seen: set[str] = set()
    used = 0
    for i, w in enumerate(items):
        if w in seen:
            continue
        seen.add(w)
        rest = len(weights) - i - 1
        tail = 80 if rest else 0  # room for the "N more" line
        if used + len(w) + tail > MAX_WARNINGS_TOTAL_CHARS:
            left = sum(weights[i:])
            more = f"{left} more finding{'s' if left != 1 else ''}"
            out.append(f"kvlint: {more} not shown; run `kvlint check` on the manifest")
            return out
        out.append(w)
        used += len(w)
    return out


def deny_message(review: Review, errors: list[Diagnostic]) -> str:
    """The deny ``status.message``: a header naming the object, then per error its rule id, what is
    wrong and the fix, at most :data:`MAX_MESSAGE_CHARS` characters. An entry of the same text as one listed
    (the same finding in containers of one name: an object of several containers named alike, a leader's and a
    worker's) is not listed again but counted at the end: three copies of one error took the room of the
    other errors, which the message then left out. The errors are counted as findings, as ``kvlint check``'s
    summary counts them: the finding for the rest past the first 50 of a rule in a container
    (:mod:`kvlint.findcap`) or past a command line's first unknown options counts as the findings it stands for
    (:func:`kvlint.types.findings_stood_for`; "has 51 errors" was said of an object with 120)."""
    from kvlint.types import findings_stood_for

    weights = [findings_stood_for(d) for d in errors]
    n = sum(weights)
    lines = [f"kvlint: {printable(review.ref or 'object')} has {n} error{'s' if n != 1 else ''}:"]
    used = len(lines[0]) + 1  # the characters of the lines so far, each with its line break
    seen: set[str] = set()
    repeats = 0
    for i, d in enumerate(errors):
        # printable works character by character: the head's and the message's escaped apart
        entry = printable(f"- {d.rule}{_where(d)}: ") + _flat(d.message)
        if d.fix:
            entry += "\n  fix: " + _flat(d.fix)
        if entry in seen:
            repeats += weights[i]
            continue
        if used + len(entry) > MAX_MESSAGE_CHARS - 100:
            lines.append(
                f"- ... {sum(weights[i:])} more; run `kvlint check` on the manifest for the full report"
            )
            break
        seen.add(entry)
        lines.append(entry)
        used += len(entry) + 1
    if repeats:
        lines.append(
            "- (and 1 more error as listed above: the same finding in another container of the same name)"
            if repeats == 1
            else f"- (and {repeats} more errors as listed above: the same findings in other containers of the same "
            "name)"
        )
    return _clip_block("\n".join(lines), MAX_MESSAGE_CHARS)


def _clip_block(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class Verdict:
    """The decision taken on one review, for the response, the log line and the metrics.

    ``outcome`` is one of ``clean``, ``findings`` (allowed with warnings or denied), ``would_deny``
    (errors found in warn/audit mode), ``skipped``, ``timeout``, ``internal_error``, ``too_large`` (the request
    body over ``max_request_bytes``, not decoded) and ``overloaded`` (more request bodies held than the server
    holds), the last four answered per the failure mode (:func:`failure_response`). ``old_object``: for an
    UPDATE whose ``oldObject`` was linted for the errors it already had (``allow_existing_violations``), how
    that lint ended (``linted``, ``timeout``, ``internal_error``); empty when it was not linted.
    """

    allowed: bool
    outcome: str
    errors: list[Diagnostic] = field(default_factory=list)
    warnings: list[Diagnostic] = field(default_factory=list)
    suppressed: int = 0
    reason: str = ""
    old_object: str = ""

    @property
    def rules(self) -> list[str]:
        """Sorted distinct rule ids found (errors and warnings)."""
        return sorted({d.rule for d in self.errors + self.warnings})


def response(
    review: Review,
    allowed: bool,
    *,
    message: str = "",
    warnings: list[str] | None = None,
    audit: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The AdmissionReview response body: same ``apiVersion``, ``kind: AdmissionReview``, and a
    ``response`` with the request's ``uid``; a denial carries ``status`` with code 403 and ``message``."""
    resp: dict[str, Any] = {"uid": review.uid, "allowed": allowed}
    if not allowed:
        resp["status"] = {"code": 403, "reason": "Forbidden", "message": message}
    elif message:
        resp["status"] = {"code": 200, "message": message}
    if warnings:
        resp["warnings"] = warnings
    if audit:
        resp["auditAnnotations"] = audit
    return {"apiVersion": review.api_version, "kind": "AdmissionReview", "response": resp}


#: Rules whose error says kvlint could not read what it reviews: the object or one of its documents (KV001: too
#: large to review, nested too deep, unparsable) or a container's engine command (KV503: unreadable, never
#: starts, kvlint's own failure). Such an error tells nothing of the content, so it is never pre-existing
#: (:func:`existing_errors`): the same "too large to review" in the old and new object let any new content
#: through unreviewed.
UNCHECKED_RULES = frozenset({"KV001", "KV503"})


def existing_errors(result: Any) -> list[str]:
    """The :func:`~kvlint.fingerprint.identity` of each error-severity finding of ``result`` (a
    ``CheckResult`` or :class:`~kvlint.webhook.worker.LintOutcome`: an UPDATE's ``oldObject`` linted),
    in order, repeated as often as the finding is: what :func:`build_response` matches the new object's
    errors with when :attr:`WebhookSettings.allow_existing_violations` is on. Errors of
    :data:`UNCHECKED_RULES` are left out: the same one in the new object still denies. The KV205 that stands for
    a command line's unknown options past the first ones is repeated as often as the options it stands for
    (:func:`kvlint.types.findings_stood_for`), as their own findings would be."""
    from kvlint.fingerprint import identity
    from kvlint.types import findings_stood_for

    return [
        identity(d)
        for d in result.diagnostics
        if d.severity == "error" and d.rule not in UNCHECKED_RULES
        for _ in range(findings_stood_for(d))
    ]


def _split_existing(errors: list[Any], existing: Iterable[str]) -> tuple[list[Any], list[Any]]:
    """``errors`` parted into (new, pre-existing): an error is pre-existing while ``existing`` still holds
    an unmatched finding of its identity (two findings of one identity in the new object against one in the
    old: one of them is new). The KV205 for the unknown options past a command line's first ones matches as
    many as it stands for (:func:`kvlint.types.findings_stood_for`): more of them than the old object
    had is new."""
    from collections import Counter

    from kvlint.fingerprint import identity
    from kvlint.types import findings_stood_for

    left = Counter(existing)
    new: list[Any] = []
    old: list[Any] = []
    for d in errors:
        key = identity(d)
        weight = findings_stood_for(d)
        if left[key] >= weight:
            left[key] -= weight
            old.append(d)
        else:
            new.append(d)
    return new, old


_EXCEPTION_NAME = re.compile(r"\((\w+)")


def unfinished_check(diagnostics: Iterable[Any]) -> str | None:
    """Why a finished pipeline run did not check all of the object, or None: the first of ``diagnostics`` that is
    kvlint's own failure (:func:`kvlint.types.is_internal_error`, a KV503 whose stage raised on the input), as
    ``internal error (ExceptionName) in Kind/ns/name``."""
    for d in diagnostics:
        if is_internal_error(d.rule, d.message):
            m = _EXCEPTION_NAME.search(d.message)
            name = m.group(1) if m else "exception"
            return f"internal error ({name})" + (f" in {d.object}" if d.object else "")
    return None


def build_response(
    review: Review, settings: WebhookSettings, result: Any, existing: Iterable[str] | None = None
) -> tuple[dict[str, Any], Verdict]:
    """Verdict and AdmissionReview response for a finished pipeline ``result`` (a ``CheckResult``).

    A result holding kvlint's own failure to check part of the object (:func:`unfinished_check`) is answered per
    the failure mode when that is ``closed`` (:func:`failure_response`, outcome ``internal_error``): the worker
    caught the exception and went on, so the object was admitted with a KV503 warning whatever
    ``--failure-mode`` said. Under ``open`` it is answered as below (the KV503 a warning; the other workloads'
    errors still deny).

    ``enforce``: denied when any error-severity diagnostic remains (after ``select``/``ignore``,
    severity overrides and allowed ``kvlint.io/ignore`` exemptions, all applied by the pipeline); the
    message lists the errors; warning-severity diagnostics become admission warnings either way.
    ``existing`` (an UPDATE under :attr:`WebhookSettings.allow_existing_violations`: the
    :func:`existing_errors` of its ``oldObject``): only the errors not among them deny; the others are sent
    as warnings marked ``(error, pre-existing)``, and admitted alone they give outcome ``would_deny``.
    ``warn``: always allowed; errors become warnings marked ``(error, not enforced)``. ``audit``:
    always allowed, no warnings. Info diagnostics are never sent. ``auditAnnotations`` record
    ``verdict`` and ``rules`` in the API server's audit log, and ``suppressed`` (the number of findings the
    object's own ``kvlint.io/ignore`` annotations suppressed) when there are any.
    """
    diags: list[Diagnostic] = list(result.diagnostics)
    if settings.failure_mode == "closed":
        unfinished = unfinished_check(diags)
        if unfinished is not None:
            return failure_response(review, settings, unfinished, "internal_error")
    errors = [d for d in diags if d.severity == "error"]
    warns = [d for d in diags if d.severity == "warning"]
    suppressed = int(getattr(result, "suppressed", 0) or 0)
    blocking, kept = (errors, []) if existing is None else _split_existing(errors, existing)
    if errors:
        outcome = "findings" if settings.mode == "enforce" and blocking else "would_deny"
    else:
        outcome = "findings" if warns else "clean"
    allowed = not (blocking and settings.mode == "enforce")
    verdict = Verdict(allowed, outcome, errors, warns, suppressed)
    # the warnings in order, formatted only as far as _limit_warnings keeps them
    warn_text: Iterable[str] = ()
    warned: list[Any] = []
    if settings.mode == "enforce":
        warn_text = itertools.chain(
            (format_warning(d, " (error, pre-existing)") for d in kept), (format_warning(d) for d in warns)
        )
        warned = [*kept, *warns]
    elif settings.mode == "warn":
        warn_text = itertools.chain(
            (format_warning(d, " (error, not enforced)") for d in errors), (format_warning(d) for d in warns)
        )
        warned = [*errors, *warns]
    audit = {"verdict": "deny" if not allowed else ("would-deny" if errors else "allow")}
    rules = verdict.rules
    if rules:
        audit["rules"] = ",".join(rules)
    if suppressed:
        # the requester's own kvlint.io/ignore annotation removed these findings: without this, the audit log
        # recorded such an object as "allow", like one with nothing to find
        audit["suppressed"] = str(suppressed)
    message = deny_message(review, blocking) if not allowed else ""
    from kvlint.types import findings_stood_for

    weights = [findings_stood_for(d) for d in warned]
    return response(
        review, allowed, message=message, warnings=_limit_warnings(warn_text, weights), audit=audit
    ), verdict


def failure_response(
    review: Review, settings: WebhookSettings, why: str, outcome: str
) -> tuple[dict[str, Any], Verdict]:
    """Answer when the review could not be completed (``outcome`` ``timeout``, ``internal_error``,
    ``too_large``, ``overloaded`` or ``shutdown``): fail ``open`` allows with a warning saying the object was not checked;
    fail ``closed`` denies."""
    text = f"kvlint: {why}; the object was not checked"
    if settings.failure_mode == "open":
        verdict = Verdict(True, outcome, reason=why)
        return response(
            review,
            True,
            warnings=[_clip(text + " (failure mode open)", MAX_WARNING_CHARS)],
            audit={"verdict": "unchecked"},
        ), verdict
    verdict = Verdict(False, outcome, reason=why)
    return response(
        review,
        False,
        message=text + " (failure mode closed); retry, or ask the cluster admin",
        audit={"verdict": "unchecked-deny"},
    ), verdict


def skipped_response(review: Review, why: str) -> tuple[dict[str, Any], Verdict]:
    """Allow a review that needs no linting (see :func:`skip_reason`)."""
    return response(review, True), Verdict(True, "skipped", reason=why)


__all__ = [
    "API_VERSIONS",
    "DEFAULT_MAX_REQUEST_BYTES",
    "BUILTIN_CONTROLLERS",
    "DEFAULT_TRUSTED_CONTROLLERS",
    "FailureMode",
    "Mode",
    "FAILURE_MODES",
    "MAX_MESSAGE_CHARS",
    "MAX_WARNINGS_TOTAL_CHARS",
    "MAX_WARNING_CHARS",
    "MIRROR_POD_ANNOTATION",
    "MODES",
    "NODE_USER_PREFIX",
    "READ_ANNOTATIONS",
    "REVIEWED_KINDS",
    "REVIEWED_VERSIONS",
    "UNCHECKED_RULES",
    "Review",
    "ReviewError",
    "ReviewTooDeep",
    "Verdict",
    "WebhookSettings",
    "build_response",
    "deny_message",
    "exemptions_enforceable",
    "existing_errors",
    "failure_response",
    "format_warning",
    "lint_relevant",
    "lint_review",
    "mirror_pod",
    "owner_exemption",
    "owner_group",
    "owner_group_version",
    "parse_review",
    "prepared_object",
    "head_names",
    "review_from_head",
    "review_label",
    "reviewed_owner",
    "response",
    "skip_reason",
    "skipped_response",
    "too_deep_response",
    "trusted_controller",
    "unfinished_check",
    "webhook_options",
]
