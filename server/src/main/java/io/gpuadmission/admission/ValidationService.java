package io.gpuadmission.admission;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import io.gpuadmission.admission.AdmissionMetrics.Outcome;
import io.gpuadmission.cluster.ClusterView;
import io.gpuadmission.cluster.GpuModelCatalog;
import io.gpuadmission.cluster.InformerClusterView;
import io.gpuadmission.cluster.NodeInventory;
import io.gpuadmission.cluster.PodInventory;
import io.gpuadmission.cluster.WebhookNamespace;
import io.gpuadmission.pod.QuantitySyntax;
import io.gpuadmission.policy.FailureModePolicy.FailureMode;
import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.InvalidPolicyException;
import io.gpuadmission.policy.PolicyConfig;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.policy.PolicyStore;
import io.gpuadmission.validation.PodSubject;
import io.gpuadmission.validation.PodTemplate;
import io.gpuadmission.validation.PodValidator;
import io.gpuadmission.validation.PolicyPlacementCheck;
import io.gpuadmission.validation.QuotaNeverFitsRule;
import io.gpuadmission.cluster.QuotaTreeStore;
import io.gpuadmission.quota.QuotaTree;
import io.gpuadmission.validation.RecentAdmissions;
import io.gpuadmission.validation.ValidationResult;
import io.gpuadmission.validation.WorkloadKind;
import io.gpuadmission.validation.WorkloadValidator;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Answers {@code /validate}: pods, the pod templates of workloads, the policy ConfigMap and the
 * team quota tree (ElasticQuotaTree).
 * Refusals are values; this is the one place they become {@code allowed: false}.
 */
@ApplicationScoped
public class ValidationService {
  static final String ENDPOINT = "validate";

  private final PolicyStore policies;
  private final PolicyConfig policyConfig;
  private final String webhookNamespace;
  private final ClusterView cluster;
  private final Supplier<GpuModelCatalog> models;
  private final AdmissionMetrics metrics;
  private final PodValidator pods;
  private final WorkloadValidator workloads;
  private final RecentAdmissions ledger;
  /** The team quota tree in force (none for a service built by hand, as the command line builds it). */
  private Supplier<Optional<QuotaTree>> quotaTrees = Optional::empty;

  @Inject
  public ValidationService(
      PolicyStore policies,
      MutationService mutation,
      PolicyConfig policyConfig,
      WebhookNamespace webhookNamespace,
      InformerClusterView cluster,
      NodeInventory nodes,
      PodInventory gangPods,
      QuotaTreeStore quotaTrees,
      AdmissionMetrics metrics,
      @ConfigProperty(name = "gpu-admission.gang.ledger-retention", defaultValue = "15s") Duration ledgerRetention) {
    this(
        policies,
        mutation,
        policyConfig,
        webhookNamespace.name(),
        cluster,
        nodes::models,
        metrics,
        new RecentAdmissions(ledgerRetention.toNanos(), System::nanoTime));
    // Once the informer shows a pod, it speaks for it: a deleted or finished member frees its place.
    gangPods.onGangPod(ledger::forget);
    this.quotaTrees = quotaTrees::tree;
  }

  /**
   * The same service over a given cluster and gang ledger (the command line's: objects from files,
   * every member of the input remembered for the whole run).
   */
  public ValidationService(
      PolicyStore policies,
      MutationService mutation,
      PolicyConfig policyConfig,
      String webhookNamespace,
      ClusterView cluster,
      Supplier<GpuModelCatalog> models,
      AdmissionMetrics metrics,
      RecentAdmissions ledger) {
    this.policies = policies;
    this.workloads = new WorkloadValidator(mutation.mutator(), KubernetesJson.mapper());
    this.policyConfig = policyConfig;
    this.webhookNamespace = webhookNamespace;
    this.cluster = cluster;
    this.models = models;
    this.metrics = metrics;
    this.ledger = ledger;
    this.pods = new PodValidator(ledger);
  }

