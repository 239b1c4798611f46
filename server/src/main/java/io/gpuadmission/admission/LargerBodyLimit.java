package io.gpuadmission.admission;

/**
 * A body limit of its own for some paths, larger than kube-apiserver's 3 MiB: {@link BodySizeLimit}
 * leaves those paths to it. The extender's is one (kube-scheduler puts no cap on what it sends); it
 * names its paths here so that admission, which the extender builds on, never imports it back.
 */
public interface LargerBodyLimit {
  /** Whether this limit, not the 3 MiB one, holds {@code path}. */
  boolean holds(String path);
}
