package io.gpuadmission.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import io.fabric8.zjsonpatch.JsonPatch;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.GpuModelCatalog;
import io.gpuadmission.mutation.MutationContext;
import io.gpuadmission.mutation.PodMutator;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.cluster.QuotaTreeWatcher;
import io.gpuadmission.validation.WorkloadKind;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;

/**
 * Sends each object where kube-apiserver would on {@code kubectl apply}: a Pod to /mutate, then the
 * mutated Pod to /validate; a Deployment, StatefulSet, ReplicaSet, Job, CronJob, PyTorchJob, TFJob
 * or MPIJob to /validate (the webhook mutates their pods, not them: what each template's pods will
 * get comes from the same mutation rules); the policy ConfigMap to /validate. Anything else the
 * webhook is never asked about. Objects go in the order given, so the gang checks see the members
 * admitted before, as when one {@code kubectl apply -f} creates them.
 */
final class Explainer {
  private final LocalWebhook webhook;
  private final PodMutator mutator = new PodMutator(PodMutator.standardRules(), KubernetesJson.mapper());
  private final GpuPolicy policy;
  private final GpuModelCatalog models;
  private final String defaultNamespace;
  private final String webhookNamespace;
  private final String policyConfigMap;

  Explainer(LocalWebhook webhook, GpuPolicy policy, GpuModelCatalog models, String defaultNamespace, String webhookNamespace, String policyConfigMap) {
    this.webhook = webhook;
    this.policy = policy;
    this.models = models;
    this.defaultNamespace = defaultNamespace;
    this.webhookNamespace = webhookNamespace;
    this.policyConfigMap = policyConfigMap;
  }

  Explanation explain(Manifest manifest) {
    var namespace = manifest.namespace(defaultNamespace);
    var object = withNamespace(manifest.object(), namespace);
    if (manifest.isCore("Pod")) {
      return pod(manifest, object, namespace);
    }
    var workload = WorkloadKind.of(manifest.group(), manifest.kind());
    if (workload.isPresent()) {
      return workload(manifest, object, namespace, workload.get());
    }
    if (manifest.isCore("ConfigMap") && namespace.equals(webhookNamespace) && manifest.name().equals(policyConfigMap)) {
      var validate = webhook.validate(manifest, object, namespace);
      return new Explanation(manifest, namespace, verdict(validate), "", Optional.empty(), emptyPatch(), Optional.of(validate), List.of(), object);
    }
    if (QuotaTreeWatcher.GROUP.equals(manifest.group()) && QuotaTreeWatcher.KIND.equals(manifest.kind())) {
      var validate = webhook.validate(manifest, object, namespace);
      return new Explanation(manifest, namespace, verdict(validate), QuotaTreeNote.of(object, namespace), Optional.empty(), emptyPatch(),
          Optional.of(validate), List.of(), object);
    }
    var note =
        manifest.isCore("ConfigMap")
            ? "the webhook judges only the policy ConfigMap " + webhookNamespace + "/" + policyConfigMap
            : "the webhook is not called for " + manifest.kind() + (manifest.group().isEmpty() ? "" : "." + manifest.group());
    return new Explanation(manifest, namespace, Verdict.NOT_JUDGED, note, Optional.empty(), emptyPatch(), Optional.empty(), List.of(), object);
  }

  private Explanation pod(Manifest manifest, JsonNode object, String namespace) {
    var mutate = webhook.mutate(manifest, object, namespace);
    if (!Boolean.TRUE.equals(mutate.getAllowed())) {
      return new Explanation(manifest, namespace, Verdict.REFUSED, "", Optional.of(mutate), emptyPatch(), Optional.empty(), List.of(), object);
    }
    var patch = patchOf(mutate);
    var mutated = patch.isEmpty() ? object : JsonPatch.apply(patch, object);
    var validate = webhook.validate(manifest, mutated, namespace);
    return new Explanation(manifest, namespace, verdict(validate), "", Optional.of(mutate), patch, Optional.of(validate), List.of(), mutated);
  }

  private Explanation workload(Manifest manifest, JsonNode object, String namespace, WorkloadKind kind) {
    var validate = webhook.validate(manifest, object, namespace);
    var templates = new ArrayList<Explanation.TemplateChange>();
    var result = (ObjectNode) object.deepCopy();
    try {
      for (var template : kind.templates(object)) {
        var pod = webhook.workloads().templatePod(kind, object, namespace, template);
        var patch = mutator.mutate(pod, new MutationContext(namespace, policy, models)).patch();
        var mutated = patch.isEmpty() ? pod : JsonPatch.apply(patch, pod);
        templates.add(new Explanation.TemplateChange(template.role(), template.replicas(), template.path(), patch, mutated));
        if (!patch.isEmpty()) {
          replace(result, template.path(), asTemplate(mutated, template.template()));
        }
      }
    } catch (RuntimeException unreadable) {
      // A template the rules cannot read: /validate's answer above already says what is wrong with it.
      templates.clear();
      result = (ObjectNode) object.deepCopy();
    }
    return new Explanation(manifest, namespace, verdict(validate), "", Optional.empty(), emptyPatch(), Optional.of(validate), templates, result);
  }

  /** The mutated pod as a template again: the template's metadata and spec with the rules' changes. */
  private static JsonNode asTemplate(JsonNode mutatedPod, JsonNode template) {
    var out = (ObjectNode) template.deepCopy();
    var metadata = template.path("metadata").isObject() ? (ObjectNode) template.path("metadata").deepCopy() : out.objectNode();
    var podMetadata = mutatedPod.path("metadata");
    for (var field : List.of("labels", "annotations")) {
      if (podMetadata.has(field)) {
        metadata.set(field, podMetadata.get(field));
      }
    }
    out.set("metadata", metadata);
    out.set("spec", mutatedPod.path("spec"));
    return out;
  }

  /** Sets {@code value} at a dotted path ({@code spec.pytorchReplicaSpecs.Worker.template}) that exists. */
  private static void replace(ObjectNode root, String path, JsonNode value) {
    var parts = path.split("\\.");
    ObjectNode parent = root;
    for (int i = 0; i < parts.length - 1; i++) {
      parent = (ObjectNode) parent.get(parts[i]);
    }
    parent.set(parts[parts.length - 1], value);
  }

  private static JsonNode withNamespace(JsonNode object, String namespace) {
    if (!object.path("metadata").isObject()) {
      return object;
    }
    var copy = (ObjectNode) object.deepCopy();
    ((ObjectNode) copy.get("metadata")).put("namespace", namespace);
    return copy;
  }

  private static Verdict verdict(AdmissionResponse response) {
    return Boolean.TRUE.equals(response.getAllowed()) ? Verdict.ADMITTED : Verdict.REFUSED;
  }

  /** The JSON Patch of an answer, decoded from the base64 the wire carries; empty when it has none. */
  static ArrayNode patchOf(AdmissionResponse response) {
    if (response.getPatch() == null) {
      return emptyPatch();
    }
    try {
      return (ArrayNode) KubernetesJson.mapper().readTree(Base64.getDecoder().decode(response.getPatch()));
    } catch (IOException e) {
      throw new UncheckedIOException("the webhook's own patch is JSON", e);
    }
  }

  private static ArrayNode emptyPatch() {
    return KubernetesJson.mapper().createArrayNode();
  }
}
