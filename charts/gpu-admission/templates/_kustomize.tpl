{{- /*
The chart renders manifests/ (a link to the repository's manifests/ directory, packaged with the
chart): each directory's kustomization.yaml says which files are resources and which patches apply,
and these helpers do what kustomize does with them, for the kinds of entries manifests/ uses:
resources (files), patches ($patch: delete, a strategic-merge file or inline document, an inline
JSON 6902 add/replace at a path of map keys, or add at one ending in /-, with a target) and a
configMapGenerator with disableNameSuffixHash. Any other kustomization key, patch key or JSON patch
fails the render, saying what: the chart never silently drops part of an install. The values
then change the few fields they own (customize.tpl). ManifestsEquivalenceTest compares the result
with `kubectl kustomize` for every documented combination, field by field.

Helpers return JSON (include returns a string): {"v": ...} so that lists and scalars survive.
*/ -}}

{{- /* The objects of one kustomization directory's resources: (dict "root" $ "dir" "manifests/base") */ -}}
{{- define "gpu-admission.resources" -}}
{{- $root := .root -}}
{{- $k := $root.Files.Get (printf "%s/kustomization.yaml" .dir) | fromYaml -}}
{{- if not $k -}}{{- fail (printf "chart: %s/kustomization.yaml is missing or empty" .dir) -}}{{- end -}}
{{- range $key, $_ := $k -}}
  {{- if not (has $key (list "apiVersion" "kind" "resources" "patches" "configMapGenerator")) -}}
    {{- fail (printf "chart: %s/kustomization.yaml: the chart does not apply %s (templates/_kustomize.tpl)" $.dir $key) -}}
  {{- end -}}
{{- end -}}
{{- range $k.patches -}}
  {{- range $key, $_ := . -}}
    {{- if not (has $key (list "path" "patch" "target")) -}}
      {{- fail (printf "chart: %s/kustomization.yaml: the chart does not apply a patch's %s (templates/_kustomize.tpl)" $.dir $key) -}}
    {{- end -}}
  {{- end -}}
{{- end -}}
{{- $objects := list -}}
{{- range $k.resources -}}
  {{- if hasSuffix ".yaml" . -}}
    {{- $objects = concat $objects (include "gpu-admission.documents" (dict "root" $root "file" (printf "%s/%s" $.dir .)) | fromJson).v -}}
  {{- end -}}
{{- end -}}
{{- range $k.configMapGenerator -}}
  {{- $objects = append $objects (include "gpu-admission.generatedConfigMap" (dict "root" $root "dir" $.dir "generator" .) | fromJson).v -}}
{{- end -}}
{{- toJson (dict "v" $objects) -}}
{{- end -}}

{{- /* Every object of a multi-document YAML file: (dict "root" $ "file" PATH) */ -}}
{{- define "gpu-admission.documents" -}}
{{- $text := .root.Files.Get .file -}}
{{- if not $text -}}{{- fail (printf "chart: %s is missing or empty" .file) -}}{{- end -}}
{{- $objects := list -}}
{{- range regexSplit "(?m)^---[ \t]*$" $text -1 -}}
  {{- $doc := fromYaml . -}}
  {{- if hasKey $doc "Error" -}}{{- fail (printf "chart: %s: %s" $.file $doc.Error) -}}{{- end -}}
  {{- if $doc.kind -}}{{- $objects = append $objects $doc -}}{{- end -}}
{{- end -}}
{{- toJson (dict "v" $objects) -}}
{{- end -}}

