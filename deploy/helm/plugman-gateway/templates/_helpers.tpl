{{- define "plugman-gateway.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "plugman-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "plugman-gateway.labels" -}}
{{ include "plugman-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "plugman-gateway.configMap" -}}
{{- .Values.config.existingConfigMap | default (include "plugman-gateway.fullname" .) -}}
{{- end -}}

{{/* `plugman mcp serve`'s flags after the image's entrypoint (deploy/Dockerfile). */}}
{{- define "plugman-gateway.args" -}}
- --port
- {{ .Values.gateway.port | quote }}
- --auth
- {{ .Values.gateway.auth | quote }}
{{- if eq .Values.gateway.auth "oidc" }}
- --issuer
- {{ required "gateway.oidc.issuer is required with gateway.auth=oidc" .Values.gateway.oidc.issuer | quote }}
- --audience
- {{ required "gateway.oidc.audience is required with gateway.auth=oidc" .Values.gateway.oidc.audience | quote }}
{{- end }}
{{- if .Values.gateway.stateful }}
- --stateful
{{- end }}
- --call-timeout
- {{ .Values.gateway.callTimeout | quote }}
{{- range .Values.gateway.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}

{{/* The environment: the secrets by secretKeyRef (a Secret not named is left out), then
the plain variables of .Values.env. */}}
{{- define "plugman-gateway.env" -}}
{{- $secrets := .Values.secrets -}}
{{- $refs := list (list "PLUGMAN_GATEWAY_TOKEN" $secrets.gatewayToken) (list "PLUGMAN_GATEWAY_KEY" $secrets.gatewayKey) (list "PLUGMAN_REDIS_URL" $secrets.redisUrl) -}}
{{- range $refs }}
{{- $ref := index . 1 }}
{{- if $ref.name }}
- name: {{ index . 0 }}
  valueFrom:
    secretKeyRef:
      name: {{ $ref.name | quote }}
      key: {{ $ref.key | quote }}
{{- end }}
{{- end }}
{{- with .Values.env }}
{{ toYaml . }}
{{- end }}
{{- end -}}
