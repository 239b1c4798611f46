package io.gpuadmission.extender;

import com.fasterxml.jackson.annotation.JsonAlias;
import com.fasterxml.jackson.annotation.JsonFormat;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.fabric8.kubernetes.api.model.NodeList;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;

/**
 * kube-scheduler's extender types ({@code k8s.io/kube-scheduler/extender/v1}): Go field names, no
 * JSON tags. Requests are read case-insensitively (older schedulers sent lower-case keys); answers
 * are written with the Go names.
 */
final class ExtenderWire {
  private ExtenderWire() {}

  /** ExtenderArgs: {@code Nodes} when nodeCacheCapable is false, {@code NodeNames} when true. */
  @JsonFormat(with = JsonFormat.Feature.ACCEPT_CASE_INSENSITIVE_PROPERTIES)
  record Args(@JsonProperty("Pod") Pod pod, @JsonProperty("Nodes") NodeList nodes, @JsonProperty("NodeNames") List<String> nodeNames) {}

  /** ExtenderFilterResult: the same form (names or Node objects) as the request. */
  @JsonInclude(JsonInclude.Include.ALWAYS)
  record FilterResult(
      @JsonProperty("Nodes") NodeList nodes,
      @JsonProperty("NodeNames") List<String> nodeNames,
      @JsonProperty("FailedNodes") Map<String, String> failedNodes,
      @JsonProperty("FailedAndUnresolvableNodes") Map<String, String> failedAndUnresolvableNodes,
      @JsonProperty("Error") String error) {}

  /** One entry of HostPriorityList. */
  record HostPriority(@JsonProperty("Host") String host, @JsonProperty("Score") long score) {}

  /** ExtenderBindingArgs. */
  @JsonFormat(with = JsonFormat.Feature.ACCEPT_CASE_INSENSITIVE_PROPERTIES)
  record BindingArgs(
      @JsonProperty("PodName") String podName,
      @JsonProperty("PodNamespace") String podNamespace,
      @JsonProperty("PodUID") String podUid,
      @JsonProperty("Node") String node) {}

  /**
   * ExtenderPreemptionArgs: {@code NodeNameToMetaVictims} (victims by UID) when nodeCacheCapable is
   * true, else {@code NodeNameToVictims} (whole pods); schedulers before 1.17 wrote the latter
   * {@code nodeToVictims}.
   */
  @JsonFormat(with = JsonFormat.Feature.ACCEPT_CASE_INSENSITIVE_PROPERTIES)
  record PreemptionArgs(
      @JsonProperty("Pod") Pod pod,
      @JsonProperty("NodeNameToVictims") @JsonAlias("nodeToVictims") Map<String, Victims> nodeNameToVictims,
      @JsonProperty("NodeNameToMetaVictims") Map<String, MetaVictims> nodeNameToMetaVictims) {}

  /** Victims: whole pods. */
  @JsonFormat(with = JsonFormat.Feature.ACCEPT_CASE_INSENSITIVE_PROPERTIES)
  record Victims(@JsonProperty("Pods") List<Pod> pods, @JsonProperty("NumPDBViolations") long numPdbViolations) {}

  /** MetaVictims: pods by UID. */
  @JsonFormat(with = JsonFormat.Feature.ACCEPT_CASE_INSENSITIVE_PROPERTIES)
  record MetaVictims(@JsonProperty("Pods") List<MetaPod> pods, @JsonProperty("NumPDBViolations") long numPdbViolations) {}

  /** MetaPod. */
  @JsonFormat(with = JsonFormat.Feature.ACCEPT_CASE_INSENSITIVE_PROPERTIES)
  record MetaPod(@JsonProperty("UID") String uid) {}

  /** ExtenderPreemptionResult: always victims by UID, whatever the request held. */
  record PreemptionResult(@JsonProperty("NodeNameToMetaVictims") Map<String, MetaVictims> nodeNameToMetaVictims) {}

  /** ExtenderBindingResult. */
  record BindingResult(@JsonProperty("Error") String error) {}
}
