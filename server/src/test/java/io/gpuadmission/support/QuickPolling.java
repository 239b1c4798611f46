package io.gpuadmission.support;

import java.time.Duration;
import java.util.function.Function;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Awaitility by default waits 100 ms before it first looks at a condition and then 100 ms between
 * looks: every {@code await()} cost at least 100 ms even when its condition already held, and most
 * of the suite's conditions (an informer's event, a handler's answer) hold a few milliseconds after
 * the action. Here the first look is at once and the pauses grow from 5 ms to 100 ms, so a
 * condition is seen soon after it holds while one that takes seconds is looked at no more often
 * than before. An {@code await()} that sets its own poll delay or interval keeps it.
 *
 * <p>Registered for every test class (META-INF/services, JUnit's extension autodetection, which
 * quarkus-junit-config turns on). A {@code @QuarkusTest} class and what it calls run in the
 * application's class loader, with their own copy of Awaitility: the defaults are set on the copy
 * the test class sees, found through its class loader.
 */
public final class QuickPolling implements BeforeAllCallback {
  static final Duration FIRST_PAUSE = Duration.ofMillis(5);
  static final Duration LONGEST_PAUSE = Duration.ofMillis(100);

  @Override
  public void beforeAll(ExtensionContext context) throws ReflectiveOperationException {
    setDefaults(context.getRequiredTestClass().getClassLoader());
  }

  static void setDefaults(ClassLoader loader) throws ReflectiveOperationException {
    var awaitility = Class.forName("org.awaitility.Awaitility", true, loader);
    var pollInterval = Class.forName("org.awaitility.pollinterval.PollInterval", true, loader);
    var iterative = Class.forName("org.awaitility.pollinterval.IterativePollInterval", true, loader)
        .getMethod("iterative", Function.class, Duration.class)
        .invoke(null, (Function<Duration, Duration>) QuickPolling::next, FIRST_PAUSE);
    awaitility.getMethod("setDefaultPollInterval", pollInterval).invoke(null, iterative);
    awaitility.getMethod("setDefaultPollDelay", Duration.class).invoke(null, Duration.ZERO);
  }

  static Duration next(Duration previous) {
    var doubled = previous.multipliedBy(2);
    return doubled.compareTo(LONGEST_PAUSE) > 0 ? LONGEST_PAUSE : doubled;
  }
}