  public AdmissionResponse review(DecodedReview review) {
    var start = System.nanoTime();
    var policy = policies.current();
    var operation = review.operation();
    if (!review.hasObject() || !(operation.equals("CREATE") || operation.equals("UPDATE"))) {
      return allow(review, List.of(), start);
    }
    try {
      if (review.isCoreKind("ConfigMap")) {
        return policyConfigMap(review, start);
      }
      if (QuotaTreeValidation.isQuotaTree(review)) {
        return quotaTree(review, start);
      }
      var pod = review.isCoreKind("Pod");
      var kind = pod ? Optional.<WorkloadKind>empty() : WorkloadKind.of(review.group(), review.kind());
      if (pod ? operation.equals("UPDATE") && !gangLabelsChanged(review, policy) : kind.isEmpty() || specUnchanged(review)) {
        // A pod's resources and selectors cannot change; only its gang labels can. Decided on the
        // trees, before the pod is typed: most pod UPDATEs are status and annotation writes.
        // Controllers update a workload's metadata (revision annotations, finalizers), also of
        // workloads admitted before this webhook or before a policy change: only spec changes are judged.
        return allow(review, List.of(), start);
      }
      var unread = policies.unread();
      if (unread.isPresent()) {
        return unjudged(review, kind, policy, unread.get(), start);
      }
      if (policy.isExempt(review.namespace())) {
        return allow(review, List.of(), start);
      }
      ValidationResult result;
      if (pod) {
        var malformed = MalformedPod.pod(review.rawObject());
        if (malformed.isPresent()) {
          return malformed(review, malformed.get(), start);
        }
        var typed = review.pod();
        var badQuantity = QuantitySyntax.problem(typed);
        if (badQuantity.isPresent()) {
          return malformed(review, badQuantity.get(), start);
        }
        var labels = typed.getMetadata().getLabels();
        if (labels != null && "true".equals(labels.get(policy.optOutLabel()))) {
          return allow(review, List.of(), start);
        }
        result = pods.validate(new PodSubject(typed, review.namespace(), policy, cluster, "pod"), !review.dryRun());
        QuotaNeverFitsRule.check(typed, review.namespace(), policy, quotaTrees.get(), "pod", result);
      } else {
        for (var template : kind.get().templates(review.object())) {
          var malformed = MalformedPod.template(template.template(), template.path());
          if (malformed.isPresent()) {
            return malformed(review, malformed.get(), start);
          }
          var badQuantity = TemplateQuantities.problem(requireFieldTypes(review, template), template.path());
          if (badQuantity.isPresent()) {
            return malformed(review, badQuantity.get(), start);
          }
        }
        result =
            workloads.validate(kind.get(), review.object(), review.oldObject(), review.namespace(), policy, cluster, models.get());
        for (var template : kind.get().templates(review.object())) {
          var spec = requireFieldTypes(review, template);
          var templatePod = new io.fabric8.kubernetes.api.model.PodBuilder().withMetadata(spec.getMetadata()).withSpec(spec.getSpec()).build();
          QuotaNeverFitsRule.check(templatePod, review.namespace(), policy, quotaTrees.get(), template.path(), result);
        }
      }
      result.violations().forEach(v -> metrics.ruleApplied(ENDPOINT, v.rule()));
      if (result.refused()) {
        metrics.record(ENDPOINT, Outcome.DENIED, start);
        var messages = result.violations().stream().map(v -> v.message()).toList();
        return Responses.deny(review.uid(), "Invalid", subject(review) + join(messages), result.warnings());
      }
      return allow(review, result.warnings(), start);
    } catch (MalformedObjectException e) {
      throw e; // a malformed review: answered 400 by the endpoint, never "could not judge"
    } catch (RuntimeException e) {
      UnjudgedLog.warn(ENDPOINT, review.kind() + " " + review.namespace() + "/" + review.objectName(), review.uid(), e);
      var gpu = RawPodInspector.asksForGpu(podLike(review), policy);
      if (policy.failureMode().forPod(gpu) == FailureMode.OPEN) {
        metrics.record(ENDPOINT, Outcome.FAILED_OPEN, start);
        return Responses.allow(review.uid(), List.of("gpu-admission could not judge " + subject(review) + "admitted (policy failureMode is open)"));
      }
      metrics.record(ENDPOINT, Outcome.FAILED_CLOSED, start);
      return Responses.deny(
          review.uid(),
          "InternalError",
          subject(review) + "gpu-admission could not judge it (" + e.getClass().getSimpleName()
              + "); GPU workloads are refused when they cannot be judged (policy failureMode.gpuPods: closed); see the webhook log for uid "
              + review.uid(),
          List.of());
    }
  }

  /**
   * Before the cluster's policy has been read: a GPU pod or workload is refused for now, as /mutate
   * refuses GPU pods, rather than judged by a policy that may not be the cluster's; another
   * object is admitted unjudged.
   */
  private AdmissionResponse unjudged(DecodedReview review, Optional<WorkloadKind> kind, GpuPolicy policy, String unread, long start) {
    var what = UnreadPolicy.notRead(unread);
    var gpu =
        kind.isEmpty()
            ? RawPodInspector.asksForGpu(review.object(), policy)
            : kind.get().templates(review.object()).stream().anyMatch(t -> RawPodInspector.asksForGpu(t.template(), policy));
    if (!gpu) {
      metrics.record(ENDPOINT, Outcome.FAILED_OPEN, start);
      return Responses.allow(review.uid(), List.of(subject(review) + what + "; admitted unjudged"));
    }
    metrics.record(ENDPOINT, Outcome.FAILED_CLOSED, start);
    return Responses.unavailable(
        review.uid(), subject(review) + UnreadPolicy.refusal(what, "GPU pods and workloads", "judged", "create or apply it again"));
  }

