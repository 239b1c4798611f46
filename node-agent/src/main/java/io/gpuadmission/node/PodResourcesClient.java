package io.gpuadmission.node;

import io.gpuadmission.node.podresources.v1.AllocatableResourcesRequest;
import io.gpuadmission.node.podresources.v1.AllocatableResourcesResponse;
import io.gpuadmission.node.podresources.v1.ListPodResourcesRequest;
import io.gpuadmission.node.podresources.v1.ListPodResourcesResponse;
import io.gpuadmission.node.podresources.v1.PodResourcesListerGrpc;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The kubelet's PodResources API (v1) on its Unix socket, through grpc-java's stub on one channel.
 * A kubelet restart removes the socket and makes a new one at the same path: a channel that failed
 * to connect is replaced by a fresh one at the next call, which tries once, at once. (A failed
 * channel would fail every call until its reconnect backoff, a second doubling up to two minutes,
 * let it try again: made for networks, not for a local socket asked every round.)
 */
public final class PodResourcesClient implements AutoCloseable {
  /** The kubelet answers up to 16 MiB (podresources.DefaultMaxMsgSize); gRPC's default is 4. */
  static final int MAX_MESSAGE = 16 << 20;

  private final Path socket;
  private final Duration timeout;
  private ManagedChannel channel;

  public PodResourcesClient(Path socket, Duration timeout) {
    this.socket = socket;
    this.timeout = timeout;
    this.channel = KubeletSockets.channel(socket, MAX_MESSAGE);
    // Connects now: the channel's first use sets up its resolver, balancer and transport (hundreds
    // of classes loaded), which would otherwise eat the first call's deadline on a busy node.
    channel.getState(true);
  }

  /** What every pod's containers were given. */
  public ListPodResourcesResponse list() {
    return stub().list(ListPodResourcesRequest.getDefaultInstance());
  }

  /** Every device the kubelet knows on this node (whether allocated or not). */
  public AllocatableResourcesResponse allocatable() {
    return stub().getAllocatableResources(AllocatableResourcesRequest.getDefaultInstance());
  }

  private synchronized PodResourcesListerGrpc.PodResourcesListerBlockingStub stub() {
    if (channel.getState(false) == ConnectivityState.TRANSIENT_FAILURE) {
      channel.shutdownNow();
      channel = KubeletSockets.channel(socket, MAX_MESSAGE);
    }
    return PodResourcesListerGrpc.newBlockingStub(channel).withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  public Path socket() {
    return socket;
  }

  /** Why a call failed, in a line: the status, or that the socket is not there. */
  public String problem(StatusRuntimeException e) {
    if (!Files.exists(socket)) {
      return "no socket: the kubelet is restarting, or its pod-resources directory is not mounted";
    }
    var status = e.getStatus();
    var description = status.getDescription() == null ? "" : status.getDescription().lines().findFirst().orElse("");
    return status.getCode() + (description.isEmpty() ? "" : ": " + description);
  }

  @Override
  public synchronized void close() {
    channel.shutdownNow();
  }
}
