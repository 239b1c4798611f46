package io.gpuadmission.extender;

import io.gpuadmission.placement.PlacementDecider.NodeScore;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Writes the filter (names form) and prioritize answers straight to bytes, byte for byte what the
 * Jackson mapper writes for {@link ExtenderWire.FilterResult} and a list of {@link
 * ExtenderWire.HostPriority}: one pass measures, one fills an array of the exact size. A
 * 5,000-node answer is about 90 KB (filter) or 190 KB (prioritize), and the mapper's growing
 * buffers and per-entry objects cost twice that and more. Strings that need escaping in JSON
 * (never a node name or one of our reasons in practice) and the Node-objects form go to the
 * mapper, so the two never differ.
 */
final class ExtenderAnswerWriter {
  private ExtenderAnswerWriter() {}

  /** The answer's bytes, or null when a string in it needs escaping. */
  static byte[] filter(ExtenderWire.FilterResult answer) {
    if (answer.nodes() != null) {
      return null;
    }
    return write(
        out -> {
          out.ascii("{\"Nodes\":null,\"NodeNames\":");
          if (answer.nodeNames() == null) {
            out.ascii("null");
          } else {
            out.ascii("[");
            for (int i = 0; i < answer.nodeNames().size(); i++) {
              out.ascii(i == 0 ? "" : ",");
              out.string(answer.nodeNames().get(i));
            }
            out.ascii("]");
          }
          out.ascii(",\"FailedNodes\":");
          map(out, answer.failedNodes());
          out.ascii(",\"FailedAndUnresolvableNodes\":");
          map(out, answer.failedAndUnresolvableNodes());
          out.ascii(",\"Error\":");
          out.string(answer.error());
          out.ascii("}");
        });
  }

  /** The HostPriorityList's bytes, or null when a node name needs escaping. */
  static byte[] priorities(List<NodeScore> scores) {
    return write(
        out -> {
          out.ascii("[");
          for (int i = 0; i < scores.size(); i++) {
            out.ascii(i == 0 ? "{\"Host\":" : ",{\"Host\":");
            out.string(scores.get(i).node());
            out.ascii(",\"Score\":");
            out.number(scores.get(i).score());
            out.ascii("}");
          }
          out.ascii("]");
        });
  }

  private static void map(Out out, Map<String, String> map) {
    if (map == null) {
      out.ascii("null");
      return;
    }
    out.ascii("{");
    var first = true;
    for (var entry : map.entrySet()) {
      if (entry.getKey() == null) {
        out.plain = false; // the mapper refuses a null key; let it say so
        return;
      }
      out.ascii(first ? "" : ",");
      out.string(entry.getKey());
      out.ascii(":");
      out.string(entry.getValue());
      first = false;
    }
    out.ascii("}");
  }

  private static byte[] write(Consumer<Out> answer) {
    var measure = new Out(null);
    answer.accept(measure);
    if (!measure.plain) {
      return null;
    }
    var fill = new Out(new byte[measure.at]);
    answer.accept(fill);
    return fill.bytes;
  }

  /** Counts bytes when it has no array, writes them when it has one. */
  private static final class Out {
    final byte[] bytes;
    int at;
    boolean plain = true;

    Out(byte[] bytes) {
      this.bytes = bytes;
    }

    /** Text known to need no escaping. */
    void ascii(String text) {
      if (bytes != null) {
        for (int i = 0; i < text.length(); i++) {
          bytes[at + i] = (byte) text.charAt(i);
        }
      }
      at += text.length();
    }

    void string(String s) {
      if (s == null) {
        ascii("null");
        return;
      }
      if (bytes == null) {
        for (int i = 0; i < s.length() && plain; i++) {
          plain = plain(s.charAt(i));
        }
        at += s.length() + 2;
        return;
      }
      bytes[at++] = '"';
      for (int i = 0; i < s.length(); i++) {
        bytes[at++] = (byte) s.charAt(i);
      }
      bytes[at++] = '"';
    }

    void number(long n) {
      var digits = n < 0 ? 2 : 1;
      for (var rest = Math.abs(n / 10); rest > 0; rest /= 10) {
        digits++;
      }
      if (bytes != null) {
        var rest = n;
        for (int i = at + digits - 1; i >= at + (n < 0 ? 1 : 0); i--) {
          bytes[i] = (byte) ('0' + Math.abs(rest % 10));
          rest /= 10;
        }
        if (n < 0) {
          bytes[at] = '-';
        }
      }
      at += digits;
    }

    /** Printable ASCII that JSON writes as itself. */
    private static boolean plain(char c) {
      return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    }
  }
}
