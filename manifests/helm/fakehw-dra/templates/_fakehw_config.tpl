{{- /* SPDX-License-Identifier: Apache-2.0 */}}
{{- /*
fakehwConfig checked at template time, so `helm install` refuses a config
fakehw would refuse at the pod's start. Helm's YAML reader keeps no line
numbers and reads YAML 1.1, so this covers what survives it: the shape, the
keys (the same lists as fakehw/config_parse.c, config_mig.c and
config_sharing.c), the types, the ranges, the enums, the catalogue names and
unique node names. The rest (quantities, durations, UUIDs, MIG placements,
device limits) is fakehw's at the pod's start, with the file:line message
in the container's termination message. Messages use fakehw's key paths.
*/}}

{{- define "fakehw-dra.fakehwConfig.known.top" -}}seed driverVersion cudaDriverVersion defaults nodes flips{{- end -}}
{{- define "fakehw-dra.fakehwConfig.known.defaults" -}}seed driverVersion cudaDriverVersion devices flips{{- end -}}
{{- define "fakehw-dra.fakehwConfig.known.node" -}}name seed driverVersion cudaDriverVersion devices flips{{- end -}}
{{- define "fakehw-dra.fakehwConfig.known.device" -}}count name profile productName architecture brand memory computeCapability driverVersion cudaDriverVersion uuid pciBusID pcieRoot numaNode health healthReason attach virtual vfio mig sharing{{- end -}}
{{- define "fakehw-dra.fakehwConfig.known.attach" -}}delay failure{{- end -}}
{{- define "fakehw-dra.fakehwConfig.known.flip" -}}device after state xid for reason{{- end -}}
{{- define "fakehw-dra.fakehwConfig.known.mig" -}}mode instances{{- end -}}
{{- define "fakehw-dra.fakehwConfig.known.instance" -}}profile placement{{- end -}}
{{- define "fakehw-dra.fakehwConfig.known.sharing" -}}memory{{- end -}}
{{- define "fakehw-dra.fakehwConfig.known.sharingMemory" -}}default min step{{- end -}}
{{- /* fakehw/catalogue.c; profiles match case-insensitively. */}}
{{- define "fakehw-dra.fakehwConfig.profiles" -}}A100-SXM4-40GB A100-SXM4-80GB A100-PCIE-40GB A100-PCIE-80GB A10 H100-SXM5-80GB H100-PCIE-80GB H200 B200 GB200 L40S L4 T4{{- end -}}

{{- /* at PATH KEY: the key path fakehw prints ("nodes[0].name", "seed"). */}}
{{- define "fakehw-dra.fakehwConfig.at" -}}
{{- if .path }}{{ printf "%s.%s" .path .key }}{{ else }}{{ .key }}{{ end -}}
{{- end -}}

{{- define "fakehw-dra.fakehwConfig.fail" -}}
{{- fail (printf "fakehwConfig: %s" .) -}}
{{- end -}}

