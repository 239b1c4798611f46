package io.gpuadmission.node.api;

import java.io.IOException;
import java.io.InputStream;

/**
 * A body sent with {@code Transfer-Encoding: chunked} (RFC 9112 §7.1), decoded: each chunk's size
 * line (hexadecimal, extensions ignored), its bytes and CRLF, up to the last chunk of size 0 and
 * the trailer section, which is read and dropped. A watch is one long chunked body, an event per
 * chunk or several, so {@link #read(byte[], int, int)} returns what one chunk has rather than
 * waiting to fill the buffer.
 */
final class ChunkedBody extends InputStream {
  /** A chunk size or trailer line longer than this is not an API server's. */
  private static final int MAX_LINE = 4 * 1024;

  private final InputStream in;
  /** Bytes left in the current chunk; 0 between chunks. */
  private long left;
  private boolean started;
  private boolean ended;

  ChunkedBody(InputStream in) {
    this.in = in;
  }

  @Override
  public int read() throws IOException {
    var one = new byte[1];
    return read(one, 0, 1) == -1 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] buffer, int offset, int length) throws IOException {
    if (length == 0) {
      return 0;
    }
    if (left == 0 && !nextChunk()) {
      return -1;
    }
    var n = in.read(buffer, offset, (int) Math.min(length, left));
    if (n == -1) {
      throw new IOException("the connection ended inside a chunk");
    }
    left -= n;
    return n;
  }

  @Override
  public int available() throws IOException {
    return (int) Math.min(in.available(), left);
  }

  @Override
  public void close() throws IOException {
    in.close();
  }

  /** Reads up to the next chunk's data; false at the last chunk (its trailers read). */
  private boolean nextChunk() throws IOException {
    if (ended) {
      return false;
    }
    if (started && !line().isEmpty()) {
      throw new IOException("malformed chunked body: a chunk's data is not followed by CRLF");
    }
    started = true;
    var sizeLine = line();
    var semicolon = sizeLine.indexOf(';');
    var hex = (semicolon == -1 ? sizeLine : sizeLine.substring(0, semicolon)).strip();
    long size;
    // At most 15 hex digits: no chunk size can overflow a long.
    if (hex.isEmpty() || hex.length() > 15 || !hex.chars().allMatch(c -> Character.digit(c, 16) != -1)) {
      throw new IOException("malformed chunked body: bad chunk size line");
    }
    size = Long.parseLong(hex, 16);
    if (size == 0) {
      while (!line().isEmpty()) {
        // trailer fields: none the agent reads
      }
      ended = true;
      return false;
    }
    left = size;
    return true;
  }

  private String line() throws IOException {
    var text = new StringBuilder();
    for (int b = in.read(); b != '\n'; b = in.read()) {
      if (b == -1) {
        throw new IOException("the connection ended inside a chunked body");
      }
      if (text.length() >= MAX_LINE) {
        throw new IOException("malformed chunked body: a line over " + MAX_LINE + " bytes");
      }
      text.append((char) b);
    }
    var n = text.length();
    return n > 0 && text.charAt(n - 1) == '\r' ? text.substring(0, n - 1) : text.toString();
  }
}