{{- define "gpu-admission.generatedConfigMap" -}}
{{- $g := .generator -}}
{{- $options := $g.options | default dict -}}
{{- if not $options.disableNameSuffixHash -}}{{- fail (printf "chart: %s: configMapGenerator %s without disableNameSuffixHash is not supported" .dir $g.name) -}}{{- end -}}
{{- $data := dict -}}
{{- range $g.files -}}
  {{- $parts := splitList "=" . -}}
  {{- $key := first $parts -}}{{- $file := last $parts -}}
  {{- if eq (len $parts) 1 -}}{{- $key = base $file -}}{{- end -}}
  {{- $_ := set $data $key ($.root.Files.Get (printf "%s/%s" $.dir $file)) -}}
{{- end -}}
{{- $metadata := dict "name" $g.name -}}
{{- with $g.namespace -}}{{- $_ := set $metadata "namespace" . -}}{{- end -}}
{{- with $options.labels -}}{{- $_ := set $metadata "labels" . -}}{{- end -}}
{{- with $options.annotations -}}{{- $_ := set $metadata "annotations" . -}}{{- end -}}
{{- toJson (dict "v" (dict "apiVersion" "v1" "kind" "ConfigMap" "metadata" $metadata "data" $data)) -}}
{{- end -}}

{{- /* The objects after one directory's patches: (dict "root" $ "dir" DIR "objects" LIST) */ -}}
{{- define "gpu-admission.patched" -}}
{{- $root := .root -}}
{{- $k := $root.Files.Get (printf "%s/kustomization.yaml" .dir) | fromYaml -}}
{{- $objects := .objects -}}
{{- range $k.patches -}}
  {{- $p := . -}}
  {{- if $p.path -}}
    {{- range (include "gpu-admission.documents" (dict "root" $root "file" (printf "%s/%s" $.dir $p.path)) | fromJson).v -}}
      {{- $objects = (include "gpu-admission.strategicPatch" (dict "objects" $objects "patch" .)| fromJson).v -}}
    {{- end -}}
  {{- else if $p.target -}}
    {{- $ops := fromYamlArray $p.patch -}}
    {{- $patched := list -}}
    {{- $matched := false -}}
    {{- range $objects -}}
      {{- if and (eq .kind $p.target.kind) (eq .metadata.name $p.target.name) -}}
        {{- $matched = true -}}
        {{- $o := . -}}
        {{- range $ops -}}
          {{- $o = (include "gpu-admission.jsonPatch" (dict "object" $o "op" . "dir" $.dir) | fromJson).v -}}
        {{- end -}}
        {{- $patched = append $patched $o -}}
      {{- else -}}
        {{- $patched = append $patched . -}}
      {{- end -}}
    {{- end -}}
    {{- if not $matched -}}{{- fail (printf "chart: %s: no %s %s to patch" $.dir $p.target.kind $p.target.name) -}}{{- end -}}
    {{- $objects = $patched -}}
  {{- else -}}
    {{- $objects = (include "gpu-admission.strategicPatch" (dict "objects" $objects "patch" (fromYaml $p.patch)) | fromJson).v -}}
  {{- end -}}
{{- end -}}
{{- toJson (dict "v" $objects) -}}
{{- end -}}

{{- /* A strategic-merge patch document against the object of its kind, name and namespace. */ -}}
{{- define "gpu-admission.strategicPatch" -}}
{{- $patch := .patch -}}
{{- $out := list -}}
{{- $matched := false -}}
{{- range .objects -}}
  {{- if and (eq .kind $patch.kind) (eq .metadata.name $patch.metadata.name) (eq (.metadata.namespace | default "") ($patch.metadata.namespace | default "")) -}}
    {{- $matched = true -}}
    {{- if ne (get $patch "$patch") "delete" -}}
      {{- $out = append $out (include "gpu-admission.merge" (dict "base" . "patch" (omit $patch "apiVersion" "kind")) | fromJson).v -}}
    {{- end -}}
  {{- else -}}
    {{- $out = append $out . -}}
  {{- end -}}
{{- end -}}
{{- if not $matched -}}{{- fail (printf "chart: no %s %s to patch" $patch.kind $patch.metadata.name) -}}{{- end -}}
{{- toJson (dict "v" $out) -}}
{{- end -}}

