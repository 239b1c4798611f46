/**
 * What a native executable of the node agent needs that reflection, resources and class
 * initialisation registered in {@code META-INF/native-image/io.gpuadmission/node-agent/} cannot
 * say: a GraalVM {@link org.graalvm.nativeimage.hosted.Feature} the builder runs (never loaded by
 * the JVM build).
 */
package io.gpuadmission.node.nativeimage;
