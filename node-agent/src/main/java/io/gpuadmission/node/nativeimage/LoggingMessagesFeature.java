package io.gpuadmission.node.nativeimage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.ZipFile;
import org.graalvm.nativeimage.hosted.Feature;
import org.graalvm.nativeimage.hosted.RuntimeReflection;

/**
 * The libraries' jboss-logging message loggers and bundles in a native executable. jboss-logging
 * finds the implementation of an interface such as SmallRye Config's {@code ConfigLogging} by name
 * ({@code ConfigLogging_$logger}, {@code ..._$bundle}, generated when the library was built) and
 * makes it reflectively (its constructor, or its {@code INSTANCE} field); without registration the
 * first message of such a library fails with "implementation not found". Every such class on the
 * executable's class path is registered, so that a library upgrade that adds one needs nothing here.
 */
public final class LoggingMessagesFeature implements Feature {
  @Override
  public String getDescription() {
    return "gpu-admission node agent: the jboss-logging message loggers and bundles of the libraries";
  }

  @Override
  public void beforeAnalysis(BeforeAnalysisAccess access) {
    for (var name : generatedNames(access.getApplicationClassPath())) {
      var type = access.findClassByName(name);
      if (type != null) {
        RuntimeReflection.register(type);
        RuntimeReflection.register(type.getConstructors());
        RuntimeReflection.register(type.getFields());
      }
    }
  }

  /** The binary names of the class path's {@code *_$logger} and {@code *_$bundle} classes (locale variants included). */
  static List<String> generatedNames(List<Path> classPath) {
    var names = new ArrayList<String>();
    for (var entry : classPath) {
      try {
        if (Files.isDirectory(entry)) {
          try (var files = Files.walk(entry)) {
            files.map(f -> entry.relativize(f).toString()).filter(LoggingMessagesFeature::isGenerated).map(LoggingMessagesFeature::binaryName)
                .forEach(names::add);
          }
        } else if (Files.isRegularFile(entry)) {
          try (var jar = new ZipFile(entry.toFile())) {
            jar.stream().map(e -> e.getName()).filter(LoggingMessagesFeature::isGenerated).map(LoggingMessagesFeature::binaryName)
                .forEach(names::add);
          }
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + entry, e);
      }
    }
    return names;
  }

  private static boolean isGenerated(String path) {
    return path.endsWith(".class") && (path.contains("_$logger") || path.contains("_$bundle"));
  }

  private static String binaryName(String path) {
    return path.substring(0, path.length() - ".class".length()).replace('/', '.').replace('\\', '.');
  }
}
