{{/* Names and labels. */}}
{{- define "kvlint.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kvlint.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "kvlint.selectorLabels" -}}
app.kubernetes.io/name: {{ include "kvlint.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kvlint.labels" -}}
{{ include "kvlint.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "kvlint.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "kvlint.tlsSecret" -}}
{{- if .Values.certManager.enabled -}}
{{- printf "%s-tls" (include "kvlint.fullname" .) -}}
{{- else -}}
{{- required "tls.secretName is required when certManager.enabled is false" .Values.tls.secretName -}}
{{- /* Without cert-manager's CA injection the API server can verify the webhook's certificate only against
tls.caBundle: without it every call fails TLS and failurePolicy decides (Ignore: nothing is ever reviewed). */ -}}
{{- $ca := required "tls.caBundle (the base64 PEM CA that signed tls.secretName's certificate) is required when certManager.enabled is false" .Values.tls.caBundle -}}
{{- if not (contains "-----BEGIN CERTIFICATE-----" (b64dec $ca)) -}}
{{- fail "tls.caBundle must be a base64-encoded PEM certificate bundle (base64 -w0 ca.crt)" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The webhook's own namespace, kube-system and .Values.exemptNamespaces are never sent to it (the server
exempts them too, but left to the server they would still wait on it, and fail with it under failurePolicy
Fail). */}}
{{- define "kvlint.namespaceSelector" -}}
{{- $sel := deepCopy .Values.namespaceSelector -}}
{{- $exprs := default list $sel.matchExpressions -}}
{{- $exprs = append $exprs (dict "key" "kubernetes.io/metadata.name" "operator" "NotIn" "values" (uniq (concat (list .Release.Namespace "kube-system") .Values.exemptNamespaces))) -}}
{{- $_ := set $sel "matchExpressions" $exprs -}}
{{- toYaml $sel -}}
{{- end -}}

{{/*
Objects whose controlling owner is a kind kvlint reviews are not sent when a trusted controller writes them
(kvlint reviewed the owner; its controller's writes must never be denied). The kinds are webhook-match.yaml,
written from WORKLOAD_KINDS in kvlint/kinds.py (REVIEWED_KINDS in kvlint/webhook/review.py) by
tools/gen_webhook_kinds.py. An owner's apiVersion is read as Kubernetes reads it (k8s.io/apimachinery
schema.ParseGroupVersion, which validateOwnerReference applies before any validating webhook sees the
object): "group/version", or the core group as "version" or "/version" (group "" before the "/"), as
kvlint.webhook.review.owner_group_version does, and only in a version the kind is served in (versions in
webhook-match.yaml: the garbage collector cannot resolve an owner of a version the cluster does not serve,
so a forged "apps/v999" reference needs no existing owner and the object is never deleted). The request must come from one of .Values.trustedControllers
(request.userInfo.username, a trailing * a prefix; kvlint.webhook.review.trusted_controller), and a reference
naming the object itself (its uid, or its kind and name) never counts (kvlint.webhook.review.reviewed_owner).
*/}}
{{- define "kvlint.reviewedOwners" -}}
{{- (.Files.Get "webhook-match.yaml" | fromYaml).kinds | toYaml -}}
{{- end -}}

{{/* A trusted-controller pattern, refused when it could break out of a CEL string literal. */}}
{{- define "kvlint.celSafe" -}}
{{- if or (contains "'" .) (contains "\\" .) (contains "\n" .) -}}
{{- fail (printf "trustedControllers: %q may not hold a quote, a backslash or a newline" .) -}}
{{- end -}}
{{- . -}}
{{- end -}}

{{/*
The requesters trusted to write owned objects, as a JSON list: .Values.trustedControllers, then the service
accounts of each enabled .Values.trustedOperators entry (system:serviceaccount:<namespace>:<name>). The one
list the server's --trusted-controller flags and the CEL owner filter are both written from.
*/}}
{{- define "kvlint.trustedList" -}}
{{- $out := list -}}
{{- range .Values.trustedControllers -}}
{{- $out = append $out (include "kvlint.celSafe" .) -}}
{{- end -}}
{{- range $name, $op := .Values.trustedOperators -}}
{{- if $op.enabled -}}
{{- if not $op.namespace -}}
{{- fail (printf "trustedOperators.%s.namespace: the namespace the operator runs in is needed to trust it" $name) -}}
{{- end -}}
{{- if not $op.serviceAccounts -}}
{{- fail (printf "trustedOperators.%s.serviceAccounts: no service account to trust" $name) -}}
{{- end -}}
{{- range $op.serviceAccounts -}}
{{- if or (not .) (contains ":" .) (contains "*" .) (contains ":" $op.namespace) (contains "*" $op.namespace) -}}
{{- fail (printf "trustedOperators.%s: %q in %q is not a service account name" $name . $op.namespace) -}}
{{- end -}}
{{- $out = append $out (include "kvlint.celSafe" (printf "system:serviceaccount:%s:%s" $op.namespace .)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{- define "kvlint.trustedCondition" -}}
{{- $terms := list -}}
{{- range (include "kvlint.trustedList" . | fromJsonArray) -}}
{{- $p := include "kvlint.celSafe" . -}}
{{- if hasSuffix "*" $p -}}
{{- $terms = append $terms (printf "request.userInfo.username.startsWith('%s')" (trimSuffix "*" $p)) -}}
{{- else if $p -}}
{{- $terms = append $terms (printf "request.userInfo.username == '%s'" $p) -}}
{{- end -}}
{{- end -}}
{{- if $terms -}}{{ join " || " $terms }}{{- else -}}false{{- end -}}
{{- end -}}

{{- define "kvlint.notOwnedCondition" -}}
{{- $terms := list -}}
{{- range (include "kvlint.reviewedOwners" . | fromYamlArray) -}}
{{- $kind := .kind -}}
{{- $apis := list -}}
{{- $group := .group -}}
{{- range .versions -}}
{{- if $group -}}
{{- $apis = append $apis (printf "'%s/%s'" $group .) -}}
{{- else -}}
{{- $apis = append (append $apis (printf "'%s'" .)) (printf "'/%s'" .) -}}
{{- end -}}
{{- end -}}
{{- $terms = append $terms (printf "(r.kind == '%s' && r.apiVersion in [%s])" $kind (join ", " $apis)) -}}
{{- end -}}
name: not-controlled-by-a-reviewed-owner
expression: >-
  !has(object.metadata.ownerReferences) ||
  !({{ include "kvlint.trustedCondition" . }}) ||
  !object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller &&
  ({{ join " || " $terms }}) &&
  !(has(object.metadata.uid) && r.uid == object.metadata.uid) &&
  !(has(object.kind) && has(object.metadata.name) && r.kind == object.kind && r.name == object.metadata.name))
{{- end -}}

{{/*
A pod spec at .spec requests an accelerator, runs a serving-engine image or starts an engine by its command: the
resource prefixes, image words and command words of webhook-match.yaml (.match), written from what kvlint reads
(tools/gen_webhook_kinds.py), in a container or in a sidecar init container (restartPolicy: Always), and a Dynamic
Resource Allocation claim, as kvlint reads them (kvlint.workloads.base.engine_containers): a vLLM sidecar on a GPU
beside an application container, or an engine whose GPU is a DRA claim under an image name of its own, was never
sent, and so admitted unreviewed though the server denies it; so was an engine with no GPU request started by its
command under another image (python:3.11 running `vllm serve`, `sh -c "python -m vllm.entrypoints..."`), and one
whose command names it through an env value (`$(LAUNCHER) serve` or `sh -c "$LAUNCHER serve"` with LAUNCHER=vllm:
the server reads the command after the kubelet's $(VAR) expansion, and a script's $VAR, from env values).

Its CEL cost is bounded, whatever the object (the API server gives a webhook's matchConditions 2,500,000 units a
request and applies failurePolicy past them: with Ignore, an object made costly enough would be admitted unsent):
a pod spec with more containers, or init containers, than .maxReviewSize is sent unread (the server reviews it
as too large, KV001), and so is a command, args or env list longer than .match.maxCommandWords; what is left is read
with a cost in proportion to the bytes of the object's strings, a few times over.
*/}}
{{- define "kvlint.gpuCondition" -}}
{{- $resources := list "k.endsWith('/gpu')" -}}
{{- range .match.acceleratorResources -}}
{{- $resources = append $resources (printf "k.startsWith('%s')" .) -}}
{{- end -}}
{{- $images := list -}}
{{- range .match.engineImageWords -}}
{{- $images = append $images (printf "c.image.contains('%s')" .) -}}
{{- end -}}
{{- $words := list -}}
{{- range .match.engineCommandWords -}}
{{- $words = append $words (printf "w.contains('%s')" .) -}}
{{- end -}}
{{- $max := int .match.maxCommandWords -}}
{{- $lists := list -}}
{{- range list "command" "args" -}}
{{- $lists = append $lists (printf "(has(c.%s) && (size(c.%s) > %d || c.%s.exists(w, %s)))" . . $max . (join " || " $words)) -}}
{{- end -}}
{{- $values := list -}}
{{- range .match.engineCommandWords -}}
{{- $values = append $values (printf "e.value.contains('%s')" .) -}}
{{- end -}}
{{- $lists = append $lists (printf "(has(c.env) && (size(c.env) > %d || c.env.exists(e, has(e.value) && (%s))))" $max (join " || " $values)) -}}
{{- $container := printf "(has(c.resources) && has(c.resources.limits) && c.resources.limits.exists(k, %s)) || (has(c.resources) && has(c.resources.claims) && size(c.resources.claims) > 0) || (has(c.image) && (%s)) || %s" (join " || " $resources) (join " || " $images) (join " || " $lists) -}}
name: gpu-or-serving-engine
expression: >-
  size({{ .spec }}.containers) > {{ .maxReviewSize }} ||
  (has({{ .spec }}.initContainers) && size({{ .spec }}.initContainers) > {{ .maxReviewSize }}) ||
  {{ .spec }}.containers.exists(c, {{ $container }}) ||
  (has({{ .spec }}.initContainers) && {{ .spec }}.initContainers.exists(c,
  has(c.restartPolicy) && c.restartPolicy == 'Always' && ({{ $container }})))
{{- end -}}

{{/*
A kubelet's mirror pod (a Pod with the kubernetes.io/config.mirror annotation, created by system:node:<node>) is
not sent: the kubelet runs the static pod whatever the answer (kvlint.webhook.review.mirror_pod, which the server
applies too).
*/}}
{{- define "kvlint.notMirrorPodCondition" -}}
name: not-a-kubelets-mirror-pod
expression: >-
  !(request.userInfo.username.startsWith('system:node:') &&
  has(object.metadata.annotations) && 'kubernetes.io/config.mirror' in object.metadata.annotations)
{{- end -}}

{{/* A size in bytes (an integer as text), or "" when .value is not one: with "kube" true as Kubernetes reads a
resource quantity (k8s.io/apimachinery pkg/api/resource: binary Ki..Ei, decimal k, M..E, m milli; case matters),
else as the server reads --worker-memory and --max-request-bytes (kvlint.webhook.cli._parse_size: ki, mi, gi, k,
m, g in any case, a trailing B, and an exponent of one or two digits, 5.36870912e+08, as a number in the values
renders; a longer one, 1e400, is not read: sprig's float64 reads what overflows as 0). A Kubernetes quantity's
decimal-exponent form is read as its grammar says (quantity.go, "<decimalExponent> ::= e <signedNumber> | E
<signedNumber>": 2e9, 1E3, 1.5e+9, a leading +; the exponent's digits in decimal, leading zeros ignored): one of
more than 30 (above 10^30 bytes, past any bound compared with it) is not read, one below -30 is 0. Before, the
exponent form was not read at all and the memory-limit check skipped such a limit. */}}
{{- define "kvlint.bytes" -}}
{{- $text := trim (toString .value) -}}
{{- if or (kindIs "float64" .value) (kindIs "int" .value) (kindIs "int64" .value) -}}
{{- /* a number in the values (YAML 1073741824 reaches the template as a float64, which toString writes
as 1.073741824e+09) */ -}}
{{- $text = printf "%.0f" (float64 .value) -}}
{{- end -}}
{{- $units := dict "Ki" 1024.0 "Mi" 1048576.0 "Gi" 1073741824.0 "Ti" 1099511627776.0 "Pi" 1125899906842624.0 "Ei" 1152921504606846976.0 "k" 1000.0 "M" 1000000.0 "G" 1000000000.0 "T" 1000000000000.0 "P" 1000000000000000.0 "E" 1000000000000000000.0 "m" 0.001 -}}
{{- $pattern := "^([0-9]+[.]?[0-9]*|[.][0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?$" -}}
{{- if .kube -}}
{{- $text = trimPrefix "+" $text -}}
{{- $exp := regexFind "[eE][-+]?[0-9]+$" $text -}}
{{- $mantissa := trimSuffix $exp $text -}}
{{- if and $exp (regexMatch "^([0-9]+[.]?[0-9]*|[.][0-9]+)$" $mantissa) -}}
{{- $sign := ternary "-" "" (contains "-" $exp) -}}
{{- $digits := regexReplaceAll "^0+([0-9])" (regexFind "[0-9]+$" $exp) "${1}" -}}
{{- $text = "" -}}
{{- if gt (len $digits) 2 -}}
{{- $text = ternary "0" "" (eq $sign "-") -}}
{{- else if le (int $digits) 30 -}}
{{- $text = printf "%.0f" (float64 (printf "%se%s%s" $mantissa $sign $digits)) -}}
{{- else if eq $sign "-" -}}
{{- $text = "0" -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if not .kube -}}
{{- if hasSuffix "m" (trimSuffix "b" (trimSuffix "B" $text)) -}}
{{- /* the server refuses a lower-case m, with or without a B (milli in a Kubernetes quantity, not mega):
kvlint.webhook.cli._parse_size */ -}}
{{- $text = "" -}}
{{- end -}}
{{- $text = lower $text | trimSuffix "b" -}}
{{- $units = dict "ki" 1024.0 "mi" 1048576.0 "gi" 1073741824.0 "k" 1000.0 "m" 1000000.0 "g" 1000000000.0 -}}
{{- $pattern = "^([0-9]+[.]?[0-9]*|[.][0-9]+)(e[-+]?[0-9]{1,2})?(ki|mi|gi|k|m|g)?$" -}}
{{- end -}}
{{- if regexMatch $pattern $text -}}
{{- $num := regexFind (ternary "^[0-9.]+" "^[0-9.]+(e[-+]?[0-9]{1,2})?" .kube) $text -}}
{{- $suffix := trimPrefix $num $text -}}
{{- $bytes := printf "%.0f" (mulf (float64 $num) (ternary (get $units $suffix) 1.0 (ne $suffix ""))) -}}
{{- if regexMatch "^[0-9]+$" $bytes }}{{ $bytes }}{{ end -}}{{- /* never +Inf or NaN */ -}}
{{- end -}}
{{- end -}}

{{/* Bytes the webhook's container may hold at once, by what the server enforces (kvlint.webhook.server.memory_bound,
whose start-up warning says the same of a limit set by hand; docs/webhook.md, "The container's memory limit"): each
worker at its address-space cap (--worker-memory, RLIMIT_AS, which bounds its resident memory too), the request
bodies the server holds before a worker decodes them (kvlint.webhook.review.WebhookSettings.body_buffer_bytes:
4 x (workers + 2) x --max-request-bytes), a header buffer of each connection at --max-connections
(kvlint.webhook.server.DEFAULT_MAX_HEADER_BYTES, 64 KiB) and 256 MiB for the server, the fork server and the
resource tracker themselves (about 100 MiB together when idle, the server some 50 MB more after 20,000 reviews).
"" when workerMemory is 0 (no cap) or a value is not read. */}}
{{- define "kvlint.memoryBound" -}}
{{- $worker := include "kvlint.bytes" (dict "value" .Values.workerMemory "kube" false) -}}
{{- $body := include "kvlint.bytes" (dict "value" .Values.maxRequestBytes "kube" false) -}}
{{- if and $worker $body (gt (float64 $worker) 0.0) -}}
{{- $workers := float64 .Values.workers -}}
{{- $held := mulf 4.0 (addf $workers 2.0) (float64 $body) -}}
{{- $headers := mulf (float64 .Values.maxConnections) 65536.0 -}}
{{- printf "%.0f" (addf (mulf $workers (float64 $worker)) $held $headers 268435456.0) -}}
{{- end -}}
{{- end -}}
