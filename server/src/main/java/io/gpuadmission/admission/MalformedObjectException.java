package io.gpuadmission.admission;

/**
 * A review's object whose fields have the wrong JSON types ({@code hostIPC: "yes"}, {@code
 * containers: [3]}): kube-apiserver decodes objects before it calls webhooks, so only another
 * client sends one, and the review is malformed (HTTP 400). The message names the object, the
 * field's path and what came there.
 */
public final class MalformedObjectException extends IllegalArgumentException {
  private static final long serialVersionUID = 1L;

  public MalformedObjectException(String message) {
    super(message);
  }
}
