package io.gpuadmission.cli;

/** {@code -o}: aligned text for people, JSON for machines, YAML for the objects themselves. */
enum OutputFormat {
  text,
  json,
  yaml
}