{{- /* Strategic merge: maps key by key; lists of named items (containers, env, volumes, volume
mounts) item by item on name, in kustomize's order: the patch's items (merged into the item of the
same name), then the other items; any other value replaced. */ -}}
{{- define "gpu-admission.merge" -}}
{{- $base := .base -}}{{- $patch := .patch -}}
{{- if and (kindIs "map" $base) (kindIs "map" $patch) -}}
  {{- $out := deepCopy $base -}}
  {{- range $key, $value := $patch -}}
    {{- if hasKey $out $key -}}
      {{- $_ := set $out $key (include "gpu-admission.merge" (dict "base" (get $out $key) "patch" $value) | fromJson).v -}}
    {{- else -}}
      {{- $_ := set $out $key $value -}}
    {{- end -}}
  {{- end -}}
  {{- toJson (dict "v" $out) -}}
{{- else if and (kindIs "slice" $base) (kindIs "slice" $patch) (gt (len $patch) 0) (kindIs "map" (first $patch)) (hasKey (first $patch) "name") -}}
  {{- $out := list -}}
  {{- $names := list -}}
  {{- range $patch -}}
    {{- $item := . -}}
    {{- $names = append $names .name -}}
    {{- range $base -}}
      {{- if eq .name $item.name -}}
        {{- $item = (include "gpu-admission.merge" (dict "base" . "patch" $item) | fromJson).v -}}
      {{- end -}}
    {{- end -}}
    {{- $out = append $out $item -}}
  {{- end -}}
  {{- range $base -}}
    {{- if not (has .name $names) -}}{{- $out = append $out . -}}{{- end -}}
  {{- end -}}
  {{- toJson (dict "v" $out) -}}
{{- else -}}
  {{- toJson (dict "v" $patch) -}}
{{- end -}}
{{- end -}}

{{- /* One JSON 6902 operation: add or replace at a path of map keys, or add to a list's end (/-). */ -}}
{{- define "gpu-admission.jsonPatch" -}}
{{- $op := .op -}}
{{- if not (has $op.op (list "add" "replace")) -}}{{- fail (printf "chart: %s: JSON patch op %s is not supported" .dir $op.op) -}}{{- end -}}
{{- $keys := list -}}
{{- range rest (splitList "/" $op.path) -}}{{- $keys = append $keys (. | replace "~1" "/" | replace "~0" "~") -}}{{- end -}}
{{- $out := deepCopy .object -}}
{{- $node := $out -}}
{{- $path := $keys -}}
{{- if and (eq $op.op "add") (eq (last $keys) "-") -}}{{- $path = initial $keys -}}{{- end -}}
{{- range $i, $key := initial $path -}}
  {{- if not (kindIs "map" (get $node $key)) -}}{{- fail (printf "chart: %s: JSON patch path %s is not a path of map keys (or of map keys and a final /-)" $.dir $op.path) -}}{{- end -}}
  {{- $node = get $node $key -}}
{{- end -}}
{{- if ne (len $path) (len $keys) -}}
  {{- $list := get $node (last $path) -}}
  {{- if not (kindIs "slice" $list) -}}{{- fail (printf "chart: %s: JSON patch appends to %s, which is not a list" .dir $op.path) -}}{{- end -}}
  {{- $_ := set $node (last $path) (append $list $op.value) -}}
{{- else -}}
  {{- if and (eq $op.op "replace") (not (hasKey $node (last $keys))) -}}{{- fail (printf "chart: %s: JSON patch replaces %s, which is not there" .dir $op.path) -}}{{- end -}}
  {{- $_ := set $node (last $keys) $op.value -}}
{{- end -}}
{{- toJson (dict "v" $out) -}}
{{- end -}}

{{- /* The objects of a kustomization with its patches applied (resources listing only files). */ -}}
{{- define "gpu-admission.kustomize" -}}
{{- $objects := (include "gpu-admission.resources" .) | fromJson -}}
{{- include "gpu-admission.patched" (dict "root" .root "dir" .dir "objects" $objects.v) -}}
{{- end -}}
