package io.gpuadmission.cli;

import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Option;

/** {@code -f}, {@code -R} and {@code -n}, as {@code kubectl apply} reads them. */
final class ManifestOptions {
  @Option(
      names = {"-f", "--filename"},
      paramLabel = "FILE|DIR|-",
      description = "Manifests: a file, a directory of .yaml, .yml and .json files, or - for stdin. Repeatable.")
  List<String> files = new ArrayList<>();

  @Option(names = {"-R", "--recursive"}, description = "Read the directories given with -f and their subdirectories.")
  boolean recursive;

  @Option(
      names = {"-n", "--namespace"},
      paramLabel = "NAMESPACE",
      defaultValue = "default",
      description = "Namespace of objects that name none (default: ${DEFAULT-VALUE}).")
  String namespace;
}
