package io.gpuadmission.validation;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.ClusterView;
import io.gpuadmission.mutation.MutationContext;
import io.gpuadmission.mutation.PodMutator;
import io.gpuadmission.cluster.GpuModelCatalog;
import io.gpuadmission.policy.PolicyParser;
import io.gpuadmission.support.Fixtures;
import io.fabric8.zjsonpatch.JsonPatch;
import org.junit.jupiter.api.Test;

/** Pods as /validate sees them: after /mutate left out the host namespace the API server would refuse. */
class HostNamespaceConflictRuleTest {
  private final PodMutator mutator = new PodMutator(PodMutator.standardRules(), KubernetesJson.mapper());

  private ValidationResult validateMutated(String fixture, java.util.function.Consumer<Pod> edit) {
    var pod = KubernetesJson.mapper().convertValue(Fixtures.podJson(Fixtures.path(fixture)), Pod.class);
    edit.accept(pod);
    var json = KubernetesJson.mapper().<com.fasterxml.jackson.databind.JsonNode>valueToTree(pod);
    var policy = PolicyParser.builtInDefault();
    var patch = mutator.mutate(json, new MutationContext("default", policy, GpuModelCatalog.EMPTY)).patch();
    var mutated = KubernetesJson.mapper().convertValue(JsonPatch.apply(patch, json), Pod.class);
    var result = new ValidationResult();
    new HostNamespaceConflictRule().check(new PodSubject(mutated, "default", policy, ClusterView.EMPTY, "pod"), result);
    return result;
  }

  @Test
  void refusesTopologyPodPublishingAHostPortOtherThanItsContainerPort() {
    var result = validateMutated("mutation/topology-host-port/pod.yaml", pod -> {});

    assertThat(result.violations())
        .extracting(Violation::message)
        .containsExactly(
            "gpu-topology job \"pytorch-dist-nccl\" needs hostNetwork, but container \"pytorch\" maps hostPort 30080 to"
                + " containerPort 8080, and with hostNetwork the API server requires hostPort to equal containerPort;"
                + " remove that setting from the pod (or the platform team sets policy topology.onConflict: skip to run"
                + " such pods without it)");
  }

  @Test
  void refusesTopologyPodInItsOwnUserNamespaceNamingEveryHostNamespace() {
    var result = validateMutated("mutation/pytorch-dist-nccl-worker/pod.yaml", pod -> pod.getSpec().setHostUsers(false));

    assertThat(result.violations()).hasSize(1);
    assertThat(result.violations().get(0).message())
        .startsWith(
            "gpu-topology job \"pytorch-dist-nccl\" needs hostIPC, but the pod sets hostUsers: false (its own user"
                + " namespace), which the API server refuses together with hostIPC; and hostNetwork, but")
        .contains("; and hostPID, but the pod sets hostUsers: false");
  }

  @Test
  void admitsTopologyPodWhosePortsMatchOnTheHostNetwork() {
    var result =
        validateMutated(
            "mutation/topology-host-port/pod.yaml",
            pod -> pod.getSpec().getContainers().get(0).getPorts().get(0).setHostPort(8080));

    assertThat(result.violations()).isEmpty();
  }

  @Test
  void refusesTopologyPodWhoseContainersShareAPortThatWouldBecomeOneHostPortTwice() {
    var result =
        validateMutated(
            "mutation/topology-host-port/pod.yaml",
            pod -> {
              var port = pod.getSpec().getContainers().get(0).getPorts().get(0);
              port.setHostPort(null);
              var sidecar = new io.fabric8.kubernetes.api.model.ContainerBuilder()
                  .withName("exporter").withImage("nvidia/dcgm-exporter")
                  .addNewPort().withContainerPort(8080).endPort()
                  .build();
              pod.getSpec().getContainers().add(sidecar);
            });

    assertThat(result.violations())
        .extracting(Violation::message)
        .containsExactly(
            "gpu-topology job \"pytorch-dist-nccl\" needs hostNetwork, but containers \"pytorch\" and \"exporter\" both"
                + " declare port 8080/TCP, and with hostNetwork each port is a host port, which the API server refuses to"
                + " give twice; remove that setting from the pod (or the platform team sets policy topology.onConflict: skip"
                + " to run such pods without it)");
  }


  @Test
  void readsASysctlWrittenWithSlashesAsTheApiServerDoes() {
    var result =
        validateMutated(
            "mutation/pytorch-dist-nccl-worker/pod.yaml",
            pod -> pod.getSpec().setSecurityContext(
                new io.fabric8.kubernetes.api.model.PodSecurityContextBuilder()
                    .addNewSysctl().withName("net/ipv4/ip_local_port_range").withValue("1024 65000").endSysctl()
                    .build()));

    assertThat(result.violations())
        .extracting(Violation::message)
        .containsExactly(
            "gpu-topology job \"pytorch-dist-nccl\" needs hostNetwork, but the pod sets sysctl net/ipv4/ip_local_port_range,"
                + " which belongs to the pod's own namespace and which the API server refuses together with hostNetwork;"
                + " remove that setting from the pod (or the platform team sets policy topology.onConflict: skip to run"
                + " such pods without it)");
  }
}
