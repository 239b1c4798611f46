package io.gpuadmission.gang;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.gpuadmission.placement.MemberPlan;
import java.util.Map;
import java.util.Optional;

/**
 * Writes a member's plan on the pod, or takes it off, as one JSON merge patch of its annotations;
 * the UID in the patch makes the API server refuse it for a pod recreated under the same name.
 */
final class PlanPatcher {
  private final KubernetesClient client;

  PlanPatcher(KubernetesClient client) {
    this.client = client;
  }

  /** Empty on success, else why not. */
  Optional<String> write(GangMember member, MemberPlan plan) {
    return patch(member, plan.annotations(), true);
  }

  /** Empty on success or when the pod is gone already, else why not. */
  Optional<String> release(GangMember member) {
    return patch(member, MemberPlan.released(), false);
  }

  /** The same for a pod that is no gang member any more. */
  Optional<String> release(String namespace, String name, String uid) {
    return patch(namespace, name, uid, MemberPlan.released(), false);
  }

  private Optional<String> patch(GangMember member, Map<String, ?> annotations, boolean mustExist) {
    return patch(member.namespace(), member.name(), member.uid(), annotations, mustExist);
  }

  private Optional<String> patch(String namespace, String name, String uid, Map<String, ?> annotations, boolean mustExist) {
    var body = Map.of("metadata", Map.of("uid", uid, "annotations", annotations));
    try {
      client.pods().inNamespace(namespace).withName(name)
          .patch(PatchContext.of(PatchType.JSON_MERGE), client.getKubernetesSerialization().asJson(body));
      return Optional.empty();
    } catch (KubernetesClientException e) {
      if (!mustExist && e.getCode() == 404) {
        return Optional.empty();
      }
      return Optional.of(e.getStatus() != null && e.getStatus().getMessage() != null ? e.getStatus().getMessage() : String.valueOf(e.getMessage()));
    }
  }
}
