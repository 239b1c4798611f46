package io.gpuadmission.cli;

import io.gpuadmission.policy.GpuPolicy;
import io.gpuadmission.policy.PolicyConfig;
import io.gpuadmission.policy.PolicyParser;
import picocli.CommandLine.Option;

/** {@code --policy}: the policy the webhook would have in force. */
final class PolicyOption {
  @Option(
      names = "--policy",
      paramLabel = "FILE",
      description = "A policy document, or the policy ConfigMap's manifest (default: the built-in policy).")
  String file;

  /** The policy in force: the file's, else the built-in default; bad input when the file's is not valid. */
  GpuPolicy load(PolicyConfig config) {
    return file == null ? PolicyParser.builtInDefault() : PolicyFile.read(file, config.key(), config.configMapName()).policy(config.key());
  }
}
