package io.gpuadmission.tls;

import java.net.Socket;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.concurrent.atomic.AtomicLong;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedKeyManager;

/**
 * The HTTPS listener's key manager: every handshake asks it for the key and certificate, so a new
 * pair is served from the next handshake on, and nothing on the server is rebuilt (Vert.x 4.5's
 * {@code updateSSLOptions} closes connections that arrive while it rebuilds the SSL context). Each
 * pair gets its own alias, and the previous pair stays reachable by its alias, so a handshake that
 * chose its alias just before a switch still gets a key and chain that belong together.
 */
final class DynamicKeyManager extends X509ExtendedKeyManager {
  private record Served(String alias, PrivateKey key, X509Certificate[] chain) {}

  private final AtomicLong generation = new AtomicLong();
  private volatile Served current;
  private volatile Served previous;

  /** Serves {@code key} with {@code chain} (leaf first) from the next handshake on. */
  synchronized void serve(PrivateKey key, X509Certificate[] chain) {
    previous = current;
    current = new Served("gpu-admission-" + generation.incrementAndGet(), key, chain.clone());
  }

  @Override
  public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
    return chooseServerAlias(keyType, issuers, (Socket) null);
  }

  @Override
  public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
    var served = current;
    return served != null && fits(keyType, served.key()) ? served.alias() : null;
  }

  @Override
  public String[] getServerAliases(String keyType, Principal[] issuers) {
    var alias = chooseServerAlias(keyType, issuers, (Socket) null);
    return alias == null ? null : new String[] {alias};
  }

  @Override
  public X509Certificate[] getCertificateChain(String alias) {
    var served = find(alias);
    return served == null ? null : served.chain().clone();
  }

  @Override
  public PrivateKey getPrivateKey(String alias) {
    var served = find(alias);
    return served == null ? null : served.key();
  }

  /** The server never authenticates as a client. */
  @Override
  public String[] getClientAliases(String keyType, Principal[] issuers) {
    return null;
  }

  @Override
  public String chooseClientAlias(String[] keyType, Principal[] issuers, Socket socket) {
    return null;
  }

  @Override
  public String chooseEngineClientAlias(String[] keyType, Principal[] issuers, SSLEngine engine) {
    return null;
  }

  private Served find(String alias) {
    for (var served : new Served[] {current, previous}) {
      if (served != null && served.alias().equals(alias)) {
        return served;
      }
    }
    return null;
  }

  /**
   * JSSE asks by key algorithm ({@code EC}, {@code RSA}), in TLS 1.2 also as {@code EC_EC}, {@code
   * EC_RSA}.
   */
  private static boolean fits(String keyType, PrivateKey key) {
    var algorithm = key.getAlgorithm();
    return keyType.equals(algorithm) || keyType.startsWith(algorithm + "_");
  }
}
