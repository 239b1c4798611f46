/** The node agent's timer thread, shared by its gRPC and its API client. */
package io.gpuadmission.node.deadline;
