package io.gpuadmission.node.api;

import io.gpuadmission.node.deadline.DeadlineTimer;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;

/**
 * An answer's body as the JDK's HTTP client streams it, held to a size and a time: it must arrive
 * within its deadline however slowly the server trickles it (closed at the deadline, which ends a
 * read waiting on it), and be at most {@code limit} bytes. Closing it drains what a parser left
 * unread (a chunked body's last chunk), so that the client keeps the connection for the next call;
 * a body closed before its end closes its connection.
 */
final class BoundedBody extends FilterInputStream {
  /** What is left unread is read to its end at close, up to this much, rather than lose the connection. */
  private static final int DRAIN = 16 * 1024;

  private final long limit;
  private final ScheduledFuture<?> deadline;
  private volatile boolean passed;
  private long read;

  BoundedBody(InputStream body, long limit, Duration within) {
    super(body);
    this.limit = limit;
    this.deadline = DeadlineTimer.after(within, this::pass);
  }

  private void pass() {
    passed = true;
    try {
      in.close();
    } catch (IOException e) {
      // closed either way
    }
  }

  @Override
  public int read() throws IOException {
    var one = new byte[1];
    return read(one, 0, 1) == -1 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] buffer, int offset, int length) throws IOException {
    int n;
    try {
      n = in.read(buffer, offset, length);
    } catch (IOException e) {
      if (passed) {
        throw new SocketTimeoutException("the answer's body did not arrive in time");
      }
      throw e;
    }
    if (n > 0 && (read += n) > limit) {
      throw new IOException("an answer over " + limit / (1024 * 1024) + " MiB");
    }
    return n;
  }

  @Override
  public void close() throws IOException {
    try {
      var rest = new byte[1024];
      for (long drained = 0; drained <= DRAIN && !passed; drained += rest.length) {
        if (in.read(rest) == -1) {
          break;
        }
      }
    } catch (IOException e) {
      // closed below either way
    } finally {
      deadline.cancel(false);
      in.close();
    }
  }
}
