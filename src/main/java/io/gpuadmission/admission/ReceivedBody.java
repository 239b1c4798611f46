package io.gpuadmission.admission;

import io.vertx.core.buffer.Buffer;
import java.util.Arrays;

/**
 * A request body gathered into one array as its chunks arrive. With a Content-Length the array is
 * made once at that size and handed over as it is: a 3 MiB review costs 3 MiB of heap, not a
 * growing buffer plus a copy (the Deployment's heap is 96 MiB, and reviews arrive concurrently).
 * One request is read on one event loop, so nothing here is shared.
 */
final class ReceivedBody {
  private static final int FIRST_CHUNKED_CAPACITY = 16 * 1024;

  private final long limit;
  private byte[] bytes;
  private int size;
  private boolean refused;

  /** {@code declared} is the Content-Length, or -1; one over the limit was refused before. */
  ReceivedBody(long declared, long limit) {
    this.limit = limit;
    this.bytes = new byte[declared >= 0 && declared <= limit ? (int) declared : FIRST_CHUNKED_CAPACITY];
  }

  /** Adds a chunk; false, keeping nothing more, once the body passes the limit. */
  boolean append(Buffer chunk) {
    if (refused) {
      return false;
    }
    var needed = (long) size + chunk.length();
    if (needed > limit) {
      refused = true;
      bytes = null;
      return false;
    }
    if (needed > bytes.length) {
      bytes = Arrays.copyOf(bytes, (int) Math.min(limit, Math.max(needed, 2L * bytes.length)));
    }
    chunk.getBytes(0, chunk.length(), bytes, size);
    size = (int) needed;
    return true;
  }

  boolean refused() {
    return refused;
  }

  /** The body; the array itself when it is exactly full (always, with a truthful Content-Length). */
  byte[] bytes() {
    return size == bytes.length ? bytes : Arrays.copyOf(bytes, size);
  }
}
