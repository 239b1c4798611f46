package io.gpuadmission.node.api;

/**
 * A request the API server refused ({@code code}: its HTTP status, with the Status object's
 * message) or never answered ({@code code} 0: connection refused, reset, timed out).
 */
public final class ApiException extends RuntimeException {
  private final int code;

  public ApiException(int code, String message) {
    super(message);
    this.code = code;
  }

  public ApiException(String message, Throwable cause) {
    super(message, cause);
    this.code = 0;
  }

  /** The HTTP status, or 0 when there was no answer. */
  public int code() {
    return code;
  }
}
