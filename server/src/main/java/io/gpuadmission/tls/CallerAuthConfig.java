package io.gpuadmission.tls;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Who may call the extender ({@code /extender/*}, {@code /gpushare-scheduler/*}): a caller with a
 * client certificate signed by a trusted client CA and naming an allowed caller. The admission
 * endpoints, health and metrics take no client certificate.
 */
@ConfigMapping(prefix = "gpu-admission.extender.caller")
public interface CallerAuthConfig {
  /**
   * Refuse extender calls without such a certificate (401/403). False lets anyone who reaches the
   * port bind pods and start evictions: only for a cluster whose kube-scheduler cannot present a
   * client certificate, behind a network policy; a warning is logged at every start.
   */
  @WithDefault("true")
  boolean required();

  /**
   * PEM file of the CAs whose client certificates are trusted, re-read when it changes. Unset: the
   * CAs of the self-managed Secret ({@code ca.crt}), or without self-managed certificates the file
   * {@code ca.crt} beside {@code gpu-admission.tls.cert-file} (certs/dev/ca.crt, cert-manager's
   * mounted Secret).
   */
  Optional<Path> caFile();

  /**
   * Names a caller's certificate must carry (its subject CN or a DNS SAN). kube-scheduler's own
   * client certificate in kubeadm and most distributions says {@code system:kube-scheduler}, as the
   * one this service issues does.
   */
  @WithDefault("system:kube-scheduler")
  List<String> names();

  /**
   * Self-managed certificates only: the Secret ({@code tls.crt}, {@code tls.key}, {@code ca.crt})
   * with the client certificate this service issues for the second scheduler.
   */
  @WithDefault("gpu-scheduler-client")
  String secretName();

  /** Lifetime of that client certificate; it is reissued when a third of it is left. */
  @WithDefault("365d")
  Duration validity();
}
