package io.gpuadmission.gang;

/** A topology job, named as its members' labels name it, within its namespace. */
public record GangKey(String namespace, String job) implements Comparable<GangKey> {
  @Override
  public String toString() {
    return namespace + "/" + job;
  }

  /** {@code gang "ml/bert"}, as every message about the gang begins. */
  public String quoted() {
    return "gang \"" + this + "\"";
  }

  @Override
  public int compareTo(GangKey other) {
    return toString().compareTo(other.toString());
  }
}
