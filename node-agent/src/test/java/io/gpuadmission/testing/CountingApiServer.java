package io.gpuadmission.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An API server address that only accepts and counts connections, and a kubeconfig naming it: a
 * packaged program that must not reach the cluster shows any attempt in {@link #connections()}.
 */
public final class CountingApiServer implements AutoCloseable {
  private final ServerSocket socket;
  private final AtomicInteger connections = new AtomicInteger();
  private final Path kubeconfig;

  private CountingApiServer(ServerSocket socket, Path kubeconfig) {
    this.socket = socket;
    this.kubeconfig = kubeconfig;
  }

  /** Listens on a free loopback port and writes {@code directory/kubeconfig} for it. */
  public static CountingApiServer start(Path directory) throws IOException {
    var socket = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    var kubeconfig = directory.resolve("kubeconfig");
    Files.writeString(
        kubeconfig,
        """
        apiVersion: v1
        kind: Config
        clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", insecure-skip-tls-verify: true}}]
        users: [{name: u, user: {token: t}}]
        contexts: [{name: x, context: {cluster: c, user: u}}]
        current-context: x
        """
            .formatted(socket.getLocalPort()));
    var server = new CountingApiServer(socket, kubeconfig);
    var acceptor = new Thread(server::accept, "counting-api-server");
    acceptor.setDaemon(true);
    acceptor.start();
    return server;
  }

  private void accept() {
    while (!socket.isClosed()) {
      try (var connection = socket.accept()) {
        connections.incrementAndGet();
      } catch (IOException closed) {
        return;
      }
    }
  }

  /** The connections accepted so far. */
  public AtomicInteger connections() {
    return connections;
  }

  /** The kubeconfig that names this server. */
  public Path kubeconfig() {
    return kubeconfig;
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
