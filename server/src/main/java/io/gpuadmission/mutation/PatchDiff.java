package io.gpuadmission.mutation;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The RFC 6902 patch from one JSON tree to another: exactly what zjsonpatch's {@code JsonDiff}
 * writes with {@code OMIT_VALUE_ON_REMOVE, OMIT_MOVE_OPERATION, OMIT_COPY_OPERATION} (add, remove
 * and replace only; arrays compared through their longest common subsequence, as it does), which
 * {@code PatchDiffTest} checks on every mutation fixture and on generated trees.
 *
 * <p>Why not zjsonpatch itself, on a path run for every review: it compares whole subtrees at every
 * level before descending into them, builds a pointer object per level, and formats every token of
 * every path through two regular expressions; that was a quarter of the bytes a topology review
 * allocated. Here objects are walked once, paths grow and shrink in one buffer, and a token is
 * escaped only when it holds {@code ~} or {@code /}.
 */
final class PatchDiff {
  private final ArrayNode patch = JsonNodeFactory.instance.arrayNode();
  private final StringBuilder path = new StringBuilder(96);

  private PatchDiff() {}

  static ArrayNode between(JsonNode source, JsonNode target) {
    var diff = new PatchDiff();
    diff.values(source, target);
    return diff.patch;
  }

  private void values(JsonNode source, JsonNode target) {
    // Equal objects yield no operation field by field, so they need no whole-tree comparison first.
    if (source.isObject() && target.isObject()) {
      objects(source, target);
    } else if (source.equals(target)) {
      return;
    } else if (source.isArray() && target.isArray()) {
      arrays(source, target);
    } else {
      operation("replace", target);
    }
  }

  private void objects(JsonNode source, JsonNode target) {
    for (Iterator<String> names = source.fieldNames(); names.hasNext(); ) {
      var name = names.next();
      var mark = push(name);
      var to = target.get(name);
      if (to == null) {
        operation("remove", null);
      } else {
        values(source.get(name), to);
      }
      path.setLength(mark);
    }
    for (Iterator<String> names = target.fieldNames(); names.hasNext(); ) {
      var name = names.next();
      if (!source.has(name)) {
        var mark = push(name);
        operation("add", target.get(name));
        path.setLength(mark);
      }
    }
  }

  /** zjsonpatch's array walk: keep the common subsequence, add and remove around it. */
  private void arrays(JsonNode source, JsonNode target) {
    var lcs = longestCommonSubsequence(source, target);
    int srcIdx = 0;
    int targetIdx = 0;
    int pos = 0;
    for (int lcsIdx = 0; lcsIdx < lcs.size(); ) {
      var common = lcs.get(lcsIdx);
      var src = source.get(srcIdx);
      var tgt = target.get(targetIdx);
      var mark = push(pos);
      if (common.equals(src) && common.equals(tgt)) {
        srcIdx++;
        targetIdx++;
        lcsIdx++;
        pos++;
      } else if (common.equals(src)) {
        operation("add", tgt);
        targetIdx++;
        pos++;
      } else if (common.equals(tgt)) {
        operation("remove", null);
        srcIdx++;
      } else {
        values(src, tgt);
        srcIdx++;
        targetIdx++;
        pos++;
      }
      path.setLength(mark);
    }
    for (; srcIdx < source.size() && targetIdx < target.size(); srcIdx++, targetIdx++, pos++) {
      var mark = push(pos);
      values(source.get(srcIdx), target.get(targetIdx));
      path.setLength(mark);
    }
    for (; targetIdx < target.size(); targetIdx++, pos++) {
      var mark = push(pos);
      operation("add", target.get(targetIdx));
      path.setLength(mark);
    }
    for (; srcIdx < source.size(); srcIdx++) {
      var mark = push(pos);
      operation("remove", null);
      path.setLength(mark);
    }
  }

  /** The same subsequence, ties broken the same way, as zjsonpatch's {@code ListUtils}. */
  private static List<JsonNode> longestCommonSubsequence(JsonNode a, JsonNode b) {
    int n = a.size();
    int m = b.size();
    var dp = new int[n + 1][m + 1];
    for (int i = 1; i <= n; i++) {
      for (int j = 1; j <= m; j++) {
        dp[i][j] = a.get(i - 1).equals(b.get(j - 1)) ? dp[i - 1][j - 1] + 1 : Math.max(dp[i - 1][j], dp[i][j - 1]);
      }
    }
    var lcs = new ArrayList<JsonNode>(dp[n][m]);
    for (int i = n, j = m; i > 0 && j > 0; ) {
      if (a.get(i - 1).equals(b.get(j - 1))) {
        lcs.add(a.get(i - 1));
        i--;
        j--;
      } else if (dp[i - 1][j] >= dp[i][j - 1]) {
        i--;
      } else {
        j--;
      }
    }
    return lcs.reversed();
  }

  private void operation(String op, JsonNode value) {
    var o = patch.addObject().put("op", op).put("path", path.toString());
    if (value != null) {
      o.set("value", value);
    }
  }

  /** Appends {@code /token} (RFC 6901 escaped) and returns the length to restore afterwards. */
  private int push(String token) {
    var mark = path.length();
    path.append('/');
    if (token.indexOf('~') < 0 && token.indexOf('/') < 0) {
      path.append(token);
      return mark;
    }
    for (int i = 0; i < token.length(); i++) {
      var c = token.charAt(i);
      switch (c) {
        case '~' -> path.append("~0");
        case '/' -> path.append("~1");
        default -> path.append(c);
      }
    }
    return mark;
  }

  private int push(int index) {
    var mark = path.length();
    path.append('/').append(index);
    return mark;
  }
}
