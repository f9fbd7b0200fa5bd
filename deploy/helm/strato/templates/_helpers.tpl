{{/* The name of every object: the release's, with "strato" added unless it has it. */}}
{{- define "strato.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels of every object; "component" is the role. */}}
{{- define "strato.labels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
{{- end -}}

{{- define "strato.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* The DNS suffix of a headless service's pods: SVC.NAMESPACE.svc.DOMAIN. */}}
{{- define "strato.svcDomain" -}}
{{ .svc }}.{{ .root.Release.Namespace }}.svc.{{ .root.Values.clusterDomain }}
{{- end -}}

{{/* Meta's gRPC addresses, comma-separated. */}}
{{- define "strato.metaAddrs" -}}
{{- $full := include "strato.fullname" . -}}
{{- $dom := include "strato.svcDomain" (dict "root" . "svc" (printf "%s-meta" $full)) -}}
{{- $out := list -}}
{{- range $i := until (int .Values.meta.replicas) -}}
{{- $out = append $out (printf "%s-meta-%d.%s:9860" $full $i $dom) -}}
{{- end -}}
{{- join "," $out -}}
{{- end -}}

{{/* Meta's --peers: ID (ordinal + 1) = address. */}}
{{- define "strato.metaPeers" -}}
{{- $out := list -}}
{{- range $i, $a := splitList "," (include "strato.metaAddrs" .) -}}
{{- $out = append $out (printf "%d=%s" (add1 $i) $a) -}}
{{- end -}}
{{- join "," $out -}}
{{- end -}}

{{/* topologySpreadConstraints of a role's values, with its pods' selector. */}}
{{- define "strato.spread" -}}
{{- range .spread }}
- topologyKey: {{ .topologyKey }}
  maxSkew: {{ .maxSkew | default 1 }}
  whenUnsatisfiable: {{ .whenUnsatisfiable | default "DoNotSchedule" }}
  labelSelector:
    matchLabels:
      {{- include "strato.selector" $ | nindent 6 }}
{{- end }}
{{- end -}}

{{/* The pod's downward-API variables. */}}
{{- define "strato.podEnv" -}}
- name: POD_IP
  valueFrom: {fieldRef: {fieldPath: status.podIP}}
- name: POD_NAME
  valueFrom: {fieldRef: {fieldPath: metadata.name}}
- name: POD_NAMESPACE
  valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
{{- end -}}

{{/* The init container that issues the pod's certificate (tls.enabled):
     strato admin ca issue, for the pod's IP and DNS names, into /tls. */}}
{{- define "strato.tlsInit" -}}
{{- if .root.Values.tls.enabled }}
- name: tls
  image: {{ include "strato.image" .root }}
  imagePullPolicy: {{ .root.Values.image.pullPolicy }}
  args: [admin, ca, issue, --dir, /ca, --name, node, --out, /tls,
         --host, "$(POD_IP)",
         --host, "$(POD_NAME).{{ .svc }}",
         --host, "$(POD_NAME).{{ .svc }}.$(POD_NAMESPACE).svc",
         --host, "$(POD_NAME).{{ .svc }}.$(POD_NAMESPACE).svc.{{ .root.Values.clusterDomain }}"
         {{- range .hosts }}, --host, {{ . | quote }}{{ end }}]
  env:
    {{- include "strato.podEnv" . | nindent 4 }}
  volumeMounts:
    - {name: ca-key, mountPath: /ca, readOnly: true}
    - {name: tls, mountPath: /tls}
{{- end }}
{{- end -}}

{{/* The volumes of the certificates: the CA (ca.crt alone for the servers,
     ca.key too for the init container) and the pod's own. */}}
{{- define "strato.tlsVolumes" -}}
{{- if .Values.tls.enabled }}
- name: ca
  secret:
    secretName: {{ .Values.tls.caSecret }}
    items: [{key: ca.crt, path: ca.crt}]
- name: ca-key
  secret:
    secretName: {{ .Values.tls.caSecret }}
    defaultMode: 0440
- name: tls
  emptyDir: {medium: Memory}
{{- end }}
{{- end -}}

{{- define "strato.tlsArgs" -}}
{{- if .Values.tls.enabled }}, --tls-cert, /tls/node.crt, --tls-key, /tls/node.key, --tls-ca, /ca/ca.crt{{ end -}}
{{- end -}}

{{- define "strato.tlsMounts" -}}
{{- if .Values.tls.enabled }}
- {name: ca, mountPath: /ca, readOnly: true}
- {name: tls, mountPath: /tls, readOnly: true}
{{- end }}
{{- end -}}

{{- define "strato.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}

{{/* Probes on a role's HTTP port: readiness /readyz, liveness /healthz. */}}
{{- define "strato.probes" -}}
readinessProbe:
  httpGet: {path: /readyz, port: http, scheme: {{ .scheme }}}
  periodSeconds: 5
livenessProbe:
  httpGet: {path: /healthz, port: http, scheme: {{ .scheme }}}
  periodSeconds: 10
  failureThreshold: 6
{{- end -}}

{{- define "strato.extraArgs" -}}
{{- range . }}, {{ . | quote }}{{ end -}}
{{- end -}}
