package io.gpuadmission.node.grpc;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * gRPC over HTTP/2 (grpc/grpc PROTOCOL-HTTP2.md): the length-prefixed message, the headers and
 * trailers of a call, and grpc-message's percent-encoding. Messages are never compressed: neither
 * side here announces an encoding, so a peer sends none.
 */
final class GrpcWire {
  static final String CONTENT_TYPE = "application/grpc";

  private GrpcWire() {}

  static byte[] frame(byte[] message) {
    return ByteBuffer.allocate(5 + message.length).put((byte) 0).putInt(message.length).put(message).array();
  }

  /** The one message of a body; a body that is not exactly one uncompressed message is refused. */
  static byte[] unframe(byte[] body, int maxMessage) throws GrpcException {
    if (body.length < 5) {
      throw new GrpcException(GrpcException.INTERNAL, "a message body of " + body.length + " bytes, shorter than gRPC's 5-byte prefix");
    }
    var buffer = ByteBuffer.wrap(body);
    if (buffer.get() != 0) {
      throw new GrpcException(GrpcException.UNIMPLEMENTED, "a compressed message; this endpoint announces no compression");
    }
    long length = buffer.getInt() & 0xffffffffL;
    if (length > maxMessage) {
      throw new GrpcException(GrpcException.RESOURCE_EXHAUSTED, "a message of " + length + " bytes, larger than the " + maxMessage + " allowed");
    }
    if (length != body.length - 5) {
      throw new GrpcException(GrpcException.INTERNAL, "a body of " + (body.length - 5) + " bytes after the prefix, which says " + length);
    }
    return java.util.Arrays.copyOfRange(body, 5, body.length);
  }

  static Map<String, String> responseHeaders() {
    var headers = new LinkedHashMap<String, String>();
    headers.put(":status", "200");
    headers.put("content-type", CONTENT_TYPE);
    return headers;
  }

  static Map<String, String> trailers(int code, String description) {
    var trailers = new LinkedHashMap<String, String>();
    trailers.put("grpc-status", Integer.toString(code));
    if (description != null && !description.isEmpty()) {
      trailers.put("grpc-message", percentEncoded(description));
    }
    return trailers;
  }

  /** grpc-message: UTF-8, with every byte outside printable ASCII and '%' itself as %XX. */
  static String percentEncoded(String text) {
    var out = new StringBuilder();
    for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
      if (b >= 0x20 && b <= 0x7e && b != '%') {
        out.append((char) b);
      } else {
        out.append('%').append(Character.toUpperCase(Character.forDigit((b >> 4) & 0xf, 16)))
            .append(Character.toUpperCase(Character.forDigit(b & 0xf, 16)));
      }
    }
    return out.toString();
  }

  static String percentDecoded(String text) {
    var out = new ByteArrayOutputStream();
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '%' && i + 2 < text.length() && Character.digit(text.charAt(i + 1), 16) >= 0 && Character.digit(text.charAt(i + 2), 16) >= 0) {
        out.write(Character.digit(text.charAt(i + 1), 16) * 16 + Character.digit(text.charAt(i + 2), 16));
        i += 2;
      } else {
        out.write(c);
      }
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  /** The status of a call from its trailers (or trailers-only headers). */
  static GrpcException status(Map<String, String> trailers) {
    var code = trailers.get("grpc-status");
    if (code == null) {
      return new GrpcException(GrpcException.UNKNOWN, "the answer ended without a grpc-status");
    }
    int value;
    try {
      value = Integer.parseInt(code.trim());
    } catch (NumberFormatException e) {
      return new GrpcException(GrpcException.UNKNOWN, "a grpc-status that is no number: " + code);
    }
    var message = trailers.get("grpc-message");
    return value == 0 ? null : new GrpcException(value, message == null ? "" : percentDecoded(message));
  }

  /** What an HTTP status other than 200 means to a gRPC client (PROTOCOL-HTTP2.md, http-grpc-status-mapping). */
  static GrpcException httpStatus(String status) {
    int code = switch (status) {
      case "400" -> GrpcException.INTERNAL;
      case "401" -> 16;
      case "403" -> 7;
      case "404" -> GrpcException.UNIMPLEMENTED;
      case "429", "502", "503", "504" -> GrpcException.UNAVAILABLE;
      default -> GrpcException.UNKNOWN;
    };
    return new GrpcException(code, "HTTP status " + status + " instead of a gRPC answer");
  }
}
