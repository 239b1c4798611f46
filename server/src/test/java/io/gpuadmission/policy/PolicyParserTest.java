package io.gpuadmission.policy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.gpuadmission.policy.AllocatorPolicy.MemoryShareStrategy;
import io.gpuadmission.support.Fixtures;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PolicyParserTest {

  @Test
  void shippedConfigMapHoldsTheBuiltInDefault() throws Exception {
    var configMap = Fixtures.yamlTree(java.nio.file.Path.of("manifests/base/policy-configmap.yaml"));
    var text = configMap.path("data").path("policy.yaml").asText();

    assertThat(PolicyParser.parse(text)).isEqualTo(PolicyParser.builtInDefault());
    assertThat(text).isEqualTo(PolicyParser.builtInDefaultText());
  }

  @Test
  void everyKeyRoundTrips() throws Exception {
    var custom =
        PolicyParser.parse(
            """
            exemptNamespaces: [kube-system, monitoring]
            optOutLabel: example.com/skip
            gpuResources: [nvidia.com/gpu, example.com/gpu-*]
            nodeLabels: {model: nvidia.com/gpu.product, memory: nvidia.com/gpu.memory, count: nvidia.com/gpu.count, pool: example.com/pool, placement: example.com/placement}
            cpuPods: {keepOffGpuNodes: false, exemptOwnerKinds: [DaemonSet, Node]}
            topology: {jobLabel: example.com/job, replicaLabel: example.com/replicas, wholeGpuResource: nvidia.com/gpu, resourceName: example.com/gpu, pool: topo, hostIPC: false, hostNetwork: true, hostPID: false, dnsPolicy: Default, allowedNamespaces: [ml], ackAnnotations: true}
            sharedMemory: {resourceName: example.com/gpu-mem, isolatedPool: iso, selfLimitedPool: shared, placement: spread, selfLimitedAnnotation: example.com/self, selfLimitedEnv: [TF_MEMORY_FRACTION]}
            gpuModel: {modelAnnotation: example.com/model, minMemoryAnnotation: example.com/min, memoryTolerancePercent: 5, namespaceDefaults: {ml: Tesla-T4}}
            allocator: {wholeGpu: first-fit, memoryShare: fgd, topologies: {Tesla-T4: "\\tGPU0\\tGPU1\\nGPU0\\t X \\tPHB\\nGPU1\\tPHB\\t X \\n"}, fgdWorkload: {learnedWindowMinutes: 30, declared: [{gpuMemory: 4, cpu: 1500m, weight: 3}, {gpus: 8, cpu: 64, weight: 0.5}]}}
            failureMode: {gpuPods: open, otherPods: closed}
            feasibility: {onInfeasible: warn, scaleFromZeroModels: [A100-SXM4-80GB, "*"]}
            quotas: {enabled: false, onNeverFits: refuse}
            """);

    assertThat(PolicyParser.parse(PolicyParser.write(custom))).isEqualTo(custom);
    assertThat(custom.sharedMemory().placement()).contains(Placement.SPREAD);
    assertThat(custom.allocator().memoryShare()).isEqualTo(MemoryShareStrategy.FGD);
    assertThat(custom.allocator().fgdWorkload().declared())
        .extracting(a -> a.gpuMemory() + " " + a.gpus() + " " + a.cpuMilli() + " " + a.weight())
        .containsExactly("Optional[4] Optional.empty 1500 3.0", "Optional.empty Optional[8] 64000 0.5");
    assertThat(custom.quotas()).isEqualTo(new QuotaPolicy(false, FeasibilityPolicy.OnInfeasible.REFUSE));
    assertThat(PolicyParser.builtInDefault().quotas()).isEqualTo(new QuotaPolicy(true, FeasibilityPolicy.OnInfeasible.WARN));
    assertThat(custom).isNotEqualTo(PolicyParser.builtInDefault());
  }

  @Test
  void keysLeftOutKeepTheirDefaults() throws Exception {
    var policy = PolicyParser.parse("gpuModel:\n  namespaceDefaults:\n    ml-team-a: Tesla-M40\n");

    assertThat(policy.gpuModel().namespaceDefaults()).containsEntry("ml-team-a", "Tesla-M40");
    assertThat(policy.topology()).isEqualTo(PolicyParser.builtInDefault().topology());
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      textBlock =
          """
          invalid namespace  | topology:\\n  allowedNamespaces: [ml, research, Team_A] | line 2: topology.allowedNamespaces[2]: "Team_A" is not a valid namespace name
          unknown key        | topology:\\n  hostIpc: true                           | line 2: topology.hostIpc: unknown key; known keys here: ackAnnotations, allowedNamespaces, dnsPolicy, hostIPC, hostNetwork, hostPID, jobLabel, onConflict, pool, replicaLabel, requireNVLink, resourceName, wholeGpuResource
          unknown conflict   | topology:\\n  onConflict: ignore                        | line 2: topology.onConflict: "ignore" is not one of [refuse, skip]
          yaml alias         | topology:\\n  allowedNamespaces: &teams [ml]\\nexemptNamespaces: *teams | line 3: YAML aliases (*teams) are not supported in the policy; write the value out where the alias stands
          yaml merge key     | topology:\\n  <<: {hostIPC: true}                      | line 2: topology.<<: YAML merge keys (<<) are not supported in the policy; write the keys out
          one label for both | topology:\\n  jobLabel: gpu-topology-replica            | line 2: topology.jobLabel: "gpu-topology-replica" is also topology.replicaLabel; the job name and the replica count need two labels
          wrong type         | cpuPods:\\n  keepOffGpuNodes: maybe                    | line 2: cpuPods.keepOffGpuNodes: expected true or false
          bad label key      | optOutLabel: "-bad/key"                                 | line 1: optOutLabel: "-bad/key" is not a valid Kubernetes label key
          negative quantity  | gpuModel:\\n  memoryTolerancePercent: -3               | line 2: gpuModel.memoryTolerancePercent: -3 must be between 0 and 50
          unknown strategy   | allocator:\\n  memoryShare: tightest                   | line 2: allocator.memoryShare: "tightest" is not one of [binpack, spread, fgd, fgd-cpu, fgd-lookahead]
          unknown version    | version: 2                                              | line 1: version: 2 is not supported; this webhook reads version 1
          bad topology       | allocator:\\n  topologies:\\n    Tesla-T4: "\\tGPU0\\tGPU1\\x0AGPU0\\t X \\tPHB\\x0AGPU1\\tSYS\\t X " | line 3: allocator.topologies.Tesla-T4: not a usable nvidia-smi topo -m matrix: asymmetric link matrix: GPU0->GPU1 is PHB but GPU1->GPU0 is SYS
          null value         | optOutLabel: null                                       | line 1: optOutLabel: must have a value (null is not allowed here)
          not a mapping      | - a list                                                | line 1: the policy must be a YAML mapping of keys to values
          bad scheduler name | scheduling:\\n  schedulerName: GPU_Scheduler            | line 2: scheduling.schedulerName: "GPU_Scheduler" is not a valid scheduler name (a DNS subdomain, such as gpu-scheduler)
          broken YAML        | topology: [unclosed                                     | line 1: not valid YAML: while parsing a flow sequence: expected ',' or ']', but got <stream end>
          ask of both kinds  | allocator:\\n  fgdWorkload:\\n    declared:\\n    - {gpuMemory: 4, gpus: 1, weight: 1} | line 4: allocator.fgdWorkload.declared[0]: gives both gpuMemory and gpus: an ask is either GiB of one GPU (gpuMemory) or whole GPUs (gpus)
          ask of no kind     | allocator:\\n  fgdWorkload:\\n    declared:\\n    - {weight: 2} | line 4: allocator.fgdWorkload.declared[0]: needs gpuMemory (GiB of one GPU) or gpus (whole GPUs)
          zero weight        | allocator:\\n  fgdWorkload:\\n    declared:\\n    - {gpus: 1, weight: 0} | line 4: allocator.fgdWorkload.declared[0].weight: 0 must be a positive number (how often this ask comes, relative to the others)
          weight as text     | allocator:\\n  fgdWorkload:\\n    declared:\\n    - {gpus: 1, weight: "30"} | line 4: allocator.fgdWorkload.declared[0].weight: expected a number
          ask given twice    | allocator:\\n  fgdWorkload:\\n    declared:\\n    - {gpus: 2, weight: 1}\\n    - {gpuMemory: 8, weight: 1}\\n    - {gpus: 2, weight: 3} | line 6: allocator.fgdWorkload.declared[2]: the same ask (2 whole GPUs) as allocator.fgdWorkload.declared[0]; give each ask once, with its whole weight
          unreadable cpu     | allocator:\\n  fgdWorkload:\\n    declared:\\n    - {gpuMemory: 8, cpu: four, weight: 1} | line 4: allocator.fgdWorkload.declared[0].cpu: "four" is not a CPU quantity (such as 4, 0.5 or 500m)
          unknown ask key    | allocator:\\n  fgdWorkload:\\n    declared:\\n    - {gpuMem: 8, weight: 1} | line 4: allocator.fgdWorkload.declared[0].gpuMem: unknown key; known keys here: cpu, gpuMemory, gpus, weight
          bad model to scale | feasibility:\\n  scaleFromZeroModels: ["*", "A100 80GB"] | line 2: feasibility.scaleFromZeroModels[1]: "A100 80GB" is not a valid label value
          quotas as text     | quotas:\\n  enabled: "no"                           | line 2: quotas.enabled: expected true or false
          unknown never-fits | quotas:\\n  onNeverFits: ignore                     | line 2: quotas.onNeverFits: "ignore" is not one of [refuse, warn]
          negative window    | allocator:\\n  fgdWorkload:\\n    learnedWindowMinutes: -5 | line 3: allocator.fgdWorkload.learnedWindowMinutes: -5 must be between 0 (pending and running pods only) and 10080 (a week)
          """)
  void refusesInvalidDocumentWithKeyPathAndLine(String what, String yaml, String message) {
    assertThatThrownBy(() -> PolicyParser.parse(yaml.replace("\\n", "\n")))
        .isInstanceOf(InvalidPolicyException.class)
        .hasMessage(message);
  }

  @Test
  void reportsEveryUnknownKeyAndBadValueOfTheDocumentInOneRun() {
    var yaml =
        """
        topology:
          hostIpc: true
          onConflict: ignore
          allowedNamespaces: [ml, {team: a}, Team_A]
        cpuPods:
          keepOffGpuNodes: maybe
        allocator:
          fgdWorkload:
            declared:
            - {gpuMemory: four, weight: 1}
            - {gpuMem: 8, weight: 1}
        gpuModel:
          memoryTolerancePercent: 80
        """;

    assertThatThrownBy(() -> PolicyParser.parse(yaml))
        .isInstanceOf(InvalidPolicyException.class)
        .hasMessage(
            """
            line 2: topology.hostIpc: unknown key; known keys here: ackAnnotations, allowedNamespaces, dnsPolicy, hostIPC, hostNetwork, hostPID, jobLabel, onConflict, pool, replicaLabel, requireNVLink, resourceName, wholeGpuResource
            line 3: topology.onConflict: "ignore" is not one of [refuse, skip]
            line 4: topology.allowedNamespaces[1]: expected a string
            line 4: topology.allowedNamespaces[2]: "Team_A" is not a valid namespace name
            line 6: cpuPods.keepOffGpuNodes: expected true or false
            line 10: allocator.fgdWorkload.declared[0].gpuMemory: expected a whole number
            line 11: allocator.fgdWorkload.declared[1].gpuMem: unknown key; known keys here: cpu, gpuMemory, gpus, weight
            line 13: gpuModel.memoryTolerancePercent: 80 must be between 0 and 50""");
  }
}
