package io.gpuadmission.extender;

/**
 * The node names kube-scheduler has sent before, so that decoding thousands of names per request
 * finds each one's String instead of building it again: the names are the cluster's nodes, the
 * same on every call. Reads are lock-free (an open-addressing table of immutable Strings); inserts
 * and growth take a lock, and only names never seen before get there. Holds at most {@link #LIMIT} names; past that,
 * new names are simply not kept.
 */
final class NodeNameTable {
  static final int LIMIT = 1 << 16;

  private volatile String[] slots = new String[1024];
  private int size;

  /** The name spelled by {@code chars[offset, offset + length)}, kept for next time. */
  String name(char[] chars, int offset, int length) {
    var hash = hash(chars, offset, length);
    var known = find(slots, hash, chars, offset, length);
    return known != null ? known : add(hash, chars, offset, length);
  }

  /** Names kept so far. */
  synchronized int size() {
    return size;
  }

  private static String find(String[] table, int hash, char[] chars, int offset, int length) {
    var mask = table.length - 1;
    for (int i = slot(hash, table); ; i = (i + 1) & mask) {
      var candidate = table[i];
      if (candidate == null) {
        return null;
      }
      if (candidate.hashCode() == hash && spells(candidate, chars, offset, length)) {
        return candidate;
      }
    }
  }

  private synchronized String add(int hash, char[] chars, int offset, int length) {
    var known = find(slots, hash, chars, offset, length);
    if (known != null) {
      return known;
    }
    var name = new String(chars, offset, length);
    if (size >= LIMIT) {
      return name;
    }
    if (size + 1 > slots.length / 2) {
      // A new table, filled before it is published: readers see the old one or the whole new one.
      var grown = new String[slots.length * 2];
      for (var kept : slots) {
        if (kept != null) {
          put(grown, kept);
        }
      }
      slots = grown;
    }
    // In place: a reader that misses a name being added here comes to this lock and finds it.
    // Strings are immutable, so a reader that sees the reference sees the whole String.
    put(slots, name);
    size++;
    return name;
  }

  private static void put(String[] table, String name) {
    var mask = table.length - 1;
    var i = slot(name.hashCode(), table);
    while (table[i] != null) {
      i = (i + 1) & mask;
    }
    table[i] = name;
  }

  /**
   * Names such as {@code gpu-node-00017} have neighbouring hashes, which would fill runs of
   * neighbouring slots; Fibonacci hashing spreads them.
   */
  private static int slot(int hash, String[] table) {
    return (hash * 0x9E3779B9) >>> (32 - Integer.numberOfTrailingZeros(table.length));
  }

  /** {@link String#hashCode} of the characters, without building the String. */
  private static int hash(char[] chars, int offset, int length) {
    var h = 0;
    for (int i = offset; i < offset + length; i++) {
      h = 31 * h + chars[i];
    }
    return h;
  }

  private static boolean spells(String name, char[] chars, int offset, int length) {
    if (name.length() != length) {
      return false;
    }
    for (int i = 0; i < length; i++) {
      if (name.charAt(i) != chars[offset + i]) {
        return false;
      }
    }
    return true;
  }
}