{{- /* mapping: dict path, value, known (a define name): a mapping of known keys. */}}
{{- define "fakehw-dra.fakehwConfig.mapping" -}}
{{- $path := .path | default "the document" -}}
{{- if not (kindIs "map" .value) -}}
{{- include "fakehw-dra.fakehwConfig.fail" (printf "%s: expected a mapping (key: value lines), got %s" $path (include "fakehw-dra.fakehwConfig.kind" .value)) -}}
{{- end -}}
{{- $known := splitList " " (include (printf "fakehw-dra.fakehwConfig.known.%s" .known) .) -}}
{{- range $k := keys .value | sortAlpha -}}
{{- if not (has $k $known) -}}
{{- include "fakehw-dra.fakehwConfig.fail" (printf "%s: unknown key (known keys here: %s)" (include "fakehw-dra.fakehwConfig.at" (dict "path" $.path "key" $k)) (join ", " $known)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "fakehw-dra.fakehwConfig.kind" -}}
{{- if kindIs "map" . }}a mapping{{ else if kindIs "slice" . }}a list{{ else if kindIs "invalid" . }}null{{ else }}a string{{ end -}}
{{- end -}}

{{- /* list: dict path value: a list. */}}
{{- define "fakehw-dra.fakehwConfig.list" -}}
{{- if not (kindIs "slice" .value) -}}
{{- include "fakehw-dra.fakehwConfig.fail" (printf "%s: expected a list (\"- \" items), got %s" .path (include "fakehw-dra.fakehwConfig.kind" .value)) -}}
{{- end -}}
{{- end -}}

{{- /* text: dict path value: a scalar, not a list or mapping. */}}
{{- define "fakehw-dra.fakehwConfig.text" -}}
{{- if or (kindIs "map" .value) (kindIs "slice" .value) -}}
{{- include "fakehw-dra.fakehwConfig.fail" (printf "%s: expected a single value, got %s" .path (include "fakehw-dra.fakehwConfig.kind" .value)) -}}
{{- end -}}
{{- end -}}

{{- /* integer: dict path value min max. */}}
{{- define "fakehw-dra.fakehwConfig.integer" -}}
{{- if and (kindIs "string" .value) (regexMatch "^[-+]?[0-9]+$" (toString .value)) -}}
{{- include "fakehw-dra.fakehwConfig.fail" (printf "%s: %q is quoted, so it is a string, not an integer" .path .value) -}}
{{- end -}}
{{- include "fakehw-dra.fakehwConfig.text" . -}}
{{- if not (or (kindIs "float64" .value) (kindIs "int64" .value) (kindIs "int" .value)) -}}
{{- include "fakehw-dra.fakehwConfig.fail" (printf "%s: %q is not an integer" .path (toString .value)) -}}
{{- end -}}
{{- if ne (float64 .value) (floor .value) -}}
{{- include "fakehw-dra.fakehwConfig.fail" (printf "%s: %q is not an integer" .path (toString .value)) -}}
{{- end -}}
{{- if or (lt (float64 .value) (float64 .min)) (gt (float64 .value) (float64 .max)) -}}
{{- include "fakehw-dra.fakehwConfig.fail" (printf "%s: %v is not a valid %s (%d..%d)" .path .value .what (int .min) (int .max)) -}}
{{- end -}}
{{- end -}}

{{- /* boolean: dict path value. */}}
{{- define "fakehw-dra.fakehwConfig.boolean" -}}
{{- include "fakehw-dra.fakehwConfig.text" . -}}
{{- if and (kindIs "string" .value) (has .value (list "true" "false")) -}}
{{- include "fakehw-dra.fakehwConfig.fail" (printf "%s: %q is quoted, so it is a string, not a boolean (write it without quotes)" .path .value) -}}
{{- end -}}
{{- if not (kindIs "bool" .value) -}}
{{- include "fakehw-dra.fakehwConfig.fail" (printf "%s: %q is not a boolean (true or false)" .path (toString .value)) -}}
{{- end -}}
{{- end -}}

{{- /* oneOf: dict path value words what. */}}
{{- define "fakehw-dra.fakehwConfig.oneOf" -}}
{{- include "fakehw-dra.fakehwConfig.text" . -}}
{{- $words := splitList " " .words -}}
{{- /* YAML 1.1 reads off, on, yes and no as booleans: leave those to fakehw. */}}
{{- if not (or (kindIs "bool" .value) (has (toString .value) $words)) -}}
{{- include "fakehw-dra.fakehwConfig.fail" (printf "%s: %q is not %s (%s or %s)" .path (toString .value) .what (join ", " (initial $words)) (last $words)) -}}
{{- end -}}
{{- end -}}

{{- define "fakehw-dra.fakehwConfig.flips" -}}
{{- include "fakehw-dra.fakehwConfig.list" . -}}
{{- range $i, $f := .value -}}
{{- $p := printf "%s[%d]" $.path $i -}}
{{- include "fakehw-dra.fakehwConfig.mapping" (dict "path" $p "value" $f "known" "flip") -}}
{{- if not (hasKey $f "device") }}{{ include "fakehw-dra.fakehwConfig.fail" (printf "%s: device is required (a device name or \"all\")" $p) }}{{ end -}}
{{- if hasKey $f "state" }}{{ include "fakehw-dra.fakehwConfig.oneOf" (dict "path" (printf "%s.state" $p) "value" $f.state "words" "healthy unhealthy" "what" "a health state") }}{{ end -}}
{{- if hasKey $f "xid" }}{{ include "fakehw-dra.fakehwConfig.integer" (dict "path" (printf "%s.xid" $p) "value" $f.xid "min" 1 "max" 99999 "what" "XID") }}{{ end -}}
{{- if not (or (hasKey $f "state") (hasKey $f "xid")) }}{{ include "fakehw-dra.fakehwConfig.fail" (printf "%s: state (healthy or unhealthy) or xid is required: what the flip changes" $p) }}{{ end -}}
{{- if and (hasKey $f "reason") (not (hasKey $f "state")) }}{{ include "fakehw-dra.fakehwConfig.fail" (printf "%s: reason needs a state (it is the healthReason set with it)" $p) }}{{ end -}}
{{- range $k := list "device" "after" "for" "reason" -}}
{{- if hasKey $f $k }}{{ include "fakehw-dra.fakehwConfig.text" (dict "path" (printf "%s.%s" $p $k) "value" (get $f $k)) }}{{ end -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "fakehw-dra.fakehwConfig.device" -}}
{{- $d := .value -}}
{{- $p := .path -}}
{{- include "fakehw-dra.fakehwConfig.mapping" (dict "path" $p "value" $d "known" "device") -}}
{{- range $k, $v := $d -}}
{{- $kp := printf "%s.%s" $p $k -}}
{{- if eq $k "count" -}}
{{- include "fakehw-dra.fakehwConfig.integer" (dict "path" $kp "value" $v "min" 0 "max" 4096 "what" "count") -}}
{{- else if eq $k "numaNode" -}}
{{- include "fakehw-dra.fakehwConfig.integer" (dict "path" $kp "value" $v "min" -1 "max" 1023 "what" "NUMA node") -}}
{{- else if or (eq $k "virtual") (eq $k "vfio") -}}
{{- include "fakehw-dra.fakehwConfig.boolean" (dict "path" $kp "value" $v) -}}
{{- else if eq $k "health" -}}
{{- include "fakehw-dra.fakehwConfig.oneOf" (dict "path" $kp "value" $v "words" "healthy unhealthy" "what" "a health state") -}}
{{- else if eq $k "profile" -}}
{{- include "fakehw-dra.fakehwConfig.text" (dict "path" $kp "value" $v) -}}
{{- $profiles := splitList " " (include "fakehw-dra.fakehwConfig.profiles" $) -}}
{{- if not (has (upper (toString $v)) (splitList " " (upper (join " " $profiles)))) -}}
{{- include "fakehw-dra.fakehwConfig.fail" (printf "%s: unknown profile %q (known: %s)" $kp (toString $v) (join ", " $profiles)) -}}
{{- end -}}
{{- else if eq $k "attach" -}}
{{- include "fakehw-dra.fakehwConfig.mapping" (dict "path" $kp "value" $v "known" "attach") -}}
{{- if hasKey $v "failure" }}{{ include "fakehw-dra.fakehwConfig.oneOf" (dict "path" (printf "%s.failure" $kp) "value" $v.failure "words" "never next always" "what" "an attach failure") }}{{ end -}}
{{- if hasKey $v "delay" }}{{ include "fakehw-dra.fakehwConfig.text" (dict "path" (printf "%s.delay" $kp) "value" $v.delay) }}{{ end -}}
{{- else if eq $k "mig" -}}
{{- include "fakehw-dra.fakehwConfig.mapping" (dict "path" $kp "value" $v "known" "mig") -}}
{{- if hasKey $v "mode" }}{{ include "fakehw-dra.fakehwConfig.oneOf" (dict "path" (printf "%s.mode" $kp) "value" $v.mode "words" "off dynamic static" "what" "a MIG mode") }}{{ end -}}
{{- if hasKey $v "instances" -}}
{{- include "fakehw-dra.fakehwConfig.list" (dict "path" (printf "%s.instances" $kp) "value" $v.instances) -}}
{{- range $i, $in := $v.instances }}{{ include "fakehw-dra.fakehwConfig.mapping" (dict "path" (printf "%s.instances[%d]" $kp $i) "value" $in "known" "instance") }}{{ end -}}
{{- end -}}
{{- else if eq $k "sharing" -}}
{{- include "fakehw-dra.fakehwConfig.mapping" (dict "path" $kp "value" $v "known" "sharing") -}}
{{- if hasKey $v "memory" }}{{ include "fakehw-dra.fakehwConfig.mapping" (dict "path" (printf "%s.memory" $kp) "value" $v.memory "known" "sharingMemory") }}{{ end -}}
{{- else -}}
{{- include "fakehw-dra.fakehwConfig.text" (dict "path" $kp "value" $v) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- /* section: dict path value known: defaults or one nodes entry. */}}
{{- define "fakehw-dra.fakehwConfig.section" -}}
{{- $s := .value -}}
{{- include "fakehw-dra.fakehwConfig.mapping" . -}}
{{- range $k := list "name" "seed" "driverVersion" "cudaDriverVersion" -}}
{{- if hasKey $s $k }}{{ include "fakehw-dra.fakehwConfig.text" (dict "path" (printf "%s.%s" $.path $k) "value" (get $s $k)) }}{{ end -}}
{{- end -}}
{{- if hasKey $s "devices" -}}
{{- include "fakehw-dra.fakehwConfig.list" (dict "path" (printf "%s.devices" .path) "value" $s.devices) -}}
{{- range $i, $d := $s.devices }}{{ include "fakehw-dra.fakehwConfig.device" (dict "path" (printf "%s.devices[%d]" $.path $i) "value" $d) }}{{ end -}}
{{- end -}}
{{- if hasKey $s "flips" }}{{ include "fakehw-dra.fakehwConfig.flips" (dict "path" (printf "%s.flips" .path) "value" $s.flips) }}{{ end -}}
{{- end -}}

{{- /* validateFakehwConfig: fails the render on a config fakehw would refuse. */}}
{{- define "fakehw-dra.validateFakehwConfig" -}}
{{- $doc := include "fakehw-dra.fakehwConfig" . | fromYaml -}}
{{- if hasKey $doc "Error" -}}
{{- $err := get $doc "Error" -}}
{{- $got := "" -}}
{{- if contains "cannot unmarshal array" $err }}{{ $got = "a list" }}{{ else if contains "cannot unmarshal" $err }}{{ $got = "a string" }}{{ end -}}
{{- if $got -}}
{{- include "fakehw-dra.fakehwConfig.fail" (printf "the config must be a mapping with the keys seed, driverVersion, cudaDriverVersion, defaults, nodes and flips, got %s" $got) -}}
{{- end -}}
{{- include "fakehw-dra.fakehwConfig.fail" (printf "YAML syntax error: %s" $err) -}}
{{- end -}}
{{- if not $doc -}}
{{- include "fakehw-dra.fakehwConfig.fail" "empty: fakehw needs a defaults section or a nodes list" -}}
{{- end -}}
{{- include "fakehw-dra.fakehwConfig.mapping" (dict "path" "" "value" $doc "known" "top") -}}
{{- range $k := list "seed" "driverVersion" "cudaDriverVersion" -}}
{{- if hasKey $doc $k }}{{ include "fakehw-dra.fakehwConfig.text" (dict "path" $k "value" (get $doc $k)) }}{{ end -}}
{{- end -}}
{{- if hasKey $doc "defaults" -}}
{{- include "fakehw-dra.fakehwConfig.section" (dict "path" "defaults" "value" $doc.defaults "known" "defaults") -}}
{{- end -}}
{{- if hasKey $doc "nodes" -}}
{{- include "fakehw-dra.fakehwConfig.list" (dict "path" "nodes" "value" $doc.nodes) -}}
{{- $seen := dict -}}
{{- range $i, $n := $doc.nodes -}}
{{- $p := printf "nodes[%d]" $i -}}
{{- include "fakehw-dra.fakehwConfig.section" (dict "path" $p "value" $n "known" "node") -}}
{{- if not (hasKey $n "name") }}{{ include "fakehw-dra.fakehwConfig.fail" (printf "%s: name is required (a node name or a glob like gpu-*)" $p) }}{{ end -}}
{{- $name := toString $n.name -}}
{{- if hasKey $seen $name -}}
{{- include "fakehw-dra.fakehwConfig.fail" (printf "%s.name: %q is also the name of %s; each node section needs its own name or glob" $p $name (get $seen $name)) -}}
{{- end -}}
{{- $_ := set $seen $name $p -}}
{{- end -}}
{{- end -}}
{{- if hasKey $doc "flips" }}{{ include "fakehw-dra.fakehwConfig.flips" (dict "path" "flips" "value" $doc.flips) }}{{ end -}}
{{- end -}}
