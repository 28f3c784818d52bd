{{- /* SPDX-License-Identifier: Apache-2.0 */}}
{{/* Labels helm adds beside app.kubernetes.io/name (never in selectors). */}}
{{- define "fakehw-dra.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* fakehw's inventory: the value, or the chart's default file. */}}
{{- define "fakehw-dra.fakehwConfig" -}}
{{- if .Values.fakehwConfig -}}
{{ .Values.fakehwConfig }}
{{- else -}}
{{ .Files.Get "files/fakehw.yaml" }}
{{- end -}}
{{- end -}}

{{/* The driver name: gpu.nvidia.com in the nvidia personality (the name
     that personality stands for), else the value. */}}
{{- define "fakehw-dra.driverName" -}}
{{- if eq .Values.personality "nvidia" -}}
gpu.nvidia.com
{{- else -}}
{{ .Values.driverName }}
{{- end -}}
{{- end -}}
