package io.gpuadmission.bench;

import io.gpuadmission.node.grpc.GrpcServer;
import java.lang.management.ManagementFactory;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Map;

/**
 * What connections that never start HTTP/2 cost the agent's gRPC server: the live threads (each
 * ~100 KiB of stack and more) with {@link GrpcServer.Limits#DEFAULT}, beside a server without
 * limits (no cap, no deadlines: what the server was before them) in the same JVM, each from the
 * thread count before its connections.
 *
 * <pre>java -cp ... io.gpuadmission.bench.GrpcConnectionCost [connections=500]</pre>
 */
public final class GrpcConnectionCost {
  private GrpcConnectionCost() {}

  public static void main(String[] args) throws Exception {
    int connections = args.length > 0 ? Integer.parseInt(args[0]) : 500;
    var day = Duration.ofDays(1);
    measure("no limits (baseline)", new GrpcServer.Limits(Integer.MAX_VALUE, day, day, day), connections);
    measure("Limits.DEFAULT", GrpcServer.Limits.DEFAULT, connections);
  }

  private static void measure(String label, GrpcServer.Limits limits, int count) throws Exception {
    var dir = Files.createTempDirectory("grpc-connection-cost");
    var socket = dir.resolve("plugin.sock");
    var threads = ManagementFactory.getThreadMXBean();
    try (var server = GrpcServer.start(socket, "bench", limits, Map.of(), Map.of())) {
      Thread.sleep(500);
      int before = threads.getThreadCount();
      var open = new ArrayList<SocketChannel>();
      for (int i = 0; i < count; i++) {
        var channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        channel.connect(UnixDomainSocketAddress.of(socket));
        open.add(channel);
      }
      Thread.sleep(2000);
      int connected = threads.getThreadCount() - before;
      // Past the preface deadline (10 s) of the defaults.
      Thread.sleep(limits.prefaceTimeout().compareTo(Duration.ofSeconds(12)) < 0 ? 12_000 : 10_000);
      int later = threads.getThreadCount() - before;
      System.out.printf("%-22s %d silent connections: +%d threads after 2 s, +%d after 14 s%n", label, count, connected, later);
      for (var channel : open) {
        channel.close();
      }
    }
  }
}
