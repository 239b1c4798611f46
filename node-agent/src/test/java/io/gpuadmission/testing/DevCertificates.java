package io.gpuadmission.testing;

import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import java.nio.file.Path;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;

/**
 * The repository's development certificates (certs/dev, made by certs/make-dev-certs.sh on the
 * first build): the node agent's tests serve its API server's TLS with them.
 */
public final class DevCertificates {
  /** certs/dev from this module's directory, where its tests run. */
  public static final Path DIR = Path.of("../certs/dev");

  private DevCertificates() {}

  /** TLS serving the dev certificate for 127.0.0.1 (tls.crt, signed by ca.crt), as an API server would. */
  public static SSLContext serving() {
    try {
      var context = SslContextBuilder.forServer(DIR.resolve("tls.crt").toFile(), DIR.resolve("tls.key").toFile())
          .sslProvider(SslProvider.JDK).build();
      return ((JdkSslContext) context).context();
    } catch (SSLException e) {
      throw new IllegalStateException(DIR + "/tls.crt or tls.key unreadable: certs/make-dev-certs.sh writes them", e);
    }
  }
}
