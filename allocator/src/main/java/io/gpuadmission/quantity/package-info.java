/**
 * Kubernetes resource quantities ({@code 2}, {@code 500m}, {@code 16Gi}, {@code 1e3}) read with
 * apimachinery's grammar, in plain Java: the webhook's pod checks and the node agent (which loads
 * no fabric8 class) share this one parser. A test keeps the package free of library types.
 */
package io.gpuadmission.quantity;
