package io.gpuadmission.manifests;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.api.model.rbac.RoleRef;
import io.fabric8.kubernetes.api.model.rbac.Subject;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * One verb on one resource that RBAC grants a service account, as rendered from the manifests:
 * {@code namespace} is "" for a ClusterRoleBinding, {@code names} empty for any object.
 */
record RbacGrant(String role, String namespace, String group, String resource, String verb, Set<String> names) {

  /** Every grant the bindings among {@code objects} give {@code namespace/serviceAccount}. */
  static List<RbacGrant> of(List<HasMetadata> objects, String namespace, String serviceAccount) {
    var grants = new ArrayList<RbacGrant>();
    for (var object : objects) {
      if (object instanceof ClusterRoleBinding binding && names(binding.getSubjects(), namespace, serviceAccount)) {
        grants.addAll(expand(objects, binding.getRoleRef(), "", ""));
      } else if (object instanceof RoleBinding binding && names(binding.getSubjects(), namespace, serviceAccount)) {
        grants.addAll(expand(objects, binding.getRoleRef(), binding.getMetadata().getNamespace(), binding.getMetadata().getNamespace()));
      }
    }
    return grants;
  }

  /** Whether RBAC lets {@code call} through this grant. */
  boolean allows(ApiCall call) {
    return (group.equals("*") || group.equals(call.group()))
        && (resource.equals("*") || resource.equals(call.resource()))
        && (verb.equals("*") || verb.equals(call.verb()))
        && (namespace.isEmpty() || namespace.equals(call.namespace()))
        && (names.isEmpty() || names.contains(call.name()));
  }

  @Override
  public String toString() {
    return role + ": " + verb + " " + (group.isEmpty() ? "" : group + "/") + resource + (namespace.isEmpty() ? "" : " in " + namespace)
        + (names.isEmpty() ? "" : " named " + names);
  }

  private static boolean names(List<Subject> subjects, String namespace, String serviceAccount) {
    return subjects != null && subjects.stream().anyMatch(s -> "ServiceAccount".equals(s.getKind())
        && serviceAccount.equals(s.getName()) && namespace.equals(s.getNamespace()));
  }

  private static List<RbacGrant> expand(List<HasMetadata> objects, RoleRef ref, String roleNamespace, String scope) {
    List<PolicyRule> rules = null;
    for (var object : objects) {
      var name = object.getMetadata().getName();
      if (ref.getKind().equals("ClusterRole") && object instanceof ClusterRole role && name.equals(ref.getName())) {
        rules = role.getRules();
      } else if (ref.getKind().equals("Role") && object instanceof Role role && name.equals(ref.getName())
          && roleNamespace.equals(role.getMetadata().getNamespace())) {
        rules = role.getRules();
      }
    }
    if (rules == null) {
      throw new AssertionError("binding to " + ref.getKind() + " " + ref.getName() + " that the manifests do not define");
    }
    var grants = new ArrayList<RbacGrant>();
    for (var rule : rules) {
      for (var group : rule.getApiGroups()) {
        for (var resource : rule.getResources()) {
          for (var verb : rule.getVerbs()) {
            var names = rule.getResourceNames() == null ? Set.<String>of() : Set.copyOf(rule.getResourceNames());
            grants.add(new RbacGrant(ref.getKind() + " " + ref.getName(), scope, group, resource, verb, names));
          }
        }
      }
    }
    return grants;
  }
}
