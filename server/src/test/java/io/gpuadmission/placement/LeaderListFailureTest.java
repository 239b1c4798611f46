package io.gpuadmission.placement;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.gpuadmission.cluster.PlacementLeadership;
import io.gpuadmission.policy.PolicyParser;
import java.time.Duration;
import java.util.HashMap;
import org.junit.jupiter.api.Test;

/**
 * A replica that wins the Lease while it cannot list the pods (RBAC not in force yet, an API
 * server answering errors) must not hold the Lease with its gate shut for good: it keeps trying
 * and opens once the list succeeds.
 */
class LeaderListFailureTest {
  private static final PlacementLeadership.Timing FAST = new PlacementLeadership.Timing(Duration.ofSeconds(4), Duration.ofSeconds(3), Duration.ofMillis(200));

  /** CRUD, except that listing the pods of all namespaces is forbidden while {@code refuse} is set. */
  private static final class RefusingPodLists extends Dispatcher {
    private final KubernetesMixedDispatcher crud;
    volatile boolean refuse = true;
    volatile int refused;

    RefusingPodLists(KubernetesMixedDispatcher crud) {
      this.crud = crud;
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
      var path = request.getPath() == null ? "" : request.getPath();
      if (refuse && "GET".equals(request.getMethod()) && path.startsWith("/api/v1/pods")) {
        refused++;
        var status = new StatusBuilder().withStatus("Failure").withCode(403).withReason("Forbidden")
            .withMessage("pods is forbidden: User \"system:serviceaccount:gpu-admission:gpu-admission\" cannot list resource \"pods\"").build();
        return new MockResponse().setResponseCode(403).setBody(new KubernetesSerialization().asJson(status));
      }
      return crud.dispatch(request);
    }
  }

  @Test
  void aLeaderThatCannotListThePodsKeepsTryingAndOpensOnceItCan() {
    var responses = new HashMap<io.fabric8.mockwebserver.ServerRequest, java.util.Queue<io.fabric8.mockwebserver.ServerResponse>>();
    var dispatcher = new RefusingPodLists(new KubernetesMixedDispatcher(responses));
    var server = new KubernetesMockServer(new Context(), new MockWebServer(), responses, dispatcher, false);
    server.init();
    var gate = new LeaderGate("replica-a");
    try (var client = server.createClient();
        var leadership = new PlacementLeadership(client, new GpuLedger(), gate, PolicyParser::builtInDefault)
            .start("gpu-admission", "gpu-admission-placement", FAST)) {
      await().atMost(Duration.ofSeconds(20)).until(() -> dispatcher.refused >= 3);
      // It holds the Lease (and renews it) but binds nothing: its ledger would be empty.
      assertThat(client.leases().inNamespace("gpu-admission").withName("gpu-admission-placement").get().getSpec().getHolderIdentity())
          .isEqualTo("replica-a");
      assertThat(gate.leading()).isFalse();

      dispatcher.refuse = false;
      await().atMost(Duration.ofSeconds(10)).until(gate::leading);
    } finally {
      server.destroy();
    }
  }
}
