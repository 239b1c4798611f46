package io.gpuadmission.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import io.gpuadmission.admission.AdmissionMetrics;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.admission.MalformedObjectException;
import io.gpuadmission.admission.MalformedReviewException;
import io.gpuadmission.admission.MutationService;
import io.gpuadmission.admission.ReviewCodec;
import io.gpuadmission.admission.ValidationService;
import io.gpuadmission.cluster.ClusterSnapshot;
import io.gpuadmission.mutation.PodMutator;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.PolicyConfig;
import io.gpuadmission.policy.PolicyStore;
import io.gpuadmission.policy.PolicyStore.PolicySource;
import io.gpuadmission.validation.RecentAdmissions;
import io.gpuadmission.validation.WorkloadValidator;
import java.nio.charset.StandardCharsets;

/**
 * The webhook's own {@code /mutate} and {@code /validate} services, without HTTP: each object goes
 * in as the AdmissionReview kube-apiserver would send on CREATE, through the same decoder, and the
 * AdmissionResponse comes back. The policy and cluster are the given ones; every gang member the
 * run admits stays known to the gang checks until the run ends (the webhook forgets its own after
 * 15 s, when its informer shows them).
 */
final class LocalWebhook {
  /** Who the reviews say asks: the API server sends the requesting user. */
  static final String USER = "gpu-admission-cli";

  private final MutationService mutation;
  private final ValidationService validation;
  private final WorkloadValidator workloads;
  private int sequence;

  LocalWebhook(GpuPolicy policy, ClusterSnapshot cluster, PolicyConfig policyConfig, String webhookNamespace, AdmissionMetrics metrics) {
    var policies = new PolicyStore();
    policies.replace(policy, PolicySource.CONFIGMAP);
    this.mutation = new MutationService(policies, cluster::models, metrics);
    var ledger = new RecentAdmissions(Long.MAX_VALUE, () -> 0L);
    this.validation = new ValidationService(policies, mutation, policyConfig, webhookNamespace, cluster, cluster::models, metrics, ledger);
    this.workloads = new WorkloadValidator(new PodMutator(PodMutator.standardRules(), KubernetesJson.mapper()), KubernetesJson.mapper());
  }

  /** What /mutate answers for creating {@code object} in {@code namespace}. */
  AdmissionResponse mutate(Manifest manifest, JsonNode object, String namespace) {
    return answer(manifest, () -> mutation.review(review(manifest, object, namespace)));
  }

  /** What /validate answers for creating {@code object} in {@code namespace}. */
  AdmissionResponse validate(Manifest manifest, JsonNode object, String namespace) {
    return answer(manifest, () -> validation.review(review(manifest, object, namespace)));
  }

  /** The endpoint's 400 for a field of the wrong type is bad input here, naming the file and document. */
  private static AdmissionResponse answer(Manifest manifest, java.util.function.Supplier<AdmissionResponse> review) {
    try {
      return review.get();
    } catch (MalformedObjectException e) {
      throw new BadInputException(manifest.source().describe() + ": " + e.getMessage());
    }
  }

  /** The workload check's view of a template: the pod it makes, before mutation. */
  WorkloadValidator workloads() {
    return workloads;
  }

  /**
   * The review kube-apiserver sends: the object with its namespace set (the API server fills it
   * in from the request), kind and resource from its apiVersion and kind.
   */
  private io.gpuadmission.admission.DecodedReview review(Manifest manifest, JsonNode object, String namespace) {
    var mapper = KubernetesJson.mapper();
    var kind = mapper.createObjectNode().put("group", manifest.group()).put("version", manifest.version()).put("kind", manifest.kind());
    var resource =
        mapper.createObjectNode()
            .put("group", manifest.group())
            .put("version", manifest.version())
            .put("resource", manifest.kind().toLowerCase(java.util.Locale.ROOT) + "s");
    ObjectNode request = mapper.createObjectNode();
    request.put("uid", "gpu-admission-cli-" + (++sequence));
    request.set("kind", kind);
    request.set("resource", resource);
    request.set("requestKind", kind);
    request.set("requestResource", resource);
    request.put("name", object.path("metadata").path("name").asText(""));
    request.put("namespace", namespace);
    request.put("operation", "CREATE");
    request.set("userInfo", mapper.createObjectNode().put("username", USER));
    request.set("object", object);
    request.put("dryRun", false);
    var review = mapper.createObjectNode().put("apiVersion", ReviewCodec.API_VERSION).put("kind", "AdmissionReview");
    review.set("request", request);
    try {
      return ReviewCodec.decode(review.toString().getBytes(StandardCharsets.UTF_8));
    } catch (MalformedReviewException e) {
      throw new IllegalStateException("a review made here is well formed: " + e.getMessage(), e);
    }
  }
}
