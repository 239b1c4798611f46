package io.gpuadmission.manifests;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * One request to the API server, as RBAC sees it: verb, API group, resource (with its subresource),
 * namespace ("" when cluster-scoped) and object name ("" when none). List and watch requests name
 * their object through a {@code metadata.name} field selector, as RBAC's resourceNames require.
 */
record ApiCall(String verb, String group, String resource, String namespace, String name) {
  private static final Pattern NAME_SELECTOR = Pattern.compile("(?:^|,)metadata\\.name=([^,]+)");

  /** The call a request line makes, or empty for a path that names no resource (discovery, /version). */
  static Optional<ApiCall> of(String method, String pathAndQuery) {
    var question = pathAndQuery.indexOf('?');
    var path = question < 0 ? pathAndQuery : pathAndQuery.substring(0, question);
    var query = question < 0 ? "" : URLDecoder.decode(pathAndQuery.substring(question + 1), StandardCharsets.UTF_8);
    var parts = path.replaceFirst("^/", "").split("/");
    int at;
    String group;
    if (parts.length >= 3 && parts[0].equals("api")) {
      group = "";
      at = 2;
    } else if (parts.length >= 4 && parts[0].equals("apis")) {
      group = parts[1];
      at = 3;
    } else {
      return Optional.empty();
    }
    var namespace = "";
    if (parts[at].equals("namespaces") && parts.length - at >= 3) {
      namespace = parts[at + 1];
      at += 2;
    }
    var resource = parts[at];
    var name = parts.length > at + 1 ? parts[at + 1] : "";
    if (parts.length > at + 2) {
      resource += "/" + parts[at + 2];
    }
    var watch = query.matches("(?s)(.*&)?watch=(true|1)(&.*)?");
    var verb =
        switch (method) {
          case "GET" -> watch ? "watch" : name.isEmpty() ? "list" : "get";
          case "POST" -> "create";
          case "PUT" -> "update";
          case "PATCH" -> "patch";
          case "DELETE" -> name.isEmpty() ? "deletecollection" : "delete";
          default -> method.toLowerCase(java.util.Locale.ROOT);
        };
    if (name.isEmpty()) {
      name = fieldSelectorName(query);
    }
    return Optional.of(new ApiCall(verb, group, resource, namespace, name));
  }

  private static String fieldSelectorName(String query) {
    for (var parameter : query.split("&")) {
      if (parameter.startsWith("fieldSelector=")) {
        var selected = NAME_SELECTOR.matcher(parameter.substring("fieldSelector=".length()));
        return selected.find() ? selected.group(1) : "";
      }
    }
    return "";
  }

  @Override
  public String toString() {
    return verb + " " + (group.isEmpty() ? "" : group + "/") + resource + (namespace.isEmpty() ? "" : " in " + namespace)
        + (name.isEmpty() ? "" : " named " + name);
  }
}
