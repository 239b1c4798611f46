package io.gpuadmission.admission;

import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.pod.NullListEntry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Optional;

/**
 * What makes a pod, or a workload's pod template, unreadable by the rules: no spec (and, for a
 * Pod, no metadata), or a null list entry. kube-apiserver never sends such a Pod (Go types cannot
 * hold one); a custom resource's template can still carry a null entry. Found before any rule
 * runs and refused saying where, instead of failing inside a rule. A Pod is read from its tokens:
 * the hot path builds no JSON tree for this.
 */
final class MalformedPod {
  private MalformedPod() {}

  /** The problem with a review's Pod, or empty when the rules can read it. */
  static Optional<String> pod(ReviewObject pod) {
    try (var parser = pod.parser()) {
      var metadata = false;
      var spec = false;
      if (parser.nextToken() == JsonToken.START_OBJECT) {
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
          var name = parser.currentName();
          var value = parser.nextToken();
          metadata |= name.equals("metadata") && value == JsonToken.START_OBJECT;
          spec |= name.equals("spec") && value == JsonToken.START_OBJECT;
          parser.skipChildren();
        }
      }
      if (!metadata || !spec) {
        return Optional.of(missing(metadata ? "spec" : "metadata"));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("tokens already read once cannot fail", e);
    }
    try (var parser = pod.parser()) {
      return NullListEntry.find(parser, "", null).map(NullListEntry::problem);
    } catch (IOException e) {
      throw new UncheckedIOException("tokens already read once cannot fail", e);
    }
  }

  /** The problem with a workload's pod template at {@code path}, or empty. */
  static Optional<String> template(JsonNode template, String path) {
    if (!template.path("spec").isObject()) {
      return Optional.of(missing(path + ".spec"));
    }
    return NullListEntry.find(template, path).map(NullListEntry::problem);
  }

  private static String missing(String where) {
    return where + " is missing or not an object: a pod cannot be judged without it";
  }
}
