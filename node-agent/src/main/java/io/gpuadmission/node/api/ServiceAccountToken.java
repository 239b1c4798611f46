package io.gpuadmission.node.api;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.Optional;

/**
 * The pod's service account token, read again whenever the file changes: the kubelet replaces a
 * bound token (about hourly, and before it expires) by swapping the projected volume's files, and
 * the API server refuses the old one once it expires.
 */
final class ServiceAccountToken {
  private final Path file;
  private FileTime readAt;
  private String token;

  ServiceAccountToken(Path file) {
    this.file = file;
  }

  /** The token as the file holds it now; empty when there is no file. */
  synchronized Optional<String> current() {
    try {
      var modified = Files.getLastModifiedTime(file);
      if (token == null || !modified.equals(readAt)) {
        token = Files.readString(file).strip();
        readAt = modified;
      }
      return Optional.of(token);
    } catch (IOException unreadable) {
      // Kept from the last read: a swap in progress shows no file for a moment.
      return Optional.ofNullable(token);
    }
  }

  /** Forgets the token read (the API server refused it), so that the next request reads the file again. */
  synchronized void refused() {
    readAt = null;
  }

  Path file() {
    return file;
  }
}
