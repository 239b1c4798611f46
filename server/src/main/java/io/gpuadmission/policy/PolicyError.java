package io.gpuadmission.policy;

/**
 * One thing wrong with a policy document, at a key path such as {@code
 * topology.allowedNamespaces[2]}; {@code line} is 1-based, 0 when the document has no such key.
 */
public record PolicyError(String path, int line, String message) {

  @Override
  public String toString() {
    var where = path.isEmpty() ? "" : path + ": ";
    return (line > 0 ? "line " + line + ": " : "") + where + message;
  }
}