  private static boolean specUnchanged(DecodedReview review) {
    return review.operation().equals("UPDATE")
        && review.oldObject() != null
        && review.object().path("spec").equals(review.oldObject().path("spec"));
  }

  private static boolean gangLabelsChanged(DecodedReview review, io.gpuadmission.policy.GpuPolicy policy) {
    if (review.oldObject() == null) {
      return true;
    }
    var topology = policy.topology();
    for (var key : List.of(topology.jobLabel(), topology.replicaLabel())) {
      var now = review.object().path("metadata").path("labels").path(key);
      var before = review.oldObject().path("metadata").path("labels").path(key);
      if (!now.equals(before)) {
        return true;
      }
    }
    return false;
  }

  private AdmissionResponse policyConfigMap(DecodedReview review, long start) {
    if (!review.namespace().equals(webhookNamespace) || !review.objectName().equals(policyConfig.configMapName())) {
      return allow(review, List.of(), start);
    }
    var text = review.object().path("data").path(policyConfig.key());
    try {
      if (!text.isTextual()) {
        throw new InvalidPolicyException(List.of(new io.gpuadmission.policy.PolicyError("", 0, "the ConfigMap has no key " + policyConfig.key())));
      }
      var parsed = PolicyParser.parse(text.asText());
      return allow(review, PolicyPlacementCheck.warnings(parsed, cluster.nodes()), start);
    } catch (InvalidPolicyException e) {
      metrics.ruleApplied(ENDPOINT, "policy");
      metrics.record(ENDPOINT, Outcome.DENIED, start);
      return Responses.deny(
          review.uid(), "Invalid", "ConfigMap \"" + review.objectName() + "\": " + policyConfig.key() + " is not a valid policy: " + e.getMessage(), List.of());
    }
  }

  /** An ElasticQuotaTree that breaks ACK's rules is refused with each rule and its path. */
  private AdmissionResponse quotaTree(DecodedReview review, long start) {
    var refusal = QuotaTreeValidation.refusal(review);
    if (refusal.isEmpty()) {
      return allow(review, List.of(), start);
    }
    metrics.ruleApplied(ENDPOINT, "quota-tree");
    metrics.record(ENDPOINT, Outcome.DENIED, start);
    return Responses.deny(review.uid(), "Invalid", subject(review) + refusal.get(), List.of());
  }

  /**
   * A template field of the wrong JSON type ({@code hostPID: "maybe"}) makes the review malformed,
   * as it does for a Pod sent alone: a 400 naming the field from the object's root ({@code
   * spec.template.spec.hostPID}), not the failure mode's "could not judge". Returns the template, typed.
   */
  private static PodTemplateSpec requireFieldTypes(DecodedReview review, PodTemplate template) {
    try {
      return KubernetesJson.mapper().treeToValue(template.template(), PodTemplateSpec.class);
    } catch (JsonProcessingException e) {
      throw new MalformedObjectException(subject(review) + JsonProblem.describe(e, "a PodTemplateSpec object", template.path(), false));
    }
  }

  /** A pod or template the rules cannot read (see {@link MalformedPod}): refused saying why. */
  private AdmissionResponse malformed(DecodedReview review, String problem, long start) {
    metrics.record(ENDPOINT, Outcome.MALFORMED, start);
    return Responses.deny(review.uid(), "BadRequest", subject(review) + problem, List.of());
  }

  private AdmissionResponse allow(DecodedReview review, List<String> warnings, long start) {
    metrics.record(ENDPOINT, Outcome.ALLOWED, start);
    return Responses.allow(review.uid(), warnings);
  }

  private static String subject(DecodedReview review) {
    return review.kind() + " \"" + review.objectName() + "\": ";
  }

  private static String join(List<String> messages) {
    if (messages.size() == 1) {
      return messages.get(0);
    }
    var out = new StringBuilder();
    for (int i = 0; i < messages.size(); i++) {
      out.append(i == 0 ? "" : "; ").append('(').append(i + 1).append(") ").append(messages.get(i));
    }
    return out.toString();
  }

  /** For the failure mode: the pod, or the first pod template of a workload. */
  private static JsonNode podLike(DecodedReview review) {
    if (review.isCoreKind("Pod")) {
      return review.object();
    }
    var kind = WorkloadKind.of(review.group(), review.kind());
    if (kind.isPresent()) {
      try {
        var templates = kind.get().templates(review.object());
        return templates.isEmpty() ? null : templates.get(0).template();
      } catch (RuntimeException unreadable) {
        return null;
      }
    }
    return null;
  }
}
