/**
 * The node agent: a program of its own (this module's {@code node-agent.jar}), run by a DaemonSet
 * on every GPU node. It asks the kubelet which devices each container got (the
 * PodResources API on a Unix socket), turns GPU device IDs into the indices the allocator uses
 * (the NVIDIA driver's own table in {@code /proc}, no NVML), and records them on each pod
 * ({@code gpu-admission.io/gpu-allocated}), which the service's GPU ledger then believes.
 */
package io.gpuadmission.node;
