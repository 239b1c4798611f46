package io.gpuadmission.node;

import com.google.protobuf.InvalidProtocolBufferException;
import io.gpuadmission.node.grpc.GrpcClient;
import io.gpuadmission.node.grpc.GrpcException;
import io.gpuadmission.node.podresources.v1.AllocatableResourcesRequest;
import io.gpuadmission.node.podresources.v1.AllocatableResourcesResponse;
import io.gpuadmission.node.podresources.v1.ListPodResourcesRequest;
import io.gpuadmission.node.podresources.v1.ListPodResourcesResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The kubelet's PodResources API (v1) on its Unix socket. Each call connects anew (the agent's own
 * gRPC, {@code node/grpc}): a kubelet restart removes the socket and makes a new one at the same
 * path, and the next call simply finds it.
 */
public final class PodResourcesClient implements AutoCloseable {
  /** The kubelet answers up to 16 MiB (podresources.DefaultMaxMsgSize); gRPC's default is 4. */
  static final int MAX_MESSAGE = 16 << 20;
  private static final String SERVICE = "/v1.PodResourcesLister/";

  private final Path socket;
  private final Duration timeout;

  public PodResourcesClient(Path socket, Duration timeout) {
    this.socket = socket;
    this.timeout = timeout;
  }

  /** What every pod's containers were given. */
  public ListPodResourcesResponse list() throws GrpcException {
    return call("List", ListPodResourcesRequest.getDefaultInstance(), ListPodResourcesResponse.parser());
  }

  /** Every device the kubelet knows on this node (whether allocated or not). */
  public AllocatableResourcesResponse allocatable() throws GrpcException {
    return call("GetAllocatableResources", AllocatableResourcesRequest.getDefaultInstance(), AllocatableResourcesResponse.parser());
  }

  private <T> T call(String method, com.google.protobuf.MessageLite request, com.google.protobuf.Parser<T> answer) throws GrpcException {
    var bytes = GrpcClient.call(socket, SERVICE + method, request.toByteArray(), timeout, MAX_MESSAGE, false);
    try {
      return answer.parseFrom(bytes);
    } catch (InvalidProtocolBufferException e) {
      throw new GrpcException(GrpcException.INTERNAL, "the kubelet's " + method + " answer is no valid message: " + e.getMessage());
    }
  }

  public Path socket() {
    return socket;
  }

  /** Why a call failed, in a line: the status, or that the socket is not there. */
  public String problem(GrpcException e) {
    if (!Files.exists(socket)) {
      return "no socket: the kubelet is restarting, or its pod-resources directory is not mounted";
    }
    return e.codeName() + (e.description().isEmpty() ? "" : ": " + e.description().lines().findFirst().orElse(""));
  }

  @Override
  public void close() {
    // Nothing held between calls.
  }
}
