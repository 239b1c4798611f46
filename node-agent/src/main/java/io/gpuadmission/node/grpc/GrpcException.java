package io.gpuadmission.node.grpc;

import java.util.List;

/** A gRPC call that ended with a status other than OK: its code and description. */
public final class GrpcException extends Exception {
  public static final int CANCELLED = 1;
  public static final int UNKNOWN = 2;
  public static final int INVALID_ARGUMENT = 3;
  public static final int DEADLINE_EXCEEDED = 4;
  public static final int RESOURCE_EXHAUSTED = 8;
  public static final int UNIMPLEMENTED = 12;
  public static final int INTERNAL = 13;
  public static final int UNAVAILABLE = 14;

  private static final List<String> NAMES = List.of("OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED",
      "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED");

  private final int code;
  private final String description;

  public GrpcException(int code, String description) {
    super(name(code) + (description == null || description.isEmpty() ? "" : ": " + description), null, false, false);
    this.code = code;
    this.description = description == null ? "" : description;
  }

  public int code() {
    return code;
  }

  /** The code's name as gRPC spells it (UNAVAILABLE, DEADLINE_EXCEEDED, ...). */
  public String codeName() {
    return name(code);
  }

  public String description() {
    return description;
  }

  static String name(int code) {
    return code >= 0 && code < NAMES.size() ? NAMES.get(code) : "CODE_" + code;
  }
}
