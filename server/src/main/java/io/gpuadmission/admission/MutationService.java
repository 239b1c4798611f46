package io.gpuadmission.admission;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import io.gpuadmission.admission.AdmissionMetrics.Outcome;
import io.gpuadmission.cluster.GpuModelCatalog;
import io.gpuadmission.cluster.NodeInventory;
import io.gpuadmission.mutation.MutationContext;
import io.gpuadmission.mutation.PodMutator;
import io.gpuadmission.pod.QuantitySyntax;
import io.gpuadmission.policy.FailureModePolicy.FailureMode;
import io.gpuadmission.policy.PolicyStore;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.List;
import java.util.function.Supplier;

/**
 * Answers {@code /mutate}: pods on CREATE go through the mutation rules; every other kind and
 * operation is allowed unchanged. An unexpected failure is answered by the policy's failure mode.
 */
@ApplicationScoped
public class MutationService {
  static final String ENDPOINT = "mutate";

  private final PolicyStore policies;
  private final Supplier<GpuModelCatalog> models;
  private final AdmissionMetrics metrics;
  private final PodMutator mutator = new PodMutator(PodMutator.standardRules(), KubernetesJson.mapper());

  /** The mutator /mutate applies; validation simulates the same one on workload templates. */
  PodMutator mutator() {
    return mutator;
  }

  @Inject
  public MutationService(PolicyStore policies, NodeInventory nodes, AdmissionMetrics metrics) {
    this(policies, nodes::models, metrics);
  }

  /** The same service over given GPU models (the command line's, from files). */
  public MutationService(PolicyStore policies, Supplier<GpuModelCatalog> models, AdmissionMetrics metrics) {
    this.policies = policies;
    this.models = models;
    this.metrics = metrics;
  }

  public AdmissionResponse review(DecodedReview review) {
    var start = System.nanoTime();
    if (!review.isCoreKind("Pod") || !"CREATE".equals(review.operation()) || !review.hasObject()) {
      metrics.record(ENDPOINT, Outcome.ALLOWED, start);
      return Responses.allow(review.uid(), List.of());
    }
    var policy = policies.current();
    var unread = policies.unread();
    if (unread.isPresent()) {
      return unjudged(review, policy, unread.get(), start);
    }
    if (policy.isExempt(review.namespace())) {
      // Left alone whatever they hold, as /validate leaves them.
      metrics.record(ENDPOINT, Outcome.ALLOWED, start);
      return Responses.allow(review.uid(), List.of());
    }
    var malformed = MalformedPod.pod(review.rawObject());
    if (malformed.isPresent()) {
      metrics.record(ENDPOINT, Outcome.MALFORMED, start);
      return Responses.deny(review.uid(), "BadRequest", "Pod \"" + review.objectName() + "\": " + malformed.get(), List.of());
    }
    try {
      var pod = review.pod();
      var badQuantity = QuantitySyntax.problem(pod);
      if (badQuantity.isPresent()) {
        metrics.record(ENDPOINT, Outcome.MALFORMED, start);
        return Responses.deny(review.uid(), "BadRequest", "Pod \"" + review.objectName() + "\": " + badQuantity.get(), List.of());
      }
      var result = mutator.mutate(pod, new MutationContext(review.namespace(), policy, models.get()));
      result.changedRules().forEach(rule -> metrics.ruleApplied(ENDPOINT, rule));
      if (!result.changed()) {
        metrics.record(ENDPOINT, Outcome.ALLOWED, start);
        return Responses.allow(review.uid(), result.warnings());
      }
      metrics.record(ENDPOINT, Outcome.PATCHED, start);
      return Responses.patch(review.uid(), patchBytes(result.patch()), result.warnings());
    } catch (MalformedObjectException e) {
      throw e; // a malformed review: answered 400 by the endpoint, never "could not judge"
    } catch (RuntimeException e) {
      UnjudgedLog.warn(ENDPOINT, "pod " + review.namespace() + "/" + review.objectName(), review.uid(), e);
      var gpuPod = RawPodInspector.asksForGpu(review.object(), policy);
      var mode = policy.failureMode().forPod(gpuPod);
      var what = "gpu-admission could not judge pod \"" + review.objectName() + "\" (" + e.getClass().getSimpleName() + ")";
      if (mode == FailureMode.OPEN) {
        return admitUnjudged(review, start, what + "; admitted unchanged (policy failureMode is open)");
      }
      return refuse(
          review,
          start,
          403,
          "InternalError",
          what + "; GPU pods are refused when they cannot be judged (policy failureMode.gpuPods: closed)."
              + " Check the pod's resources and labels, or see the webhook log for uid " + review.uid());
    }
  }

  /**
   * Before the cluster's policy has been read: a pod is mutated only once, so a GPU pod is refused
   * for now rather than placed by the wrong policy; another pod is admitted unchanged.
   */
  private AdmissionResponse unjudged(DecodedReview review, io.gpuadmission.policy.GpuPolicy policy, String unread, long start) {
    var what = UnreadPolicy.notRead(unread);
    if (!RawPodInspector.asksForGpu(review.object(), policy)) {
      return admitUnjudged(review, start, what + "; admitted unchanged");
    }
    return refuse(review, start, 503, "ServiceUnavailable", UnreadPolicy.refusal(what, "GPU pods", "mutated", "create the pod again"));
  }

  /** A GPU pod this replica cannot judge (fail closed): refused with the status and message given. */
  private AdmissionResponse refuse(DecodedReview review, long start, int code, String reason, String message) {
    metrics.record(ENDPOINT, Outcome.FAILED_CLOSED, start);
    return Responses.deny(review.uid(), code, reason, message, List.of());
  }

  /** A pod this replica cannot judge admitted unchanged (fail open), saying so in a warning. */
  private AdmissionResponse admitUnjudged(DecodedReview review, long start, String warning) {
    metrics.record(ENDPOINT, Outcome.FAILED_OPEN, start);
    return Responses.allow(review.uid(), List.of(warning));
  }

  /**
   * The patch as UTF-8 JSON, written straight to bytes: the same text as its toString(), without
   * the String. Jackson's byte writer escapes a character beyond U+FFFF (an emoji in a value the
   * patch copies) as two escaped UTF-16 halves unless told to combine them; toString() wrote UTF-8.
   */
  private static final ObjectWriter PATCH_WRITER =
      KubernetesJson.mapper().writer().with(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8);

  static byte[] patchBytes(ArrayNode patch) {
    try {
      return PATCH_WRITER.writeValueAsBytes(patch);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("a JSON tree always serializes", e);
    }
  }
}
