package io.gpuadmission.manifests;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The environment the kubelet gives a container, as kubernetes {@code pkg/kubelet/envvars} makes
 * it (v1.32): for each Service, unless the pod says {@code enableServiceLinks: false}, its
 * service-link variables; then the container's own {@code env}, which wins over a link of the same
 * name. Field references are filled in from the values a test gives, as the kubelet fills them
 * from the pod.
 */
final class PodEnvironment {
  private PodEnvironment() {}

  /**
   * The variables a Service with {@code clusterIp} gives every pod of its namespace: {@code
   * <NAME>_SERVICE_HOST}, {@code <NAME>_SERVICE_PORT} (its first port) and {@code
   * <NAME>_SERVICE_PORT_<PORT NAME>}, {@code <NAME>_PORT=tcp://ip:port} (its first port), and per
   * port {@code <NAME>_PORT_<port>_TCP} with {@code _PROTO}, {@code _PORT} and {@code _ADDR}.
   */
  static Map<String, String> serviceLinks(String serviceName, String clusterIp, List<ServicePort> ports) {
    var prefix = variableName(serviceName);
    var links = new LinkedHashMap<String, String>();
    links.put(prefix + "_SERVICE_HOST", clusterIp);
    links.put(prefix + "_SERVICE_PORT", Integer.toString(ports.getFirst().getPort()));
    for (var port : ports) {
      if (port.getName() != null && !port.getName().isEmpty()) {
        links.put(prefix + "_SERVICE_PORT_" + variableName(port.getName()), Integer.toString(port.getPort()));
      }
    }
    for (var port : ports) {
      var protocol = port.getProtocol() == null || port.getProtocol().isEmpty() ? "TCP" : port.getProtocol();
      var url = protocol.toLowerCase(Locale.ROOT) + "://" + clusterIp + ":" + port.getPort();
      if (port == ports.getFirst()) {
        links.put(prefix + "_PORT", url);
      }
      var portPrefix = prefix + "_PORT_" + port.getPort() + "_" + protocol.toUpperCase(Locale.ROOT);
      links.put(portPrefix, url);
      links.put(portPrefix + "_PROTO", protocol.toLowerCase(Locale.ROOT));
      links.put(portPrefix + "_PORT", Integer.toString(port.getPort()));
      links.put(portPrefix + "_ADDR", clusterIp);
    }
    return links;
  }

  static Map<String, String> serviceLinks(Service service, String clusterIp) {
    return serviceLinks(service.getMetadata().getName(), clusterIp, service.getSpec().getPorts());
  }

  /** {@code links}, then the container's own env over them, its field references taken from {@code fields}. */
  static Map<String, String> of(Map<String, String> links, Container container, Map<String, String> fields) {
    var env = new LinkedHashMap<>(links);
    for (EnvVar variable : container.getEnv()) {
      env.put(variable.getName(), value(variable, fields));
    }
    return env;
  }

  private static String value(EnvVar variable, Map<String, String> fields) {
    if (variable.getValueFrom() == null) {
      return variable.getValue() == null ? "" : variable.getValue();
    }
    var field = variable.getValueFrom().getFieldRef();
    if (field == null || !fields.containsKey(field.getFieldPath())) {
      throw new IllegalStateException("env " + variable.getName() + " takes its value from " + variable.getValueFrom()
          + ": give this test the value the kubelet would put there");
    }
    return fields.get(field.getFieldPath());
  }

  private static String variableName(String name) {
    return name.replace('-', '_').toUpperCase(Locale.ROOT);
  }
}
