{{/* The release's objects are named <release>-gpubot, or just <release> when it already says gpubot. */}}
{{- define "gpubot.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "gpubot.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "gpubot.labels" -}}
{{ include "gpubot.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "gpubot.serviceAccountName" -}}
{{- default (include "gpubot.fullname" .) .Values.serviceAccount.name -}}
{{- end -}}

{{/* Who the bindings name: the ServiceAccount, and the groups an EKS access entry gives the IAM role
(gpubot reaches clusters as that role when it reads a kubeconfig). */}}
{{- define "gpubot.subjects" -}}
- kind: ServiceAccount
  name: {{ include "gpubot.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- range .Values.rbac.groups }}
- kind: Group
  apiGroup: rbac.authorization.k8s.io
  name: {{ . | quote }}
{{- end }}
{{- end -}}

{{/* The digest wins over the tag: a digest names one image for good. */}}
{{- define "gpubot.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/*
The `restricted` Pod Security Standard, for every container
(https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted): no privilege
escalation, all capabilities dropped, non-root, RuntimeDefault seccomp; and a read-only root
filesystem (writes go to the /tmp emptyDir).
*/}}
{{- define "gpubot.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* Values that cannot work together stop the install here, each with what to change. */}}
{{- define "gpubot.validate" -}}
{{- if not .Values.image.repository -}}
{{- fail "image.repository is empty: set it to where you pushed the image built from deploy/Dockerfile (--set image.repository=REGISTRY/gpubot)" -}}
{{- end -}}
{{- if not .Values.slack.existingSecret -}}
{{- fail "slack.existingSecret is empty: create a Secret with keys bot-token and app-token (socket) or signing-secret (http) and name it here (README \"Install on a cluster\")" -}}
{{- end -}}
{{- if not .Values.database.existingSecret -}}
{{- fail "database.existingSecret is empty: create a Secret with key url (postgresql+psycopg://USER:PASSWORD@HOST:5432/DB) and name it here" -}}
{{- end -}}
{{- if and (eq .Values.mode "socket") (ne (int .Values.replicas) 1) -}}
{{- fail (printf "mode=socket runs exactly one replica, got replicas=%v: set replicas=1, or mode=http for several" .Values.replicas) -}}
{{- end -}}
{{- if and .Values.ingress.enabled (ne .Values.mode "http") -}}
{{- fail "ingress.enabled needs mode=http: in Socket Mode Slack is reached over an outgoing WebSocket, there is nothing to route in" -}}
{{- end -}}
{{- if and .Values.kubeconfig.context (not .Values.kubeconfig.existingSecret) -}}
{{- fail (printf "kubeconfig.context=%s needs kubeconfig.existingSecret: without a kubeconfig gpubot reads only its own cluster (clusterName)" .Values.kubeconfig.context) -}}
{{- end -}}
{{- if eq (int .Values.httpPort) (int .Values.probePort) -}}
{{- fail (printf "probePort must differ from httpPort (both %v): the probes have a port of their own" .Values.httpPort) -}}
{{- end -}}
{{- if ge (float64 .Values.shutdownGrace) (float64 .Values.terminationGracePeriodSeconds) -}}
{{- fail (printf "shutdownGrace (%v s) must be shorter than terminationGracePeriodSeconds (%v s): the kubelet kills the pod then" .Values.shutdownGrace .Values.terminationGracePeriodSeconds) -}}
{{- end -}}
{{- end -}}
