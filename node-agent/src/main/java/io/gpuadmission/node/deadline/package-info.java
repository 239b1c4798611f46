/** The node agent's timer thread for its API client's deadlines (an answer's body, a watch the server should have ended). */
package io.gpuadmission.node.deadline;
