package io.gpuadmission.tls;

import java.nio.file.Path;
import java.time.Duration;

/** The defaults of {@link CertificateConfig}, for tests that build the parts by hand. */
class TestCertificateConfig implements CertificateConfig {
  @Override
  public Path certFile() {
    return Path.of("unused.crt");
  }

  @Override
  public Path keyFile() {
    return Path.of("unused.key");
  }

  @Override
  public Duration checkPeriod() {
    return Duration.ofSeconds(10);
  }

  @Override
  public boolean selfManaged() {
    return true;
  }

  @Override
  public boolean openssl() {
    return true;
  }

  @Override
  public String secretName() {
    return "gpu-admission-tls";
  }

  @Override
  public String serviceName() {
    return "gpu-admission";
  }

  @Override
  public String webhookConfigurationName() {
    return "gpu-admission";
  }

  @Override
  public Duration syncPeriod() {
    return Duration.ofMinutes(1);
  }

  @Override
  public Duration servingValidity() {
    return Duration.ofDays(365);
  }

  @Override
  public Duration caValidity() {
    return Duration.ofDays(1825);
  }

  @Override
  public Duration caOverlap() {
    return Duration.ofDays(90);
  }
}
