package io.gpuadmission.support;

import java.security.GeneralSecurityException;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/** TLS for tests that look at what is served, whoever signed it (the dev and self-made certificates). */
public final class TrustAnything {
  private TrustAnything() {}

  public static X509TrustManager manager() {
    return new X509TrustManager() {
      @Override
      public void checkClientTrusted(X509Certificate[] chain, String authType) {}

      @Override
      public void checkServerTrusted(X509Certificate[] chain, String authType) {}

      @Override
      public X509Certificate[] getAcceptedIssuers() {
        return new X509Certificate[0];
      }
    };
  }

  public static SSLContext context() throws GeneralSecurityException {
    var context = SSLContext.getInstance("TLS");
    context.init(null, new TrustManager[] {manager()}, null);
    return context;
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
