package io.gpuadmission.policy;

import java.util.regex.Pattern;

/** Kubernetes name syntax, as the API server validates it. */
public final class KubernetesNames {
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final Pattern DNS_SUBDOMAIN =
      Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  private static final Pattern NAME_PART = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");

  private KubernetesNames() {}

  /** A namespace name: a DNS label of 63 characters or less. */
  public static boolean isNamespace(String name) {
    return name.length() <= 63 && DNS_LABEL.matcher(name).matches();
  }

  /** Object names such as a scheduler's: a DNS subdomain of 253 characters or less. */
  public static boolean isSubdomain(String name) {
    return name.length() <= 253 && DNS_SUBDOMAIN.matcher(name).matches();
  }

  /** Label, annotation and resource names: an optional DNS-subdomain prefix, a slash, a name. */
  public static boolean isQualifiedName(String key) {
    var slash = key.indexOf('/');
    var name = slash < 0 ? key : key.substring(slash + 1);
    if (slash >= 0) {
      var prefix = key.substring(0, slash);
      if (prefix.isEmpty() || prefix.length() > 253 || !DNS_SUBDOMAIN.matcher(prefix).matches()) {
        return false;
      }
    }
    return !name.isEmpty() && name.length() <= 63 && NAME_PART.matcher(name).matches();
  }

  /** A label value: empty, or 63 characters or less of letters, digits, '-', '_', '.'. */
  public static boolean isLabelValue(String value) {
    return value.length() <= 63 && (value.isEmpty() || NAME_PART.matcher(value).matches());
  }
}
