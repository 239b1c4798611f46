package io.gpuadmission.mutation;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.zjsonpatch.DiffFlags;
import io.fabric8.zjsonpatch.JsonDiff;
import io.gpuadmission.admission.KubernetesJson;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link PatchDiff} writes the patch zjsonpatch's {@code JsonDiff} writes with the flags the
 * mutator used (MutationGoldenTest pins it on every mutation fixture): here on generated trees,
 * edited the ways a patch can tell, with keys that need escaping.
 */
class PatchDiffTest {
  private static final EnumSet<DiffFlags> ZJSONPATCH_FLAGS =
      EnumSet.of(DiffFlags.OMIT_VALUE_ON_REMOVE, DiffFlags.OMIT_MOVE_OPERATION, DiffFlags.OMIT_COPY_OPERATION);
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final List<String> KEYS = List.of("a", "spec", "nvidia.com/gpu", "x~y", "~1", "/", "limits", "");

  @Test
  void writesZjsonpatchsPatchForGeneratedEdits() {
    for (int seed = 0; seed < 3000; seed++) {
      var random = new Random(seed);
      var source = tree(random, 4);
      var target = edited(random, source.deepCopy(), 3);

      var patch = PatchDiff.between(source, target);

      assertThat(patch).as("seed %d: %s -> %s", seed, source, target).isEqualTo(JsonDiff.asJson(source, target, ZJSONPATCH_FLAGS));
      assertThat(patch.toString()).isEqualTo(JsonDiff.asJson(source, target, ZJSONPATCH_FLAGS).toString());
    }
  }

  /** Not checked by applying with zjsonpatch: its JsonPatch decodes {@code ~01} to {@code /}, not {@code ~1}. */
  @Test
  void escapesSlashAndTildeInKeysAsRfc6901Says() throws Exception {
    var mapper = KubernetesJson.mapper();
    var source = mapper.readTree("{\"limits\":{\"nvidia.com/gpu\":\"1\",\"a~b\":\"x\"}}");
    var target = mapper.readTree("{\"limits\":{\"aliyun.com/gpu\":\"1\",\"a~b\":\"y\",\"~1\":\"z\"}}");

    assertThat(PatchDiff.between(source, target).toString())
        .isEqualTo(
            "[{\"op\":\"remove\",\"path\":\"/limits/nvidia.com~1gpu\"},{\"op\":\"replace\",\"path\":\"/limits/a~0b\",\"value\":\"y\"},"
                + "{\"op\":\"add\",\"path\":\"/limits/aliyun.com~1gpu\",\"value\":\"1\"},"
                + "{\"op\":\"add\",\"path\":\"/limits/~01\",\"value\":\"z\"}]");
  }

  @Test
  void equalTreesGiveAnEmptyPatch() {
    var tree = tree(new Random(7), 5);

    assertThat(PatchDiff.between(tree, tree.deepCopy())).isEmpty();
  }

  private static JsonNode tree(Random random, int depth) {
    return switch (depth <= 0 ? random.nextInt(3) : random.nextInt(5)) {
      case 0 -> NODES.textNode(KEYS.get(random.nextInt(KEYS.size())));
      case 1 -> NODES.numberNode(random.nextInt(4));
      case 2 -> random.nextBoolean() ? NODES.booleanNode(random.nextBoolean()) : NODES.nullNode();
      case 3 -> {
        var array = NODES.arrayNode();
        for (int i = random.nextInt(5); i > 0; i--) {
          array.add(tree(random, depth - 1));
        }
        yield array;
      }
      default -> {
        var object = NODES.objectNode();
        for (int i = random.nextInt(5); i > 0; i--) {
          object.set(KEYS.get(random.nextInt(KEYS.size())), tree(random, depth - 1));
        }
        yield object;
      }
    };
  }

  /** Edits {@code node} in place (or returns a replacement): values changed, keys and elements added or removed. */
  private static JsonNode edited(Random random, JsonNode node, int edits) {
    if (node instanceof ObjectNode object && object.size() > 0 && random.nextInt(4) > 0) {
      for (int e = 0; e < edits; e++) {
        var names = object.properties().stream().map(p -> p.getKey()).toList();
        var name = names.isEmpty() ? KEYS.get(0) : names.get(random.nextInt(names.size()));
        switch (random.nextInt(4)) {
          case 0 -> object.remove(name);
          case 1 -> object.set(KEYS.get(random.nextInt(KEYS.size())), tree(random, 2));
          default -> {
            if (object.has(name)) {
              object.set(name, edited(random, object.get(name), 1));
            }
          }
        }
      }
      return object;
    }
    if (node instanceof ArrayNode array && random.nextInt(4) > 0) {
      for (int e = 0; e < edits; e++) {
        switch (random.nextInt(4)) {
          case 0 -> {
            if (array.size() > 0) {
              array.remove(random.nextInt(array.size()));
            }
          }
          case 1 -> array.insert(random.nextInt(array.size() + 1), tree(random, 2));
          default -> {
            if (array.size() > 0) {
              var i = random.nextInt(array.size());
              array.set(i, edited(random, array.get(i), 1));
            }
          }
        }
      }
      return array;
    }
    return random.nextInt(3) == 0 ? node : tree(random, 2);
  }
}
