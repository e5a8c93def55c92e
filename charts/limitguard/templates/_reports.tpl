{{- /* Policy reports and events (values reports.*, events.*): docs/observability.md. */ -}}

{{- /* The namespaces whose scheduler ConfigMaps the leader reads: the listed ones, and the release
namespace when the chart runs the second scheduler (its KubeSchedulerConfiguration lives there). */ -}}
{{- define "limitguard.schedulerConfigNamespaces" -}}
{{- $namespaces := .Values.reports.schedulerConfigNamespaces -}}
{{- if .Values.scheduler.enabled -}}
{{- $namespaces = append $namespaces .Release.Namespace -}}
{{- end -}}
{{- toJson (uniq $namespaces) -}}
{{- end -}}

{{- define "limitguard.reportsApiGroup" -}}
{{- if eq .Values.reports.api "openreports" }}openreports.io{{ else }}wgpolicyk8s.io{{ end -}}
{{- end -}}

{{- define "limitguard.reportsResources" -}}
{{- if eq .Values.reports.api "openreports" }}["reports", "clusterreports"]{{ else }}["policyreports", "clusterpolicyreports"]{{ end -}}
{{- end -}}
