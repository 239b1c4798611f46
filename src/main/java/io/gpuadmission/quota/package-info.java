/**
 * Team quotas the way ACK's {@code ElasticQuotaTree} states them: a tree of quota nodes with a
 * guaranteed {@code min} and a ceiling {@code max} per resource, namespaces on the leaves, usage
 * counted from bound and assumed pods, borrowing of idle min shared in proportion to min, and
 * reclaim of borrowed capacity for a leaf under its min. Plain Java: records in, decisions out,
 * no clock, no Kubernetes types (a test keeps it so); the caller parses the CRD and quantities.
 */
package io.gpuadmission.quota;
