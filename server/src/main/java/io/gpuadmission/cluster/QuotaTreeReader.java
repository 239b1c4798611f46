package io.gpuadmission.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.quantity.KubeQuantity;
import io.gpuadmission.quota.QuotaNodeSpec;
import io.gpuadmission.quota.QuotaResources;
import io.gpuadmission.quota.QuotaRuleViolation;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * Reads an {@code ElasticQuotaTree} object's {@code spec.root} into the quota core's spec, every
 * amount in canonical units. What cannot be read (a quantity that is no number, a name that is no
 * string, a children entry that is no mapping) is a violation at its path, as the tree's rules are:
 * the webhook refuses the object with them and the watcher keeps the last good tree.
 */
public final class QuotaTreeReader {
  /** The spec, or why it cannot be read. */
  public sealed interface Read {
    record Spec(QuotaNodeSpec root) implements Read {}

    record Unreadable(List<QuotaRuleViolation> violations) implements Read {}
  }

  private QuotaTreeReader() {}

  /** The tree of an ElasticQuotaTree object (its whole JSON). */
  public static Read read(JsonNode object) {
    var root = object == null ? null : object.path("spec").get("root");
    var problems = new ArrayList<QuotaRuleViolation>();
    if (root == null || !root.isObject()) {
      problems.add(new QuotaRuleViolation("spec.root", "", "the tree needs a root quota node {name, min, max, children}"));
      return new Read.Unreadable(problems);
    }
    var spec = node(root, "spec.root", problems);
    return problems.isEmpty() ? new Read.Spec(spec) : new Read.Unreadable(problems);
  }

  private static QuotaNodeSpec node(JsonNode json, String path, List<QuotaRuleViolation> problems) {
    // A missing name is the tree rules' to report (they name the node's path); only a name that is no string is unreadable.
    var name = json.get("name");
    var quota = name != null && name.isTextual() ? name.asText() : "";
    if (name != null && !name.isNull() && !name.isTextual()) {
      problems.add(new QuotaRuleViolation(path + ".name", "", "a quota node's name must be a string"));
    }
    var min = resources(json.get("min"), path + ".min", quota, problems);
    var max = resources(json.get("max"), path + ".max", quota, problems);
    var namespaces = new ArrayList<String>();
    var listed = json.get("namespaces");
    if (listed != null && !listed.isNull()) {
      if (!listed.isArray()) {
        problems.add(new QuotaRuleViolation(path + ".namespaces", quota, "namespaces must be a list of namespace names"));
      } else {
        for (int i = 0; i < listed.size(); i++) {
          if (listed.get(i).isTextual()) {
            namespaces.add(listed.get(i).asText());
          } else {
            problems.add(new QuotaRuleViolation(path + ".namespaces[" + i + "]", quota, "a namespace name must be a string"));
          }
        }
      }
    }
    var children = new ArrayList<QuotaNodeSpec>();
    var written = json.get("children");
    if (written != null && !written.isNull()) {
      if (!written.isArray()) {
        problems.add(new QuotaRuleViolation(path + ".children", quota, "children must be a list of quota nodes"));
      } else {
        for (int i = 0; i < written.size(); i++) {
          var child = written.get(i);
          var where = path + ".children[" + i + "]";
          if (child.isObject()) {
            children.add(node(child, where, problems));
          } else {
            problems.add(new QuotaRuleViolation(where, "", "a quota node must be a mapping {name, min, max, ...}"));
          }
        }
      }
    }
    return new QuotaNodeSpec(quota, min, max, namespaces, children);
  }

  /** {@code nvidia.com/gpu: 4, memory: 16Gi}: each a Kubernetes quantity, as a number or a string. */
  private static QuotaResources resources(JsonNode json, String path, String quota, List<QuotaRuleViolation> problems) {
    if (json == null || json.isNull()) {
      return QuotaResources.NONE;
    }
    if (!json.isObject()) {
      problems.add(new QuotaRuleViolation(path, quota, "must be a mapping of resource names to quantities"));
      return QuotaResources.NONE;
    }
    var amounts = new LinkedHashMap<String, Long>();
    for (var entry : json.properties()) {
      var value = entry.getValue();
      var text = value.isNumber() || value.isTextual() ? value.asText() : null;
      var quantity = text == null ? java.util.Optional.<java.math.BigDecimal>empty() : KubeQuantity.parseJsonValue(text);
      if (quantity.isEmpty() || quantity.get().signum() < 0) {
        problems.add(new QuotaRuleViolation(path + "." + entry.getKey(), quota,
            (text == null ? value.toString() : "\"" + text + "\"") + " is not a quantity of at least 0 (" + KubeQuantity.VALID + ")"));
        continue;
      }
      amounts.put(entry.getKey(), QuotaResources.canonical(entry.getKey(), quantity.get()));
    }
    return QuotaResources.of(amounts);
  }
}
