package io.gpuadmission.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.binder.netty4.NettyEventExecutorMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.channel.DefaultEventLoopGroup;
import org.junit.jupiter.api.Test;

/** Two event loop groups bound as Quarkus binds Vert.x's: no gauge is registered twice, every loop is seen. */
class NettyMeterFilterTest {
  @Test
  void bindsBothGroupsWithoutAWorkersGaugeRegisteredTwice() {
    var loops = new DefaultEventLoopGroup(2);
    var acceptor = new DefaultEventLoopGroup(1);
    try {
      var unfiltered = new SimpleMeterRegistry();
      new NettyEventExecutorMetrics(loops).bindTo(unfiltered);
      new NettyEventExecutorMetrics(acceptor).bindTo(unfiltered);
      // What Quarkus shows without the filter: one gauge for two groups, with the first group's count.
      assertThat(unfiltered.find(NettyMeterFilter.WORKERS).gauges()).hasSize(1);
      assertThat(unfiltered.find(NettyMeterFilter.WORKERS).gauge().value()).isEqualTo(2);

      var registry = new SimpleMeterRegistry();
      registry.config().meterFilter(new NettyMeterFilter().withoutEventExecutorWorkers());
      new NettyEventExecutorMetrics(loops).bindTo(registry);
      new NettyEventExecutorMetrics(acceptor).bindTo(registry);

      assertThat(registry.find(NettyMeterFilter.WORKERS).meters()).isEmpty();
      assertThat(registry.find("netty.eventexecutor.tasks.pending").gauges()).hasSize(3);
    } finally {
      loops.shutdownGracefully();
      acceptor.shutdownGracefully();
    }
  }
}
