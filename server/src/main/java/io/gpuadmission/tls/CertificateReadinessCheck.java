package io.gpuadmission.tls;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/** Self-managed certificates: not ready while the listener still serves the throwaway one. */
@Readiness
@ApplicationScoped
public class CertificateReadinessCheck implements HealthCheck {
  private final SelfManagedCertificates certificates;
  private final CertificateConfig config;

  public CertificateReadinessCheck(SelfManagedCertificates certificates, CertificateConfig config) {
    this.certificates = certificates;
    this.config = config;
  }

  @Override
  public HealthCheckResponse call() {
    var response = HealthCheckResponse.named("certificate").status(certificates.ready());
    return (config.selfManaged()
            ? response.withData("detail", certificates.status())
            : response.withData("detail", "from files"))
        .build();
  }
}
