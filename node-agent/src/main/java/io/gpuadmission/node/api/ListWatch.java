package io.gpuadmission.node.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.node.deadline.DeadlineTimer;
import java.io.BufferedReader;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import org.jboss.logging.Logger;

/**
 * What an informer's reflector does, for one collection: list it (in pages), then watch from the
 * list's resourceVersion with bookmarks; each event moves the version on, so a watch the server
 * ends (its timeout) or a dropped connection resumes where it stopped and misses nothing. A 410
 * Gone (the version was compacted away) lists again at once, a second one before any event lists
 * again after a wait; anything else waits (doubling from {@code backoff} up to 30 s) and tries
 * again, and so does a watch that ends within a second without an event (the server answering
 * every watch at once must not be asked hundreds of times a second). A line that is not a watch
 * event is skipped by resuming from the last version read, after the same wait. A watch the server has not ended 30 s
 * after its own timeout (a connection cut without a reset) is given up and made again. One thread,
 * which ends on {@link #close}.
 */
public final class ListWatch implements AutoCloseable {
  private static final Logger LOG = Logger.getLogger(ListWatch.class);
  static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
  static final int PAGE = 500;
  /** A watch that ends sooner without an event is an error to wait on (client-go's reflector: 1 s). */
  static final Duration SHORT_WATCH = Duration.ofSeconds(1);

  /** Receives the collection: a whole list, then each change; called on the watch's thread only. */
  public interface Handler {
    /** The objects listed now replace whatever was known. */
    void listed(List<JsonNode> items);

    void added(JsonNode object);

    void modified(JsonNode object);

    void deleted(JsonNode object);
  }

  private final ApiServer api;
  private final String path;
  private final String selector;
  private final String what;
  private final Handler handler;
  private final Duration backoff;
  private final Thread thread;
  /** The server-side length of a watch: at least this, at most twice it; the client gives up {@code grace} later. */
  private Duration watchLength = Duration.ofMinutes(5);
  private Duration grace = Duration.ofSeconds(30);
  private volatile boolean closed;
  private volatile boolean synced;
  private volatile BufferedReader watching;
  private String version;
  private String problem;
  /** Why the last watch stopped reading: a line it skipped (said once, by {@link #failing} or by {@link #watch}). */
  private String skipped;
  /**
   * Whether the last problem was a request that failed (no answer, an error status), so that the
   * next watch the server accepts is the news that it answers again; not a watch it ended at once
   * or a line it skipped, which an accepted watch says nothing about.
   */
  private boolean unanswered;
  /** Whether the last list was made for a 410 and no event has come since: a second 410 then waits. */
  private boolean relisted;

  /**
   * Watches collection {@code path} (e.g. {@code /api/v1/pods}) with {@code selector} (query
   * parameters, encoded, or empty); {@code what} names it in the log.
   */
  public ListWatch(ApiServer api, String path, String selector, String what, Handler handler, Duration backoff) {
    this.api = api;
    this.path = path;
    this.selector = selector;
    this.what = what;
    this.handler = handler;
    this.backoff = backoff;
    this.thread = new Thread(this::run, "watch " + what);
    thread.setDaemon(true);
  }

  public ListWatch start() {
    thread.start();
    return this;
  }

  /** Whether the first list has been handed over. */
  public boolean synced() {
    return synced;
  }

  private void run() {
    var wait = backoff;
    while (!closed) {
      try {
        if (version == null) {
          list();
        }
        if (watch()) {
          wait = backoff;
          recovered();
          continue;
        }
        // A watch that ended without one event (at once, or on a line that is not an event, which
        // the server will send again): as client-go's reflector treats a very short watch, an error
        // to wait on, or a server that answers every watch so would be asked hundreds of times a second.
        failing(skipped != null ? skipped : "the watch ended at once without an event", wait);
      } catch (ApiException e) {
        if (closed) {
          return;
        }
        if (e.code() == 410 && !relisted) {
          LOG.debugf("%s: resourceVersion %s expired; listing again", what, version);
          version = null;
          relisted = true;
          continue;
        }
        if (e.code() == 410) {
          // Expired again with no event since the last list: list again, but not at once.
          version = null;
        }
        unanswered = true;
        failing(e.getMessage(), wait);
      } catch (RuntimeException e) {
        // The handler's fault, not the server's: said, then the same as an outage.
        LOG.errorf(e, "%s: handling a change failed", what);
      }
      if (!pause(wait)) {
        return;
      }
      wait = wait.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : wait.multipliedBy(2);
    }
  }

  private void list() {
    var items = new ArrayList<JsonNode>();
    String next = null;
    String listVersion;
    do {
      var page = api.get(path + "?" + query("limit=" + PAGE + (next == null ? "" : "&continue=" + ApiServer.encode(next))));
      page.path("items").forEach(items::add);
      listVersion = page.path("metadata").path("resourceVersion").asText(null);
      next = page.path("metadata").path("continue").asText("");
      next = next.isEmpty() ? null : next;
    } while (next != null && !closed);
    handler.listed(items);
    version = listVersion == null || listVersion.isEmpty() ? "0" : listVersion;
    synced = true;
    recovered();
  }

