{{/* Object names are limited to 63 characters (DNS labels for the Service). */}}
{{- define "limitguard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "limitguard.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "limitguard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "limitguard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "limitguard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The webhook server's pods only: the hook Job and test pods must never match the Service or PDB. */}}
{{- define "limitguard.serverSelectorLabels" -}}
{{ include "limitguard.selectorLabels" . }}
app.kubernetes.io/component: webhook
{{- end -}}

{{- define "limitguard.labels" -}}
helm.sh/chart: {{ include "limitguard.chart" . }}
{{ include "limitguard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "limitguard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "limitguard.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "limitguard.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* The Secret holding tls.crt / tls.key (and ca.crt in generate and certManager modes). */}}
{{- define "limitguard.tlsSecretName" -}}
{{- if eq .Values.certs.mode "provided" -}}
{{- required "certs.provided.secretName is required when certs.mode is provided" .Values.certs.provided.secretName -}}
{{- else -}}
{{- printf "%s-tls" (include "limitguard.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "limitguard.certificateName" -}}
{{- printf "%s-serving" (include "limitguard.fullname" .) -}}
{{- end -}}

{{- define "limitguard.webhookConfigurationName" -}}
{{- include "limitguard.fullname" . -}}
{{- end -}}

{{/* Namespaces never sent to the webhooks and never checked: release namespace, kube-system, extras. */}}
{{- define "limitguard.excludedNamespaces" -}}
{{- $namespaces := concat (list .Release.Namespace "kube-system") .Values.config.excludedNamespaces | uniq -}}
{{- toJson $namespaces -}}
{{- end -}}

{{- define "limitguard.namespaceSelector" -}}
namespaceSelector:
  matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values: {{ include "limitguard.excludedNamespaces" . }}
{{- end -}}

{{/* The mutating webhook: the excluded namespaces, and only those that opted in unless
     config.bestEffortDefaults.requireNamespaceLabel is false (the server applies the same rule). */}}
{{- define "limitguard.defaultsNamespaceSelector" -}}
{{ include "limitguard.namespaceSelector" . }}
{{- if .Values.config.bestEffortDefaults.requireNamespaceLabel }}
  matchLabels:
    limitguard.io/defaults: enabled
{{- end }}
{{- end -}}

{{/* The placement webhook: the namespaces where config.placementHints gives hints (the server
     applies the same rule). Always: every namespace not excluded; Auto: those whose effective
     enforcement is Deny (namespaceEnforcement, else enforcement). Empty when no namespace can get
     one (mode Never, or Auto with no namespace at Deny): the entry is then not rendered. */}}
{{- define "limitguard.placementNamespaceSelector" -}}
{{- $config := .Values.config -}}
{{- $mode := $config.placementHints.mode | default "Auto" -}}
{{- $excluded := fromJsonArray (include "limitguard.excludedNamespaces" .) -}}
{{- $deny := list -}}
{{- $other := list -}}
{{- range $namespace, $action := $config.limitAware.namespaceEnforcement -}}
{{- if eq $action "Deny" -}}
{{- $deny = append $deny $namespace -}}
{{- else -}}
{{- $other = append $other $namespace -}}
{{- end -}}
{{- end -}}
{{- if eq $mode "Always" -}}
{{ include "limitguard.namespaceSelector" . }}
{{- else if and (eq $mode "Auto") (eq ($config.limitAware.enforcement | default "Deny") "Deny") -}}
namespaceSelector:
  matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values: {{ concat $excluded $other | uniq | toJson }}
{{- else if eq $mode "Auto" -}}
{{- $included := list -}}
{{- range $deny -}}
{{- if not (has . $excluded) -}}
{{- $included = append $included . -}}
{{- end -}}
{{- end -}}
{{- if $included -}}
namespaceSelector:
  matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: In
      values: {{ toJson $included }}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The placement entry's namespaceSelector when the entry is rendered, else empty. */}}
{{- define "limitguard.placementEntrySelector" -}}
{{- if .Values.webhooks.placement.enabled -}}
{{- include "limitguard.placementNamespaceSelector" . -}}
{{- end -}}
{{- end -}}

{{/* "true" when the MutatingWebhookConfiguration has an entry (the defaults or the placement one). */}}
{{- define "limitguard.mutatingRendered" -}}
{{- if or .Values.webhooks.defaults.enabled .Values.scheduler.enabled (include "limitguard.placementEntrySelector" .) -}}
true
{{- end -}}
{{- end -}}

{{/* The configmaps webhook may opt kube-system back in (webhooks.configmaps.checkKubeSystem). */}}
{{- define "limitguard.configmapsNamespaceSelector" -}}
{{- if .Values.webhooks.configmaps.checkKubeSystem -}}
namespaceSelector:
  matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values: {{ without (fromJsonArray (include "limitguard.excludedNamespaces" .)) "kube-system" | toJson }}
{{- else -}}
{{ include "limitguard.namespaceSelector" . }}
{{- end -}}
{{- end -}}

{{/* The Certificate cainjector copies caBundle from in certManager mode. */}}
{{- define "limitguard.injectCaFrom" -}}
{{- printf "%s/%s" .Release.Namespace (include "limitguard.certificateName" .) -}}
{{- end -}}

{{/* clientConfig of one webhook; caBundle only when it is known at render time (provided mode):
     in generate mode the hook Job patches it and in certManager mode cainjector does, so the chart
     never renders the field and re-rendering never clears it. */}}
{{- define "limitguard.clientConfig" -}}
{{- $root := index . 0 -}}
{{- $path := index . 1 -}}
clientConfig:
  service:
    name: {{ include "limitguard.fullname" $root }}
    namespace: {{ $root.Release.Namespace }}
    path: {{ $path }}
    port: {{ $root.Values.service.port }}
  {{- if eq $root.Values.certs.mode "provided" }}
  caBundle: {{ required "certs.provided.caBundle is required when certs.mode is provided" $root.Values.certs.provided.caBundle }}
  {{- end }}
{{- end -}}

{{/* Restricted Pod Security, shared by the server, the hook Job and the test pod. */}}
{{- define "limitguard.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "limitguard.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The Service Prometheus scrapes (a separate one: the webhook Service stays exactly what the
     apiserver calls) and the job label its targets get. */}}
{{- define "limitguard.metricsServiceName" -}}
{{- printf "%s-metrics" (include "limitguard.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "limitguard.metricsSelector" -}}
namespace="{{ .Release.Namespace }}", job="{{ include "limitguard.metricsServiceName" . }}"
{{- end -}}

{{/* Whether the server's leader writes node labels and taints: unless placement hints are Never. */}}
{{- define "limitguard.writesNodes" -}}
{{- if ne .Values.config.placementHints.mode "Never" -}}true{{- end -}}
{{- end -}}

{{/* The username the apiserver gives the server's ServiceAccount (the node-write policy matches it). */}}
{{- define "limitguard.serviceAccountUser" -}}
{{- printf "system:serviceaccount:%s:%s" .Release.Namespace (include "limitguard.serviceAccountName" .) -}}
{{- end -}}
