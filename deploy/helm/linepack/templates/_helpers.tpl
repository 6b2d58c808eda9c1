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
{{- with include "linepack.versionLabel" . }}
app.kubernetes.io/version: {{ . | quote }}
{{- end }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The image tag of a service: its own, else image.tag, else the chart's appVersion. */}}
{{- define "linepack.tag" -}}
{{- .values.image.tag | default .root.Values.image.tag | default .root.Chart.AppVersion -}}
{{- end -}}

{{/*
The app.kubernetes.io/version label: the tag as a valid label value (at most 63 of [A-Za-z0-9_.-], alphanumeric at both
ends: "1.2.3+build.4" reads 1.2.3_build.4), or no label when nothing of it is left. A digest is never a label.
*/}}
{{- define "linepack.versionLabel" -}}
{{- $sanitised := regexReplaceAll "[^A-Za-z0-9_.-]" (include "linepack.tag" .) "_" | trunc 63 -}}
{{- regexReplaceAll "^[^A-Za-z0-9]+|[^A-Za-z0-9]+$" $sanitised "" -}}
{{- end -}}

{{/* <registry>/linepack-<service>:<tag>, or <registry>/linepack-<service>@sha256:<digest> when the digest is set. */}}
{{- define "linepack.image" -}}
{{- $repository := printf "%s/%s" (trimSuffix "/" .root.Values.image.registry) .values.image.repository -}}
{{- with .values.image.digest -}}
{{- printf "%s@%s" $repository . -}}
{{- else -}}
{{- printf "%s:%s" $repository (include "linepack.tag" .) -}}
{{- end -}}
{{- end -}}

{{/* The ServiceAccount the pods run as; empty: the namespace's default. */}}
{{- define "linepack.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "linepack.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/*
checksum/secrets: a digest of every Secret value a pod reads (`refs`: { name, key } references; and the
secretKeyRefs of its extraEnv), from secrets.data when the chart creates the Secrets, else from the cluster (`lookup`
at install and upgrade; nothing under `helm template`). A rotated value changes the pod template, so the Deployment
rolls; a value the pod does not read leaves it alone.
*/}}
{{- define "linepack.secretsChecksum" -}}
{{- $root := .root -}}
{{- $refs := list -}}
{{- range .refs }}{{ $refs = append $refs (dict "name" .name "key" .key) }}{{ end -}}
{{- range .values.extraEnv }}
{{- with (.valueFrom).secretKeyRef }}{{ $refs = append $refs (dict "name" .name "key" .key) }}{{ end }}
{{- end -}}
{{- $lines := list -}}
{{- range $refs }}
{{- $value := "" -}}
{{- if $root.Values.secrets.create -}}
{{- $value = dig .name .key "" $root.Values.secrets.data | toString -}}
{{- else -}}
{{- $value = dig "data" .key "" (lookup "v1" "Secret" $root.Release.Namespace .name) | toString -}}
{{- end -}}
{{- $lines = append $lines (printf "%s/%s=%s" .name .key $value) -}}
{{- end -}}
{{- $lines | sortAlpha | join "\n" | sha256sum -}}
{{- end -}}

{{/*
Quantity (e.g. 512Mi, 1Gi, 600M, 536870912) in MiB, rounded up; fails on anything else. The gateway's memory check
compares with it.
*/}}
{{- define "linepack.mebibytes" -}}
{{- $quantity := toString .quantity -}}
{{- $number := regexFind "^[0-9]+(\\.[0-9]+)?" $quantity -}}
{{- $suffix := trimPrefix $number $quantity -}}
{{- $factors := dict "" 1 "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 -}}
{{- if or (not $number) (not (hasKey $factors $suffix)) -}}
{{- fail (printf "%s: %q is not a memory quantity this chart reads (a number with Ki, Mi, Gi, Ti, k, M, G or T)" .path $quantity) -}}
{{- end -}}
{{- divf (mulf (float64 $number) (get $factors $suffix)) 1048576 | ceil | int -}}
{{- end -}}

{{/*
Fails unless every subgraph the supergraph routes to (its join__graph names) has an entry in subgraphs: without one the
gateway gets no SUBGRAPH_URL_<NAME> and sends that subgraph's fields to the supergraph's docker-compose address, where
nothing answers in a cluster. An entry that is disabled is fine: the gateway reaches it where its team runs it.
*/}}
{{- define "linepack.checkRoutedSubgraphs" -}}
{{- range (regexFindAll `@join__graph\(name: "[^"]+"` (.Files.Get "files/supergraph.graphql") -1) }}
{{- $name := regexReplaceAll `^@join__graph\(name: "([^"]+)"$` . "${1}" }}
{{- if not (hasKey $.Values.subgraphs $name) }}
{{- fail (printf "files/supergraph.graphql routes to the subgraph %q, but subgraphs.%s is not in the values: nothing would serve it (npm run registry-files writes a block for every subgraph of the registry into values.yaml)" $name $name) }}
{{- end }}
{{- end }}
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

{{/*
The Redis Secret references of redis.mode (a JSON list, for the pods' checksum/secrets): the URL, or the passwords.
*/}}
{{- define "linepack.redisSecretRefs" -}}
{{- $refs := list -}}
{{- if eq .Values.redis.mode "url" -}}
{{- $refs = append $refs .Values.secrets.redisUrl -}}
{{- else -}}
{{- with .Values.secrets.redisPassword }}{{ $refs = append $refs . }}{{ end -}}
{{- if eq .Values.redis.mode "sentinel" }}{{ with .Values.secrets.redisSentinelPassword }}{{ $refs = append $refs . }}{{ end }}{{ end -}}
{{- end -}}
{{- toJson $refs -}}
{{- end -}}

{{/* Where Redis is, as every service reads it (lib/redis.ts redisEnvSchema): one of url, cluster, sentinel. */}}
{{- define "linepack.redisEnv" -}}
{{- $redis := .Values.redis -}}
{{- if eq $redis.mode "url" -}}
{{- include "linepack.secretEnv" (dict "env" "REDIS_URL" "ref" .Values.secrets.redisUrl "path" "secrets.redisUrl") }}
{{- else -}}
{{- if eq $redis.mode "cluster" }}
- name: REDIS_CLUSTER_NODES
  value: {{ required "redis.clusterNodes: at least one host:port with redis.mode cluster" ($redis.clusterNodes | join ",") | quote }}
{{- else }}
- name: REDIS_SENTINELS
  value: {{ required "redis.sentinels: at least one host:port with redis.mode sentinel" ($redis.sentinels | join ",") | quote }}
- name: REDIS_SENTINEL_NAME
  value: {{ required "redis.sentinelName: the primary's name is required with redis.mode sentinel" $redis.sentinelName | quote }}
{{- with .Values.secrets.redisSentinelPassword }}
{{ include "linepack.secretEnv" (dict "env" "REDIS_SENTINEL_PASSWORD" "ref" . "path" "secrets.redisSentinelPassword") }}
{{- end }}
{{- end }}
{{- with $redis.username }}
- name: REDIS_USERNAME
  value: {{ . | quote }}
{{- end }}
{{- with .Values.secrets.redisPassword }}
{{ include "linepack.secretEnv" (dict "env" "REDIS_PASSWORD" "ref" . "path" "secrets.redisPassword") }}
{{- end }}
{{- if $redis.tls }}
- name: REDIS_TLS
  value: "true"
{{- end }}
{{- if $redis.waitReplicas }}
- name: REDIS_WAIT_REPLICAS
  value: {{ $redis.waitReplicas | quote }}
{{- end }}
{{- end -}}
{{- end -}}

{{/* Environment every service has: METRICS_PORT/HOST (reachable by Prometheus in the cluster), LOG_LEVEL, HOST, the drain period and optional tracing. */}}
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
- name: SHUTDOWN_DRAIN_SECONDS
  value: {{ .root.Values.shutdownDrainSeconds | quote }}
{{- with .root.Values.tracing.otlpEndpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* The service's own env map and extraEnv list. */}}
{{- define "linepack.extraEnv" -}}
{{- $path := ternary "gateway" (printf "subgraphs.%s" .component) (eq .component "gateway") }}
{{- $drainSet := hasKey (.values.env | default dict) "SHUTDOWN_DRAIN_SECONDS" }}
{{- range (.values.extraEnv | default list) }}{{ if eq .name "SHUTDOWN_DRAIN_SECONDS" }}{{ $drainSet = true }}{{ end }}{{ end }}
{{- if $drainSet }}
{{- fail (printf "%s: SHUTDOWN_DRAIN_SECONDS is set by shutdownDrainSeconds, which terminationGracePeriodSeconds is checked against; set that instead" $path) }}
{{- end }}
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

{{/*
Pod-level fields shared by every service: security, scheduling, shutdown. The grace period must cover the whole stop
(lib/shutdown.ts): the preStop pause, the drain, 10 s for requests in flight (SHUTDOWN_GRACE_MS), 1 s for the last spans
(SHUTDOWN_FLUSH_MS), 2 s for a gateway's workers to exit (gateway/src/cluster.ts), 2 s to spare.
*/}}
{{- define "linepack.podSpec" -}}
{{- $v := .root.Values -}}
{{- $stopSeconds := add (int $v.preStopSleepSeconds) (int $v.shutdownDrainSeconds) 15 }}
{{- if lt (int $v.terminationGracePeriodSeconds) (int $stopSeconds) }}
{{- fail (printf "terminationGracePeriodSeconds is %d but a pod needs %d to stop without cutting a request: preStopSleepSeconds (%d) + shutdownDrainSeconds (%d) + 15 (requests in flight 10 s, last spans, gateway workers' exit); raise it or shorten the drain" (int $v.terminationGracePeriodSeconds) (int $stopSeconds) (int $v.preStopSleepSeconds) (int $v.shutdownDrainSeconds)) }}
{{- end }}
{{- with include "linepack.serviceAccountName" .root }}
serviceAccountName: {{ . }}
{{- end }}
automountServiceAccountToken: {{ $v.serviceAccount.automountToken }}
enableServiceLinks: false
terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
securityContext:
  {{- toYaml $v.podSecurityContext | nindent 2 }}
{{- with $v.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.extraInitContainers }}
initContainers:
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
  {{- $pdb := .values.podDisruptionBudget }}
  {{- if hasKey $pdb "minAvailable" }}
  minAvailable: {{ $pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ hasKey $pdb "maxUnavailable" | ternary $pdb.maxUnavailable 1 }}
  {{- end }}
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


{{/*
A HorizontalPodAutoscaler (autoscaling/v2) of one service's Deployment on CPU (and memory, when its target is set)
utilisation of requests; behavior before metrics, so the gateway appends its Pods metric after this.
*/}}
{{- define "linepack.hpa" -}}
{{- $as := .values.autoscaling -}}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "linepack.componentName" . }}
  labels:
    {{- include "linepack.labels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "linepack.componentName" . }}
  minReplicas: {{ $as.minReplicas }}
  maxReplicas: {{ $as.maxReplicas }}
  {{- with $as.behavior }}
  behavior:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $as.targetCPUUtilizationPercentage }}
    {{- if $as.targetMemoryUtilizationPercentage }}
    - type: Resource
      resource:
        name: memory
        target:
          type: Utilization
          averageUtilization: {{ $as.targetMemoryUtilizationPercentage }}
    {{- end }}
{{- end -}}

{{/*
NetworkPolicy egress rules every Linepack pod needs: DNS, the stores in `stores` (redis, mongodb), the OTLP collector
when tracing is on, and networkPolicy.egress.extra. A target without `to` allows its ports to any address.
*/}}
{{- define "linepack.egressTargets" -}}
{{- $egress := .root.Values.networkPolicy.egress -}}
{{- $targets := list (dict "target" $egress.dns "protocols" (list "UDP" "TCP")) -}}
{{- range .stores }}{{ $targets = append $targets (dict "target" (get $egress .) "protocols" (list "TCP")) }}{{ end -}}
{{- if .root.Values.tracing.otlpEndpoint }}{{ $targets = append $targets (dict "target" $egress.otlp "protocols" (list "TCP")) }}{{ end -}}
{{- range $targets }}
{{- $protocols := .protocols }}
- ports:
    {{- range .target.ports }}
    {{- $port := . }}
    {{- range $protocols }}
    - { protocol: {{ . }}, port: {{ $port }} }
    {{- end }}
    {{- end }}
  {{- with .target.to }}
  to:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}
{{- with $egress.extra }}
{{ toYaml . }}
{{- end }}
{{- end -}}
