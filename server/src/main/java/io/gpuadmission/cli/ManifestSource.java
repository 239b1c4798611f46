package io.gpuadmission.cli;

/**
 * Where an object was read: the file ({@code -} for stdin), the document in it (1-based), the
 * line the document starts on, and its place in a List's {@code items} (-1 for none).
 */
record ManifestSource(String file, int document, int line, int item) {
  /** {@code deploy.yaml#2} or {@code cluster.yaml#1 items[4]}: short, for tables. */
  String shortName() {
    return file + "#" + document + (item >= 0 ? " items[" + item + "]" : "");
  }

  /** {@code deploy.yaml, document 2 (line 14)}: for messages. */
  String describe() {
    return file + ", document " + document + (line > 0 ? " (line " + line + ")" : "") + (item >= 0 ? ", items[" + item + "]" : "");
  }
}
