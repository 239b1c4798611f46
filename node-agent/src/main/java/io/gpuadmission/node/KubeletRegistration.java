package io.gpuadmission.node;

import io.gpuadmission.node.deviceplugin.v1beta1.RegisterRequest;
import io.gpuadmission.node.deviceplugin.v1beta1.RegistrationGrpc;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One registration with the kubelet's {@code kubelet.sock}, as NVIDIA's device plugin makes it: a
 * fresh channel, a short dial tried again while the kubelet is not listening yet, then Register.
 *
 * <p>The order matters after a kubelet restart. The starting kubelet empties its device-plugins
 * directory and only then listens on its new socket, and it answers Register only once it has
 * dialled the plugin's socket back (for up to 10 s). A plugin socket made before the kubelet
 * listens may thus be deleted under the plugin, and a Register sent then waits out the kubelet's
 * 10 s dial. So the plugin's socket is made only once the kubelet's accepts a connection
 * ({@code connected}), and the dial never waits longer than {@link #DIAL}: a kubelet that is not
 * there yet is met again when its new socket appears.
 */
final class KubeletRegistration {
  /** How long the kubelet's socket may take to accept, tried again every {@link #DIAL_RETRY}. */
  static final Duration DIAL = Duration.ofSeconds(1);
  static final Duration DIAL_RETRY = Duration.ofMillis(50);
  /** Register's answer: the kubelet dials the plugin back with a 10 s timeout of its own. */
  static final Duration REGISTER = Duration.ofSeconds(10);

  /** What is done once the kubelet's socket accepts, before Register: serving the plugin's own socket. */
  @FunctionalInterface
  interface Connected {
    void run() throws IOException;
  }

  private KubeletRegistration() {}

  /** Registers {@code request} with the kubelet at {@code kubelet}, waiting {@code answer} for its answer; throws what failed, in a line. */
  static void register(Path kubelet, RegisterRequest request, Duration answer, Connected connected) throws IOException {
    var channel = KubeletSockets.channel(kubelet, 1 << 16);
    try {
      dial(channel, kubelet);
      connected.run();
      RegistrationGrpc.newBlockingStub(channel).withDeadlineAfter(answer.toMillis(), TimeUnit.MILLISECONDS).register(request);
    } catch (StatusRuntimeException e) {
      throw new IOException(e.getStatus().getCode() + (e.getStatus().getDescription() == null ? "" : ": " + e.getStatus().getDescription()), e);
    } finally {
      channel.shutdownNow();
    }
  }

  /** Waits until the channel is connected, trying again every {@link #DIAL_RETRY} after a refusal (not gRPC's backoff of a second and more). */
  private static void dial(ManagedChannel channel, Path kubelet) throws IOException {
    var deadline = System.nanoTime() + DIAL.toNanos();
    try {
      while (true) {
        var state = channel.getState(true);
        if (state == ConnectivityState.READY) {
          return;
        }
        if (System.nanoTime() > deadline) {
          throw new IOException("the kubelet does not accept connections on " + kubelet + " (" + state + " for " + DIAL.toMillis() + " ms)");
        }
        if (state == ConnectivityState.TRANSIENT_FAILURE) {
          Thread.sleep(DIAL_RETRY);
          channel.resetConnectBackoff();
          continue;
        }
        var changed = new CountDownLatch(1);
        channel.notifyWhenStateChanged(state, changed::countDown);
        changed.await(DIAL_RETRY.toMillis(), TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while dialling " + kubelet, e);
    }
  }
}
