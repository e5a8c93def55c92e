{{/* The second scheduler (values `scheduler`): names, image tag, and its KubeSchedulerConfiguration. */}}
{{- define "limitguard.schedulerFullname" -}}
{{- printf "%s-scheduler" (include "limitguard.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "limitguard.schedulerSelectorLabels" -}}
{{ include "limitguard.selectorLabels" . }}
app.kubernetes.io/component: scheduler
{{- end -}}

{{/* The cluster's minor release for the image tag: config.kubernetesVersion when set; else the
     apiserver's when Helm talks to a cluster (a real cluster serves apiregistration.k8s.io/v1, which
     Helm's built-in list for `helm template` lacks; tools that render with the cluster's API list,
     such as Argo CD, pass it); else none (""), and rendering fails unless scheduler.image.tag is
     set. The apiserver's version is read from its full version string (v1.31.2-eks-7f9249a,
     v1.33.5-gke.1080000), not from its minor field, which some providers report as "31+". */}}
{{- define "limitguard.schedulerClusterMinor" -}}
{{- $version := .Values.config.kubernetesVersion -}}
{{- if and (not $version) (.Capabilities.APIVersions.Has "apiregistration.k8s.io/v1") -}}
{{- $version = .Capabilities.KubeVersion.Version -}}
{{- end -}}
{{- if $version -}}
{{- regexReplaceAll "^v?1\\.([0-9]+).*$" $version "${1}" -}}
{{- end -}}
{{- end -}}

{{/* kube-scheduler may be one minor older than the apiserver, never newer: the tag of the cluster's
     minor, or of the newest minor in the table when the cluster is exactly one newer. Without a
     cluster the release is unknown: guessing the newest could run a scheduler newer than the
     apiserver, so rendering stops and says what to set. */}}
{{- define "limitguard.schedulerImage" -}}
{{- $image := .Values.scheduler.image -}}
{{- $tag := $image.tag -}}
{{- if not $tag -}}
{{- $newest := 0 -}}
{{- range $release, $_ := $image.tags -}}
{{- $newest = max $newest (atoi (regexReplaceAll "^1\\." $release "")) -}}
{{- end -}}
{{- $minor := include "limitguard.schedulerClusterMinor" . -}}
{{- if eq $minor "" -}}
{{- fail "scheduler.enabled: no cluster to read the Kubernetes release from (helm template, a client-side dry run), so the kube-scheduler image is unknown: set config.kubernetesVersion (e.g. 1.35) or scheduler.image.tag. --kube-version alone is not read: without a cluster, Helm's .Capabilities.KubeVersion is Helm's own default, not the cluster's" -}}
{{- end -}}
{{- $minor = atoi $minor -}}
{{- $release := printf "1.%d" (int $minor) -}}
{{- if hasKey $image.tags $release -}}
{{- $tag = index $image.tags $release -}}
{{- else if eq (int $minor) (add1 $newest) -}}
{{- $tag = index $image.tags (printf "1.%d" (int $newest)) -}}
{{- else -}}
{{- fail (printf "scheduler.image.tags has no kube-scheduler tag for Kubernetes %s (kube-scheduler must not be newer than the apiserver, nor more than one minor older): set scheduler.image.tag" $release) -}}
{{- end -}}
{{- end -}}
{{- printf "%s:%s" $image.repository $tag -}}
{{- end -}}

{{- define "limitguard.schedulerConfiguration" -}}
{{- $scheduler := .Values.scheduler -}}
{{- $serverName := printf "%s.%s.svc" (include "limitguard.fullname" .) .Release.Namespace -}}
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
# Its own Lease: the defaults (kube-system/kube-scheduler) would contend with the cluster's scheduler.
leaderElection:
  leaderElect: true
  resourceLock: leases
  resourceName: {{ include "limitguard.schedulerFullname" . }}
  resourceNamespace: {{ .Release.Namespace }}
profiles:
  - schedulerName: {{ $scheduler.schedulerName }}
extenders:
  - urlPrefix: https://{{ $serverName }}:{{ .Values.service.port }}/extender
    filterVerb: filter
    prioritizeVerb: prioritize
    # Preemption asks limitguard too: a node whose proposed victims do not free the pod's limits is
    # dropped, instead of evicting pods for a binding limitguard would deny.
    preemptVerb: preempt
    weight: {{ $scheduler.extender.weight }}
    # Names only: limitguard has its own node cache, and the requests stay small.
    nodeCacheCapable: true
    enableHTTPS: true
    tlsConfig:
      serverName: {{ $serverName }}
      {{- if eq .Values.certs.mode "provided" }}
      caData: {{ .Values.certs.provided.caBundle }}
      {{- else }}
      # Read once at start: the trust sidecar keeps it current and restarts kube-scheduler.
      caFile: /etc/limitguard/trust/ca.crt
      {{- end }}
      {{- if $scheduler.clientCertificateSecret }}
      certFile: /etc/limitguard/client/tls.crt
      keyFile: /etc/limitguard/client/tls.key
      {{- end }}
    httpTimeout: {{ $scheduler.extender.httpTimeout }}
    # Exact placement or none: a pod is never placed without limitguard's filter.
    ignorable: false
{{- end -}}


{{/* Whether the chart publishes the CA of the next serving certificate before it is used: the
     chart's own cert-manager CA (its Secret's tls.crt). */}}
{{- define "limitguard.upcomingCASecret" -}}
{{- if and (eq .Values.certs.mode "certManager") (not .Values.certs.certManager.issuerRef) -}}
{{- printf "%s-ca" (include "limitguard.fullname" .) -}}
{{- end -}}
{{- end -}}
