package io.gpuadmission.admission;

import io.quarkus.test.junit.QuarkusIntegrationTest;

/**
 * The HTTP contract against the packaged application: the jar with {@code -DskipITs=false}, the
 * native executable with {@code -Dnative} where GraalVM or Mandrel is installed.
 */
@QuarkusIntegrationTest
class MutateEndpointIT extends MutateEndpointTest {}
