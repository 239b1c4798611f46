package io.gpuadmission.tls;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.handler.ssl.OpenSsl;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.OpenSSLEngineOptions;
import org.junit.jupiter.api.Test;

/** The HTTPS listener is put on OpenSSL where it loads, and left on the JDK engine when told to. */
class OpenSslListenerTest {
  @Test
  void bundledOpenSslLoadsOnThisPlatform() {
    assertThat(OpenSsl.isAvailable()).as("netty-tcnative's BoringSSL: %s", OpenSsl.unavailabilityCause()).isTrue();
  }

  @Test
  void putsTheListenerOnOpenSsl() {
    var options = new HttpServerOptions();

    new OpenSslListener(new TestCertificateConfig()).customizeHttpsServer(options);

    assertThat(options.getSslEngineOptions()).isInstanceOf(OpenSSLEngineOptions.class);
  }

  @Test
  void leavesTheJdkEngineWhenOpenSslIsOff() {
    var options = new HttpServerOptions();
    var config = new TestCertificateConfig() {
      @Override
      public boolean openssl() {
        return false;
      }
    };

    new OpenSslListener(config).customizeHttpsServer(options);

    assertThat(options.getSslEngineOptions()).isNull();
  }
}
