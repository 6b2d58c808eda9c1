{{/*
Prefix of every resource name: fullnameOverride, else the release name. Service names are <fullname>-<service>
(e.g. linepack-gateway, linepack-assets), which is also how the gateway finds the subgraphs.
Truncated so that "<fullname>-measurements" stays within 63 characters.
*/}}
{{- define "linepack.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 50 | trimSuffix "-" -}}
{{- end -}}

{{/* <fullname>-<component>: the name of a service's Deployment, Service, PDB, HPA and ServiceMonitor. */}}
{{- define "linepack.componentName" -}}
{{- printf "%s-%s" (include "linepack.fullname" .root) .component -}}
{{- end -}}

{{/* Labels that select one service's pods. */}}
{{- define "linepack.selectorLabels" -}}
app.kubernetes.io/name: linepack
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Every label of one service's resources. */}}
{{- define "linepack.labels" -}}
{{ include "linepack.selectorLabels" . }}
app.kubernetes.io/part-of: linepack
app.kubernetes.io/version: {{ (include "linepack.tag" .) | replace "+" "_" | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The image tag of a service: its own, else image.tag, else the chart's appVersion. */}}
{{- define "linepack.tag" -}}
{{- .values.image.tag | default .root.Values.image.tag | default .root.Chart.AppVersion -}}
{{- end -}}

{{/* <registry>/linepack-<service>:<tag> */}}
{{- define "linepack.image" -}}
{{- printf "%s/%s:%s" (trimSuffix "/" .root.Values.image.registry) .values.image.repository (include "linepack.tag" .) -}}
{{- end -}}

{{/* The host the gateway reaches a subgraph at (its Service in this release or in a team's release). */}}
{{- define "linepack.subgraphHost" -}}
{{- .values.externalHost | default (printf "%s-%s" (include "linepack.fullname" .root) .component) -}}
{{- end -}}

{{/* A { name, key } Secret reference as an env var source; fails early on an empty name or key. */}}
{{- define "linepack.secretEnv" -}}
- name: {{ .env }}
  valueFrom:
    secretKeyRef:
      name: {{ required (printf "%s: the Secret's name is required (README \"Secrets\")" .path) .ref.name | quote }}
      key: {{ required (printf "%s: the Secret's key is required (README \"Secrets\")" .path) .ref.key | quote }}
{{- end -}}

{{/* Environment every service has: METRICS_PORT/HOST (reachable by Prometheus in the cluster), LOG_LEVEL, HOST and optional tracing. */}}
{{- define "linepack.commonEnv" -}}
- name: HOST
  value: "0.0.0.0"
- name: PORT
  value: {{ .values.port | quote }}
- name: METRICS_PORT
  value: {{ .root.Values.metrics.port | quote }}
- name: METRICS_HOST
  value: "0.0.0.0"
- name: LOG_LEVEL
  value: {{ .values.logLevel | default .root.Values.logLevel | quote }}
{{- with .root.Values.tracing.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* The service's own env map and extraEnv list. */}}
{{- define "linepack.extraEnv" -}}
{{- range $name, $value := .values.env }}
- name: {{ $name }}
  value: {{ $value | toString | quote }}
{{- end }}
{{- with .values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Pod annotations: Prometheus scraping, then the service's own. */}}
{{- define "linepack.podAnnotations" -}}
{{- if .root.Values.metrics.podAnnotations }}
prometheus.io/scrape: "true"
prometheus.io/port: {{ .root.Values.metrics.port | quote }}
prometheus.io/path: /metrics
{{- end }}
{{- with .values.podAnnotations }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Pod-level fields shared by every service: security, scheduling, shutdown. */}}
{{- define "linepack.podSpec" -}}
{{- $v := .root.Values -}}
automountServiceAccountToken: false
enableServiceLinks: false
terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
securityContext:
  {{- toYaml $v.podSecurityContext | nindent 2 }}
{{- with $v.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.scheduling.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with $v.scheduling.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with $v.scheduling.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if $v.scheduling.affinity }}
affinity:
  {{- toYaml $v.scheduling.affinity | nindent 2 }}
{{- else if $v.scheduling.spreadAcrossNodes }}
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "linepack.selectorLabels" . | nindent 14 }}
{{- end }}
{{- if or $v.scheduling.spreadAcrossNodes $v.scheduling.spreadAcrossZones }}
topologySpreadConstraints:
  {{- if $v.scheduling.spreadAcrossNodes }}
  - maxSkew: 1
    topologyKey: kubernetes.io/hostname
    whenUnsatisfiable: {{ $v.scheduling.whenUnsatisfiable }}
    labelSelector:
      matchLabels:
        {{- include "linepack.selectorLabels" . | nindent 8 }}
    matchLabelKeys: [pod-template-hash]
  {{- end }}
  {{- if $v.scheduling.spreadAcrossZones }}
  - maxSkew: 1
    topologyKey: topology.kubernetes.io/zone
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "linepack.selectorLabels" . | nindent 8 }}
    matchLabelKeys: [pod-template-hash]
  {{- end }}
{{- end }}
{{- end -}}

{{/* Container fields shared by every service: ports, probes, security, resources, the preStop pause. */}}
{{- define "linepack.containerCommon" -}}
{{- $v := .root.Values -}}
image: {{ include "linepack.image" . }}
imagePullPolicy: {{ $v.image.pullPolicy }}
ports:
  - name: http
    containerPort: {{ .values.port }}
    protocol: TCP
  - name: metrics
    containerPort: {{ $v.metrics.port }}
    protocol: TCP
startupProbe:
  httpGet: { path: /healthz, port: http }
  {{- toYaml $v.probes.startup | nindent 2 }}
livenessProbe:
  httpGet: { path: /healthz, port: http }
  {{- toYaml $v.probes.liveness | nindent 2 }}
readinessProbe:
  httpGet: { path: /readyz, port: http }
  {{- toYaml $v.probes.readiness | nindent 2 }}
{{- if gt (int $v.preStopSleepSeconds) 0 }}
lifecycle:
  preStop:
    sleep:
      seconds: {{ $v.preStopSleepSeconds }}
{{- end }}
securityContext:
  {{- toYaml $v.containerSecurityContext | nindent 2 }}
resources:
  {{- toYaml .values.resources | nindent 2 }}
{{- end -}}

{{/* A Service with the `http` port and the separate `metrics` port. */}}
{{- define "linepack.service" -}}
apiVersion: v1
kind: Service
metadata:
  name: {{ include "linepack.componentName" . }}
  labels:
    {{- include "linepack.labels" . | nindent 4 }}
  {{- with (.values.service).annotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  type: {{ (.values.service).type | default "ClusterIP" }}
  selector:
    {{- include "linepack.selectorLabels" . | nindent 4 }}
  ports:
    - name: http
      port: {{ .values.port }}
      targetPort: http
      protocol: TCP
---
# The metrics port on a Service of its own, always ClusterIP: making the service a LoadBalancer or NodePort (or an
# Ingress on it) never publishes /metrics.
apiVersion: v1
kind: Service
metadata:
  name: {{ include "linepack.componentName" . }}-metrics
  labels:
    {{- include "linepack.labels" . | nindent 4 }}
    linepack.dev/metrics: "true"
spec:
  type: ClusterIP
  selector:
    {{- include "linepack.selectorLabels" . | nindent 4 }}
  ports:
    - name: metrics
      port: {{ .root.Values.metrics.port }}
      targetPort: metrics
      protocol: TCP
{{- end -}}

{{/* A PodDisruptionBudget (policy/v1). */}}
{{- define "linepack.pdb" -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "linepack.componentName" . }}
  labels:
    {{- include "linepack.labels" . | nindent 4 }}
spec:
  maxUnavailable: {{ .values.podDisruptionBudget.maxUnavailable }}
  selector:
    matchLabels:
      {{- include "linepack.selectorLabels" . | nindent 6 }}
{{- end -}}

{{/* A ServiceMonitor (monitoring.coreos.com/v1) scraping the `metrics` port. */}}
{{- define "linepack.serviceMonitor" -}}
{{- $sm := .root.Values.metrics.serviceMonitor -}}
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: {{ include "linepack.componentName" . }}
  labels:
    {{- include "linepack.labels" . | nindent 4 }}
    {{- with $sm.labels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  selector:
    matchLabels:
      {{- include "linepack.selectorLabels" . | nindent 6 }}
      linepack.dev/metrics: "true"
  endpoints:
    - port: metrics
      path: /metrics
      interval: {{ $sm.interval }}
      scrapeTimeout: {{ $sm.scrapeTimeout }}
{{- end -}}
