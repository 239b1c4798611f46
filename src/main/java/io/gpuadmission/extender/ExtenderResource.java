package io.gpuadmission.extender;

import io.gpuadmission.placement.BindRequest;
import io.gpuadmission.placement.GpuLedger;
import io.gpuadmission.placement.LedgerInspection;
import io.gpuadmission.placement.PodBinder;
import io.smallrye.common.annotation.Blocking;
import io.smallrye.common.annotation.NonBlocking;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.Map;
import java.util.function.Supplier;

/**
 * kube-scheduler extender over HTTP only, under {@code /extender/} and, for existing gpushare
 * configurations, {@code /gpushare-scheduler/}. Filter and prioritize read caches on the event
 * loop; bind calls the API server on a worker thread.
 */
@Path("/{prefix: extender|gpushare-scheduler}")
public class ExtenderResource {
  private final ExtenderService service;
  private final PodBinder binder;
  private final GpuLedger ledger;

  public ExtenderResource(ExtenderService service, PodBinder binder, GpuLedger ledger) {
    this.service = service;
    this.binder = binder;
    this.ledger = ledger;
  }

  @POST
  @Path("filter")
  @NonBlocking
  @Consumes(MediaType.WILDCARD)
  @Produces(MediaType.APPLICATION_JSON)
  public Response filter(byte[] body) {
    return answer(() -> service.filter(ExtenderCodec.args(body)));
  }

  @POST
  @Path("prioritize")
  @NonBlocking
  @Consumes(MediaType.WILDCARD)
  @Produces(MediaType.APPLICATION_JSON)
  public Response prioritize(byte[] body) {
    return answer(() -> service.prioritize(ExtenderCodec.args(body)));
  }

  @POST
  @Path("bind")
  @Blocking
  @Consumes(MediaType.WILDCARD)
  @Produces(MediaType.APPLICATION_JSON)
  public Response bind(byte[] body) {
    return answer(
        () -> {
          var args = ExtenderCodec.bindingArgs(body);
          var error = binder.bind(new BindRequest(args.podNamespace(), args.podName(), args.podUid(), args.node()));
          return new ExtenderWire.BindingResult(error);
        });
  }

  @GET
  @Path("inspect")
  @Produces(MediaType.APPLICATION_JSON)
  public Response inspect() {
    return answer(() -> LedgerInspection.of(ledger));
  }

  @GET
  @Path("inspect/{node}")
  @Produces(MediaType.APPLICATION_JSON)
  public Response inspectNode(@PathParam("node") String node) {
    return LedgerInspection.node(ledger, node)
        .map(n -> Response.ok(ExtenderCodec.write(n)).build())
        .orElseGet(() -> Response.status(404).entity(ExtenderCodec.write(Map.of("error", "no GPUs known on node " + node))).build());
  }

  private static Response answer(Supplier<Object> work) {
    try {
      return Response.ok(ExtenderCodec.write(work.get())).build();
    } catch (ExtenderCodec.MalformedRequest e) {
      return Response.status(400).type(MediaType.APPLICATION_JSON).entity(ExtenderCodec.write(Map.of("Error", e.getMessage()))).build();
    }
  }
}