  /**
   * One watch from {@link #version}; false when it was very short: it brought no event (a bookmark
   * counts) and ended within {@link #SHORT_WATCH}.
   */
  private boolean watch() {
    var started = System.nanoTime();
    // As client-go's reflector: a server-side timeout between 5 and 10 minutes, so that watches of
    // many agents do not all end at once.
    var timeout = watchLength.toSeconds() + ThreadLocalRandom.current().nextLong(Math.max(1, watchLength.toSeconds()));
    ScheduledFuture<?> deadline = null;
    try (var lines = api.watch(path + "?" + query("watch=true&allowWatchBookmarks=true&timeoutSeconds=" + timeout
        + "&resourceVersion=" + ApiServer.encode(version)))) {
      watching = lines;
      if (unanswered) {
        // Its answer is the news, not the first event (which may come minutes later).
        recovered();
      }
      deadline = DeadlineTimer.after(Duration.ofSeconds(timeout).plus(grace), () -> {
        if (watching == lines) {
          LOG.warnf("%s: the watch outlived its %d s by %d s without the server ending it; watching again", what, timeout,
              grace.toSeconds());
          // Closing the watch's reader ends the read waiting on it (ApiServer.watch closes the connection first).
          closeQuietly(lines);
        }
      });
      var events = false;
      skipped = null;
      String line;
      while (!closed && (line = lines.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        if (!event(line)) {
          if (events) {
            // After events the watch counts as a good one: no failing() follows to say why it ended.
            LOG.warnf("%s: %s", what, skipped);
          }
          return events;
        }
        events = true;
        relisted = false;
        recovered();
      }
      return events || System.nanoTime() - started >= SHORT_WATCH.toNanos();
    } catch (IOException e) {
      if (!closed) {
        Thread.interrupted();
        throw new ApiException("watch of " + what + " broke off: " + e.getMessage(), e);
      }
    } finally {
      watching = null;
      if (deadline != null) {
        deadline.cancel(false);
      }
    }
    return false;
  }

  /** One line of the watch; false when the watch is to be made again from the last version. */
  private boolean event(String line) {
    JsonNode event;
    try {
      event = Json.read(line);
    } catch (IOException e) {
      return skip("skipped a line that is not a watch event (" + (e instanceof JsonProcessingException json ? json.getOriginalMessage()
          : e.getMessage()) + "); watching again from resourceVersion " + version);
    }
    var type = event.path("type").asText("");
    var object = event.path("object");
    if (type.equals("ERROR")) {
      var code = object.path("code").asInt(0);
      throw new ApiException(code, object.path("message").asText("watch error") + " (HTTP " + code + ")");
    }
    if (!object.isObject()) {
      return skip("skipped a watch event without an object (type " + type + "); watching again from resourceVersion " + version);
    }
    switch (type) {
      case "ADDED" -> handler.added(object);
      case "MODIFIED" -> handler.modified(object);
      case "DELETED" -> handler.deleted(object);
      case "BOOKMARK" -> { }
      default -> {
        return skip("skipped a watch event of type '" + type + "'; watching again from resourceVersion " + version);
      }
    }
    var next = object.path("metadata").path("resourceVersion").asText("");
    if (!next.isEmpty()) {
      version = next;
    }
    return true;
  }

  private boolean skip(String why) {
    skipped = why;
    return false;
  }

  private String query(String more) {
    return selector.isEmpty() ? more : selector + "&" + more;
  }

  private void failing(String message, Duration wait) {
    if (problem == null) {
      LOG.warnf("%s: %s; trying again, first in %d ms", what, message, wait.toMillis());
    } else {
      LOG.debugf("%s: %s", what, message);
    }
    problem = message;
  }

  private void recovered() {
    if (problem != null) {
      LOG.infof("%s: the API server answers again", what);
      problem = null;
    }
    unanswered = false;
  }

  /** Waits; whether to go on. An interrupt only wakes it: {@link #close} is what ends the thread. */
  private boolean pause(Duration wait) {
    try {
      Thread.sleep(wait);
    } catch (InterruptedException e) {
      // closed, or a watch given up just before it ended by itself
    }
    return !closed;
  }

  /** Shorter watches, for tests: the server ends each after {@code length} to twice that, the client {@code grace} later. */
  ListWatch watchLength(Duration length, Duration grace) {
    this.watchLength = length;
    this.grace = grace;
    return this;
  }

  /** The resourceVersion the next watch resumes from (null: the next step lists). */
  String version() {
    return version;
  }

  @Override
  public void close() {
    closed = true;
    var open = watching;
    if (open != null) {
      closeQuietly(open);
    }
    thread.interrupt();
  }

  private static void closeQuietly(BufferedReader lines) {
    try {
      lines.close();
    } catch (IOException e) {
      // closed either way
    }
  }
}
