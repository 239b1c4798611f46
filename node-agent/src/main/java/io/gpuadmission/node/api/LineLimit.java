package io.gpuadmission.node.api;

import java.io.FilterReader;
import java.io.IOException;
import java.io.Reader;

/** Text whose lines may not be longer than a limit: reading past it is an error rather than a line that grows without end. */
final class LineLimit extends FilterReader {
  private final int limit;
  /** Characters read since the last line feed. */
  private long length;

  LineLimit(Reader in, int limit) {
    super(in);
    this.limit = limit;
  }

  @Override
  public int read() throws IOException {
    var one = new char[1];
    return read(one, 0, 1) == -1 ? -1 : one[0];
  }

  @Override
  public int read(char[] buffer, int offset, int count) throws IOException {
    var n = in.read(buffer, offset, count);
    for (int i = offset; i < offset + n; i++) {
      length = buffer[i] == '\n' ? 0 : length + 1;
      if (length > limit) {
        throw new IOException("a line over " + limit + " characters");
      }
    }
    return n;
  }
}
