package io.gpuadmission.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A Service as kube-proxy forwards it: each new TCP connection goes to the endpoint the Service
 * has at that moment and stays with it for its whole life (conntrack), whatever the Service's
 * endpoints become. An endpoint can be frozen, as a process stopped with SIGSTOP: its connections,
 * old and new, stay open (the kernel accepts and keeps them) but carry no byte either way.
 */
public final class Layer4Service implements AutoCloseable {
  /** A pod behind the Service: a name, and the local port its server listens on. */
  public record Endpoint(String name, int port) {}

  private final ServerSocket listener;
  private final ExecutorService threads = Executors.newCachedThreadPool(task -> {
    var thread = new Thread(task, "layer4-service");
    thread.setDaemon(true);
    return thread;
  });
  private final Set<String> frozen = ConcurrentHashMap.newKeySet();
  private final Map<String, AtomicInteger> connections = new ConcurrentHashMap<>();
  private final List<Socket> sockets = new CopyOnWriteArrayList<>();
  private volatile Endpoint endpoint;
  private volatile boolean closed;

  private Layer4Service(Endpoint first) throws IOException {
    this.endpoint = first;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    threads.execute(this::accept);
  }

  public static Layer4Service start(Endpoint first) throws IOException {
    return new Layer4Service(first);
  }

  public int port() {
    return listener.getLocalPort();
  }

  /** The Service's endpoints change (the leader label moved): new connections go to {@code next}. */
  public void routeNewConnectionsTo(Endpoint next) {
    endpoint = next;
  }

  public void freeze(Endpoint pod) {
    frozen.add(pod.name());
  }

  /** Connections opened to {@code pod} so far. */
  public int connectionsTo(Endpoint pod) {
    var count = connections.get(pod.name());
    return count == null ? 0 : count.get();
  }

  private void accept() {
    while (!closed) {
      try {
        var client = listener.accept();
        var to = endpoint;
        connections.computeIfAbsent(to.name(), name -> new AtomicInteger()).incrementAndGet();
        sockets.add(client);
        threads.execute(() -> forward(client, to));
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void forward(Socket client, Endpoint to) {
    try {
      var pod = new Socket(InetAddress.getLoopbackAddress(), to.port());
      sockets.add(pod);
      threads.execute(() -> pipe(client, pod, to));
      pipe(pod, client, to);
    } catch (IOException e) {
      close(client);
    }
  }

  /** Copies {@code from} to {@code to} while the endpoint is not frozen; a frozen one holds what it read. */
  private void pipe(Socket from, Socket to, Endpoint pod) {
    var buffer = new byte[16 * 1024];
    try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
      int read;
      while ((read = in.read(buffer)) >= 0) {
        while (frozen.contains(pod.name())) {
          if (closed) {
            return;
          }
          Thread.sleep(20);
        }
        out.write(buffer, 0, read);
        out.flush();
      }
    } catch (IOException e) {
      // One side closed: the other goes too, as a proxied connection does.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      close(from);
      close(to);
    }
  }

  private static void close(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // closing anyway
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    listener.close();
    sockets.forEach(Layer4Service::close);
    threads.shutdownNow();
  }
}
