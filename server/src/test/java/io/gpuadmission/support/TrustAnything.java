package io.gpuadmission.support;

import io.gpuadmission.node.api.TrustAnyCertificate;
import java.security.GeneralSecurityException;
import javax.net.ssl.SSLContext;
import javax.net.ssl.X509TrustManager;

/** TLS for tests that look at what is served, whoever signed it (the dev and self-made certificates). */
public final class TrustAnything {
  private TrustAnything() {}

  public static X509TrustManager manager() {
    return TrustAnyCertificate.manager();
  }

  public static SSLContext context() throws GeneralSecurityException {
    return TrustAnyCertificate.context();
  }

  /** {@link #context()} for lambdas and field initializers. */
  public static SSLContext contextUnchecked() {
    try {
      return context();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }
}
