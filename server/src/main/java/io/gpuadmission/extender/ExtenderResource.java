package io.gpuadmission.extender;

import io.gpuadmission.cluster.ClusterConnection;
import io.gpuadmission.gang.GangGate;
import io.gpuadmission.gang.GangInspection;
import io.gpuadmission.gang.GangPlanning;
import io.gpuadmission.gang.GangRegistry;
import io.gpuadmission.placement.BindRequest;
import io.gpuadmission.placement.ChoiceOverrides;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LeaderGate;
import io.gpuadmission.placement.LedgerInspection;
import io.gpuadmission.placement.PlacementDecider;
import io.gpuadmission.placement.PodBinder;
import io.gpuadmission.placement.WorkloadInspection;
import io.gpuadmission.policy.PolicyStore;
import io.gpuadmission.teamquota.QuotaInspection;
import io.gpuadmission.teamquota.QuotaService;
import io.smallrye.common.annotation.NonBlocking;
import io.smallrye.mutiny.infrastructure.Infrastructure;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

/**
 * kube-scheduler extender over HTTP only, under {@code /extender/} and, for existing gpushare
 * configurations, {@code /gpushare-scheduler/}. Filter and prioritize read caches on the event
 * loop; bind calls the API server on threads of its own ({@link BindThreads}).
 */
@Path("/{prefix: extender|gpushare-scheduler}")
public class ExtenderResource {
  /** kube-apiserver's cap: what a request of node names never comes near. */
  private static final int LARGE_BODY = 3 * 1024 * 1024;
  private final ExtenderService service;
  private final PodBinder binder;
  private final GpuLedger ledger;
  private final BindThreads binds;
  private final ClusterConnection cluster;
  private final ExtenderMetrics metrics;
  private final LeaderGate gate;
  private final GangRegistry gangs;
  private final GangGate gangGate;
  private final GangPlanning gangPlanning;
  private final ChoiceOverrides overrides;
  private final PlacementDecider decider;
  private final PolicyStore policies;
  private final QuotaService quotas;

  /**
   * gpushare's inspect ({@code nodes}), the gangs, the pods whose node gave other whole GPUs than
   * bind chose ({@code overridden}: the ledger counts {@code given}), and the workload FGD measures
   * against, and each team quota node with its min, max, used and borrowed.
   */
  record Inspection(
      List<LedgerInspection.Node> nodes,
      List<GangInspection.Gang> gangs,
      List<ChoiceOverrides.Override> overridden,
      WorkloadInspection fgdWorkload,
      QuotaInspection quotas) {}

  public ExtenderResource(
      ExtenderService service,
      PodBinder binder,
      GpuLedger ledger,
      BindThreads binds,
      ClusterConnection cluster,
      ExtenderMetrics metrics,
      LeaderGate gate,
      GangRegistry gangs,
      GangGate gangGate,
      GangPlanning gangPlanning,
      ChoiceOverrides overrides,
      PlacementDecider decider,
      PolicyStore policies,
      QuotaService quotas) {
    this.quotas = quotas;
    this.gangPlanning = gangPlanning;
    this.overrides = overrides;
    this.decider = decider;
    this.policies = policies;
    this.gangs = gangs;
    this.gangGate = gangGate;
    this.service = service;
    this.binder = binder;
    this.ledger = ledger;
    this.binds = binds;
    this.cluster = cluster;
    this.metrics = metrics;
    this.gate = gate;
  }

  @POST
  @Path("filter")
  @NonBlocking
  @Consumes(MediaType.WILDCARD)
  @Produces(MediaType.APPLICATION_JSON)
  public CompletionStage<Response> filter(byte[] body) {
    return offTheLoopIfLarge(body, () -> answer("filter", () -> ExtenderCodec.filterAnswer(service.filter(ExtenderCodec.args(body)))));
  }

  @POST
  @Path("prioritize")
  @NonBlocking
  @Consumes(MediaType.WILDCARD)
  @Produces(MediaType.APPLICATION_JSON)
  public CompletionStage<Response> prioritize(byte[] body) {
    return offTheLoopIfLarge(body, () -> answer("prioritize", () -> ExtenderCodec.prioritizeAnswer(service.prioritize(ExtenderCodec.args(body)))));
  }

