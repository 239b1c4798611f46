package io.gpuadmission.cli;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.cluster.ClusterSnapshot;
import io.gpuadmission.pod.QuantitySyntax;
import io.gpuadmission.policy.GpuPolicy;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import picocli.CommandLine.Option;

/** {@code --cluster}: the nodes and pods the webhook and extender would see, from files. */
final class ClusterOption {
  @Option(
      names = "--cluster",
      paramLabel = "FILE|DIR",
      description = {
        "Nodes and pods as `kubectl get nodes,pods -A -o yaml` writes them (also namespaces, for their",
        "Pod Security labels, and kube-system's unhealthy-gpu-<node> ConfigMaps). Repeatable."
      })
  List<String> files = new ArrayList<>();

  /** The cluster the files describe; empty (no nodes, no pods) without {@code --cluster}. */
  ClusterSnapshot load(GpuPolicy policy, ManifestReader reader, PrintWriter err) {
    if (files.isEmpty()) {
      return ClusterSnapshot.empty(policy);
    }
    var read = reader.read(files, false);
    var problems = new ArrayList<>(read.problems());
    var nodes = new ArrayList<Node>();
    var pods = new ArrayList<Pod>();
    var namespaces = new ArrayList<Namespace>();
    var configMaps = new ArrayList<ConfigMap>();
    var ignored = new TreeSet<String>();
    var ignoredCount = 0;
    for (var manifest : read.manifests()) {
      if (manifest.isCore("Node")) {
        typed(manifest, Node.class, nodes, problems);
      } else if (manifest.isCore("Pod")) {
        typed(manifest, Pod.class, pods, problems);
      } else if (manifest.isCore("Namespace")) {
        typed(manifest, Namespace.class, namespaces, problems);
      } else if (manifest.isCore("ConfigMap")) {
        typed(manifest, ConfigMap.class, configMaps, problems);
      } else {
        ignored.add(manifest.kind());
        ignoredCount++;
      }
    }
    if (!problems.isEmpty()) {
      throw new BadInputException(problems.stream().map(p -> "--cluster " + p).toList());
    }
    if (ignoredCount > 0) {
      err.println("gpu-admission: --cluster: " + ignoredCount + " object" + (ignoredCount == 1 ? "" : "s") + " of other kinds left out ("
          + String.join(", ", ignored) + "): only nodes, pods, namespaces and ConfigMaps are read");
    }
    return new ClusterSnapshot(policy, nodes, pods, namespaces, configMaps);
  }

  private static <T extends HasMetadata> void typed(Manifest manifest, Class<T> type, List<T> into, List<String> problems) {
    try {
      var object = KubernetesJson.mapper().treeToValue(manifest.object(), type);
      if (object.getMetadata() == null || object.getMetadata().getName() == null || object.getMetadata().getName().isEmpty()) {
        problems.add(manifest.source().describe() + ": " + manifest.kind() + " has no metadata.name");
        return;
      }
      var meta = object.getMetadata();
      if (object instanceof Pod) {
        // What the API server gives every pod, which a hand-written file may leave out: the ledger
        // and the gang registry know pods by UID.
        if (meta.getNamespace() == null || meta.getNamespace().isEmpty()) {
          meta.setNamespace("default");
        }
        if (meta.getUid() == null || meta.getUid().isEmpty()) {
          meta.setUid("gpu-admission-cli:" + meta.getNamespace() + "/" + meta.getName());
        }
      }
      var badQuantity = object instanceof Node node ? QuantitySyntax.problem(node)
          : object instanceof Pod pod ? QuantitySyntax.problem(pod) : Optional.<String>empty();
      if (badQuantity.isPresent()) {
        problems.add(manifest.source().describe() + ": " + manifest.kind() + " \"" + meta.getName() + "\": " + badQuantity.get());
        return;
      }
      into.add(object);
    } catch (com.fasterxml.jackson.core.JsonProcessingException | IllegalArgumentException e) {
      // Said as the webhook says it (the field's path, what was expected and what came); a tree has no lines.
      var message = e instanceof com.fasterxml.jackson.core.JsonProcessingException p
          ? io.gpuadmission.admission.JsonProblem.describe(p, "a " + manifest.kind() + " object", "", false) : e.getMessage();
      problems.add(manifest.source().describe() + ": " + manifest.kind() + " \"" + manifest.name() + "\" does not read as one: " + firstLine(message));
    }
  }

  private static String firstLine(String text) {
    var newline = text == null ? -1 : text.indexOf('\n');
    return text == null ? "" : newline < 0 ? text : text.substring(0, newline);
  }
}
