package io.gpuadmission.support;

import java.util.List;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.ClassSource;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * {@code @WithKubernetesTestServer} hands its mock API server to the application as JVM system
 * properties ({@code kubernetes.master} and the others below) and never clears them. The next
 * class's application would then find a "cluster" (cluster/ClusterConnection reads
 * {@code kubernetes.master}, as fabric8 does) at the address of a server stopped with the class
 * before: whether a class without a mock server has a cluster would depend on the classes run
 * before it. Cleared after every top-level test class (not a @Nested one, which runs inside its
 * class), so each class starts from the state it sets up.
 */
public final class ForgetMockServerAddress implements TestExecutionListener {
  /** What io.quarkus.test.kubernetes.client.AbstractKubernetesTestResource sets. */
  static final List<String> SET_BY_MOCK_SERVER = List.of(
      "kubernetes.master",
      "kubernetes.trust.certificates",
      "kubernetes.auth.tryKubeConfig",
      "kubernetes.auth.tryServiceAccount",
      "kubernetes.namespace",
      "kubernetes.http2.disable",
      "quarkus.tls.trust-all");

  @Override
  public void executionFinished(TestIdentifier test, TestExecutionResult result) {
    var topLevelClass = test.getSource()
        .filter(ClassSource.class::isInstance)
        .map(source -> ((ClassSource) source).getClassName())
        .filter(name -> !name.contains("$"));
    if (test.isContainer() && topLevelClass.isPresent()) {
      SET_BY_MOCK_SERVER.forEach(System::clearProperty);
    }
  }
}