  /**
   * Answers on the event loop, as usual; a body over {@link #LARGE_BODY} (whole Nodes with
   * nodeCacheCapable: false: 66 MB for 5,000 nodes take seconds to read) on a worker thread
   * instead, so that the admission reviews and extender calls sharing that loop are not held.
   */
  private static CompletionStage<Response> offTheLoopIfLarge(byte[] body, Supplier<Response> work) {
    if (body == null || body.length <= LARGE_BODY) {
      return CompletableFuture.completedFuture(work.get());
    }
    return CompletableFuture.supplyAsync(work, Infrastructure.getDefaultWorkerPool());
  }

  /**
   * kube-scheduler's preempt verb ({@code ProcessPreemption}), called only when its own preemption
   * found candidates: rare, so on a worker thread rather than the event loop.
   */
  @POST
  @Path("preempt")
  @Consumes(MediaType.WILDCARD)
  @Produces(MediaType.APPLICATION_JSON)
  public Response preempt(byte[] body) {
    return answer("preempt", () -> service.preempt(ExtenderCodec.preemptionArgs(body)));
  }

  @POST
  @Path("bind")
  @NonBlocking
  @Consumes(MediaType.WILDCARD)
  @Produces(MediaType.APPLICATION_JSON)
  public CompletionStage<Response> bind(byte[] body) {
    // Binds wait on the API server: on their own threads, so that a slow or absent API server
    // cannot take the worker pool that health checks and admission reviews need.
    return CompletableFuture.supplyAsync(() -> bindNow(body), binds.executor());
  }

  private Response bindNow(byte[] body) {
    ExtenderWire.BindingArgs args;
    try {
      args = ExtenderCodec.bindingArgs(body);
    } catch (ExtenderCodec.MalformedRequest e) {
      metrics.record("bind", "malformed");
      return badRequest(e.getMessage());
    }
    if (!cluster.available()) {
      metrics.record("bind", "error");
      return bound("gpu-admission has no Kubernetes API server to bind with (no kubeconfig, not in a pod)");
    }
    var bindRequest = new BindRequest(args.podNamespace(), args.podName(), args.podUid(), args.node());
    var outcome = binder.bindIfLeading(bindRequest);
    if (outcome.isEmpty()) {
      // Only the Lease holder binds, and the leader-only Service sends new connections to it (see
      // cluster.LeaderPodLabel). This connection may have been opened while this replica led:
      // close it after the answer, so that kube-scheduler's retry opens one to the leader.
      metrics.record("bind", "not_leader");
      return Response.fromResponse(bound(binder.notLeader())).header("Connection", "close").build();
    }
    var error = outcome.get();
    metrics.record("bind", error.isEmpty() ? "ok" : "error");
    return bound(error);
  }

  private static Response bound(String error) {
    return Response.ok(ExtenderCodec.write(new ExtenderWire.BindingResult(error))).build();
  }

  @GET
  @Path("inspect")
  @Produces(MediaType.APPLICATION_JSON)
  public Response inspect() {
    var window = policies.current().allocator().fgdWorkload().learnedWindowMinutes();
    return answer(
        "inspect",
        () ->
            ExtenderCodec.write(
                new Inspection(
                    LedgerInspection.of(ledger).nodes(),
                    GangInspection.of(gangs, gangGate, gangPlanning),
                    overrides.list(),
                    WorkloadInspection.of(decider.workload(), window),
                    quotas.inspection())));
  }

  @GET
  @Path("inspect/{node}")
  @Produces(MediaType.APPLICATION_JSON)
  public Response inspectNode(@PathParam("node") String node) {
    return LedgerInspection.node(ledger, node)
        .map(n -> Response.ok(ExtenderCodec.write(n)).build())
        .orElseGet(() -> Response.status(404).entity(ExtenderCodec.write(Map.of("error", "no GPUs known on node " + node))).build());
  }

  private Response answer(String verb, Supplier<byte[]> work) {
    try {
      var result = work.get();
      metrics.record(verb, "ok");
      return Response.ok(result).build();
    } catch (ExtenderCodec.MalformedRequest e) {
      metrics.record(verb, "malformed");
      return badRequest(e.getMessage());
    } catch (ArithmeticException | NullPointerException | IllegalArgumentException e) {
      // The pod's own fields (a quantity that is no number, a null in a list): kube-scheduler
      // could not have sent it from a valid pod. Say what, never a 500 page.
      metrics.record(verb, "malformed");
      return badRequest("cannot read the pod in the request: " + e.getClass().getSimpleName()
          + (e.getMessage() == null ? "" : ": " + e.getMessage()));
    }
  }

  private static Response badRequest(String message) {
    return Response.status(400).type(MediaType.APPLICATION_JSON).entity(ExtenderCodec.write(Map.of("Error", message))).build();
  }
}
