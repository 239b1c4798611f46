package io.gpuadmission.validation;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.zjsonpatch.JsonPatch;
import io.gpuadmission.cluster.ClusterView;
import io.gpuadmission.cluster.GpuModelCatalog;
import io.gpuadmission.mutation.MutationContext;
import io.gpuadmission.mutation.PodMutator;
import io.gpuadmission.pod.ResourceAsk;
import io.gpuadmission.pod.TopologyJob;
import io.gpuadmission.policy.GpuPolicy;
import java.util.ArrayList;
import java.util.List;

/**
 * Judges a workload at apply time by the pods it will make: each template is mutated the way
 * {@code /mutate} will mutate its pods, then judged by the pod rules; training jobs are also
 * checked across replica types (one gang name, the same resources, the right total count).
 */
public final class WorkloadValidator {
  private final PodMutator mutator;
  private final ObjectMapper mapper;

  public WorkloadValidator(PodMutator mutator, ObjectMapper mapper) {
    this.mutator = mutator;
    this.mapper = mapper;
  }

  public ValidationResult validate(
      WorkloadKind kind, JsonNode object, String namespace, GpuPolicy policy, ClusterView cluster, GpuModelCatalog models) {
    return validate(kind, object, null, namespace, policy, cluster, models);
  }

  /** {@code oldObject} is the workload before an UPDATE, null on CREATE. */
  public ValidationResult validate(
      WorkloadKind kind,
      JsonNode object,
      JsonNode oldObject,
      String namespace,
      GpuPolicy policy,
      ClusterView cluster,
      GpuModelCatalog models) {
    var result = new ValidationResult();
    var pods = new ArrayList<TemplatePod>();
    for (var template : kind.templates(object)) {
      var pod = templatePod(kind, object, namespace, template);
      var mutation = mutator.mutate(pod, new MutationContext(namespace, policy, models));
      var mutated = mapper.convertValue(JsonPatch.apply(mutation.patch(), pod), Pod.class);
      var who = template.role().equals("pod") ? "pods" : template.role() + " pods";
      mutation.warnings().forEach(w -> result.warn(w.replaceFirst("^gpu-admission: ", "gpu-admission: " + who + " will get: ")));
      var subject = new PodSubject(mutated, namespace, policy, cluster, template.role());
      for (var rule : PodValidator.POD_RULES) {
        rule.check(subject, result);
      }
      pods.add(new TemplatePod(template, mutated));
    }
    if (!result.refused()) {
      GangTemplateRules.check(kind, pods, policy, result);
    }
    var hasGang = pods.stream().anyMatch(p -> p.job(policy).isPresent());
    if (hasGang && !scaleDownOnly(object, oldObject) && !result.refused()) {
      GangLifecycleRules.check(kind, object, policy.topology(), result);
      GangLifecycleRules.checkUpdate(
          kind, object, oldObject, policy.topology(), () -> templateResourcesChanged(object, oldObject), result);
    }
    if (kind == WorkloadKind.JOB && oldObject != null && result.refused()) {
      // The advice to change a label cannot be followed on an existing Job: its template is immutable.
      result.adviseOnRefusals("a Job's pod template cannot change: delete the Job and create it again with the change");
    }
    return result;
  }

  /** The template's gang resources differ, compared as gang consistency compares members. */
  private boolean templateResourcesChanged(JsonNode object, JsonNode oldObject) {
    var before = ResourceAsk.of(mapper.convertValue(oldObject.path("spec").path("template"), Pod.class));
    var after = ResourceAsk.of(mapper.convertValue(object.path("spec").path("template"), Pod.class));
    return after.firstDifference(before).isPresent() || before.firstDifference(after).isPresent();
  }

  /**
   * An UPDATE that only lowers {@code spec.replicas}: always allowed, also for a gang admitted
   * before these rules (a scale-down never starts a rollout). A CREATE at zero replicas is judged:
   * {@code kubectl scale} goes through the scale subresource, which this webhook never sees.
   */
  private static boolean scaleDownOnly(JsonNode object, JsonNode oldObject) {
    if (oldObject == null || !object.path("spec").isObject() || !oldObject.path("spec").isObject()) {
      return false;
    }
    var before = ((ObjectNode) oldObject.path("spec")).deepCopy();
    var after = ((ObjectNode) object.path("spec")).deepCopy();
    var lower = after.path("replicas").asInt(1) <= before.path("replicas").asInt(1);
    before.remove("replicas");
    after.remove("replicas");
    return lower && before.equals(after);
  }

  /**
   * A template with the metadata a pod of it will have: namespace and controller owner (and the
   * MPI launcher's role label). Public for the command line, which shows what each template's pods get.
   */
  public JsonNode templatePod(WorkloadKind kind, JsonNode object, String namespace, PodTemplate template) {
    var pod = mapper.createObjectNode();
    pod.put("apiVersion", "v1");
    pod.put("kind", "Pod");
    var metadata = template.template().path("metadata").isObject()
        ? ((ObjectNode) template.template().path("metadata")).deepCopy()
        : mapper.createObjectNode();
    metadata.put("namespace", namespace);
    var name = object.path("metadata").path("name").asText("");
    metadata.put("generateName", name + "-");
    var owner = mapper.createObjectNode();
    owner.put("apiVersion", object.path("apiVersion").asText());
    owner.put("kind", kind.kind());
    owner.put("name", name);
    owner.put("uid", object.path("metadata").path("uid").asText(""));
    owner.put("controller", true);
    metadata.putArray("ownerReferences").add(owner);
    if (kind.launcherRole(template.role())) {
      // The MPI operator marks its launcher so: judged as its pods will be (no member unless it asks GPUs).
      var labels = metadata.path("labels").isObject() ? (ObjectNode) metadata.path("labels") : metadata.putObject("labels");
      labels.put(TopologyJob.LAUNCHER_ROLE_LABELS.get(0), TopologyJob.LAUNCHER_ROLE);
    }
    pod.set("metadata", metadata);
    // A template may leave out its spec (a CRD's schema allows it); its pods would still have one.
    var spec = template.template().path("spec");
    pod.set("spec", spec.isObject() ? spec.deepCopy() : mapper.createObjectNode());
    return pod;
  }

  /** A template and the pod it makes after mutation. */
  record TemplatePod(PodTemplate template, Pod pod) {
    ResourceAsk ask() {
      return ResourceAsk.of(pod);
    }

    java.util.Optional<TopologyJob> job(GpuPolicy policy) {
      return TopologyJob.of(pod, policy.topology());
    }
  }

}
