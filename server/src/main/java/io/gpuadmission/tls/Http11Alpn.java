package io.gpuadmission.tls;

import io.quarkus.vertx.http.HttpServerOptionsCustomizer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpVersion;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;

/**
 * Names {@code http/1.1} in the TLS handshake. With {@code quarkus.http.http2=false} Quarkus turns
 * ALPN off altogether, so a client offering {@code h2, http/1.1} (kube-apiserver, kube-scheduler)
 * hears no protocol back and has to fall back by itself; with ALPN on and only HTTP/1.1 listed it
 * is told. HTTP/1.1 only is on purpose: see {@code quarkus.http.http2} in application.properties.
 */
@ApplicationScoped
public class Http11Alpn implements HttpServerOptionsCustomizer {

  @Override
  public void customizeHttpsServer(HttpServerOptions options) {
    if (options.isUseAlpn()) {
      return; // HTTP/2 configured on: Quarkus already lists h2 and http/1.1
    }
    options.setUseAlpn(true).setAlpnVersions(List.of(HttpVersion.HTTP_1_1));
  }
}
