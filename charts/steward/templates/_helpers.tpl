{{/* The chart's name, or nameOverride. */}}
{{- define "steward.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The resource name prefix: fullnameOverride, or <release>-<name> (just <release> when it holds the name). */}}
{{- define "steward.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* A component's resource name: <fullname>-receiver, <fullname>-worker. Call with (list $ "receiver"). */}}
{{- define "steward.componentName" -}}
{{- $root := index . 0 -}}
{{- printf "%s-%s" (include "steward.fullname" $root | trunc 54 | trimSuffix "-") (index . 1) }}
{{- end }}

{{- define "steward.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels on every resource. */}}
{{- define "steward.labels" -}}
helm.sh/chart: {{ include "steward.chart" . }}
app.kubernetes.io/name: {{ include "steward.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: steward
{{- end }}

{{/* Selector labels of one component. Call with (list $ "receiver"). */}}
{{- define "steward.selectorLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ include "steward.name" $root }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{/* All labels of one component's resources. Call with (list $ "receiver"). */}}
{{- define "steward.componentLabels" -}}
{{ include "steward.labels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "steward.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "steward.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "steward.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag }}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}
{{- end }}

{{/* A value as an environment variable's text: whole numbers without an exponent (YAML numbers reach
templates as floats, and 10485760 would print as 1.048576e+07). */}}
{{- define "steward.envValue" -}}
{{- if and (kindIs "float64" .) (eq (floor .) .) }}
{{- . | int64 | toString }}
{{- else }}
{{- . | toString }}
{{- end }}
{{- end }}

{{/* The Secret with the forge credentials and webhook secrets: the chart's, or existingSecret. */}}
{{- define "steward.secretName" -}}
{{- default (include "steward.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{/* Where the GitHub App's private key is mounted in the workers. */}}
{{- define "steward.githubKeyDir" -}}/etc/steward/github-app{{- end }}

{{/* One optional variable from the Secret. Call with (list $ "STEWARD_X" "key"). */}}
{{- define "steward.secretEnv" -}}
- name: {{ index . 1 }}
  valueFrom:
    secretKeyRef:
      name: {{ include "steward.secretName" (index . 0) }}
      key: {{ index . 2 }}
      optional: true
{{- end }}

{{/* Variables both components need: the Redis URL when it comes from a Secret. */}}
{{- define "steward.commonEnv" -}}
{{- if .Values.redis.existingSecret }}
- name: STEWARD_REDIS_URL
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.existingSecret }}
      key: {{ .Values.redis.existingSecretKey }}
{{- end }}
{{- end }}

{{/* Pod annotations that roll the pods when their configuration changes. */}}
{{- define "steward.checksums" -}}
checksum/config: {{ include (print .Template.BasePath "/configmap.yaml") . | sha256sum }}
{{- if not .Values.secrets.existingSecret }}
checksum/secret: {{ include (print .Template.BasePath "/secret.yaml") . | sha256sum }}
{{- else if .Values.secrets.existingSecretVersion }}
checksum/secret: {{ .Values.secrets.existingSecretVersion | toString | sha256sum }}
{{- end }}
{{- end }}

{{/* The receiver's resources; without limits.memory, one derived from the body limit (values.yaml). */}}
{{- define "steward.receiver.resources" -}}
{{- $r := .Values.receiver }}
{{- $res := deepCopy $r.resources }}
{{- $limits := default dict $res.limits }}
{{- if not $limits.memory }}
{{- $body := .Values.config.maxBodyBytes | default 26214400 | int64 }}
{{- $large := .Values.config.maxLargeBodies | default 2 | int64 }}
{{- $bodyMi := div (add $body 1048575) 1048576 }}
{{- $_ := set $limits "memory" (printf "%dMi" (add $r.memoryBaseMi (mul $large $bodyMi 5))) }}
{{- end }}
{{- $_ := set $res "limits" $limits }}
{{- toYaml $res }}
{{- end }}

{{/* The worker's resources; without limits.memory, one derived from the body limit and the jobs at once. */}}
{{- define "steward.worker.resources" -}}
{{- $w := .Values.worker }}
{{- $res := deepCopy $w.resources }}
{{- $limits := default dict $res.limits }}
{{- if not $limits.memory }}
{{- $body := .Values.config.maxBodyBytes | default 26214400 | int64 }}
{{- $jobs := .Values.config.maxJobs | default 10 | int64 }}
{{- $bodyMi := div (add $body 1048575) 1048576 }}
{{- $_ := set $limits "memory" (printf "%dMi" (add $w.memoryBaseMi (mul $jobs $bodyMi 8))) }}
{{- end }}
{{- $_ := set $res "limits" $limits }}
{{- toYaml $res }}
{{- end }}

{{/* Refuse combinations that cannot work, with the fix in the message. */}}
{{- define "steward.validate" -}}
{{- if and (not .Values.redis.url) (not .Values.redis.existingSecret) }}
{{- fail "redis.url (or redis.existingSecret) is required: Steward needs a Redis" }}
{{- end }}
{{- if and .Values.redis.url (urlParse .Values.redis.url).userinfo }}
{{- fail "redis.url holds credentials and would land in a ConfigMap: put the whole URL in a Secret and set redis.existingSecret" }}
{{- end }}
{{- if and .Values.github.appId (not .Values.secrets.existingSecret) (not .Values.secrets.githubAppPrivateKey) }}
{{- fail "github.appId needs the App's private key: set secrets.githubAppPrivateKey (or github-app-private-key in secrets.existingSecret)" }}
{{- end }}
{{- if and .Values.worker.keda.enabled .Values.worker.autoscaling.enabled }}
{{- fail "worker.keda.enabled and worker.autoscaling.enabled both make an HPA for the workers: choose one" }}
{{- end }}
{{- end }}
