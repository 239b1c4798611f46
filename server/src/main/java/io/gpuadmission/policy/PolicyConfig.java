package io.gpuadmission.policy;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.util.Optional;

/** Where the policy ConfigMap lives. */
@ConfigMapping(prefix = "gpu-admission.policy")
public interface PolicyConfig {
  /** Name of the ConfigMap that holds the policy. */
  @WithDefault("gpu-admission-policy")
  String configMapName();

  /** Key of the ConfigMap whose value is the policy document. */
  @WithDefault("policy.yaml")
  String key();

  /**
   * Namespace of the ConfigMap: the webhook's own. Defaults to the pod's namespace (POD_NAMESPACE
   * or the service account's), then to {@code gpu-admission}.
   */
  Optional<String> namespace();
}
