package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.Quantity;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Makes the informers' reduced copies of nodes and GPU pods share what they hold alike, so that a
 * large cluster's stores cost what their few distinct values cost. Two things dominate a reduced
 * object's heap once its content is small: fabric8's model initialises every collection field
 * (an empty {@code ArrayList} or {@code LinkedHashMap} per list, map and {@code additionalProperties},
 * a dozen per pod spec), and every resource amount is a {@code Quantity} of its own with a map of its
 * own; at 5,000 nodes and 30,000 GPU pods these were most of a 270 MiB live set while the
 * distinct amounts number a few dozen. Empty collections become the shared immutable empties and
 * each resource map ({@code capacity}, {@code allocatable}, {@code limits}, {@code requests},
 * {@code overhead}) one shared immutable map per distinct content.
 *
 * <p>Only for the stores' own copies: they are read, never changed, so sharing is safe; a caller
 * that tried to change one would get an {@code UnsupportedOperationException}, not a change
 * leaking into other objects. The shared maps are kept for the life of the process, at most
 * {@link #DISTINCT} of them (amounts that differ on every object, such as a node's exact
 * ephemeral storage, then stay per object).
 */
final class SharedParts {
  /** Beyond this many distinct resource maps, new ones are left as they are. */
  static final int DISTINCT = 10_000;

  private static final String MODEL = "io.fabric8.kubernetes.api.model";
  private static final Map<String, Map<String, Quantity>> RESOURCES = new ConcurrentHashMap<>();
  private static final ClassValue<List<Field>> COLLECTIONS =
      new ClassValue<>() {
        @Override
        protected List<Field> computeValue(Class<?> type) {
          var fields = new ArrayList<Field>();
          for (var c = type; c != null && c.getName().startsWith(MODEL); c = c.getSuperclass()) {
            for (var field : c.getDeclaredFields()) {
              if (!Modifier.isStatic(field.getModifiers()) && isModelOrCollection(field.getType())) {
                field.setAccessible(true);
                fields.add(field);
              }
            }
          }
          return List.copyOf(fields);
        }
      };

  private SharedParts() {}

  /** {@code object} (a node or pod the store keeps) with its parts shared; the same object, changed in place. */
  static <T> T share(T object) {
    walk(object);
    return object;
  }

  private static void walk(Object object) {
    if (object == null || !object.getClass().getName().startsWith(MODEL) || object instanceof Quantity) {
      return;
    }
    try {
      for (var field : COLLECTIONS.get(object.getClass())) {
        var value = field.get(object);
        if (value instanceof List<?> list) {
          if (list.isEmpty()) {
            field.set(object, List.of());
          } else {
            list.forEach(SharedParts::walk);
          }
        } else if (value instanceof Map<?, ?> map) {
          var shared = shared(map);
          if (shared != map) {
            field.set(object, shared);
          } else {
            map.values().forEach(SharedParts::walk);
          }
        } else {
          walk(value);
        }
      }
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("fabric8 model field not accessible", e);
    }
  }

  private static Map<?, ?> shared(Map<?, ?> map) {
    if (map.isEmpty()) {
      return Map.of();
    }
    if (!map.values().stream().allMatch(v -> v instanceof Quantity q && q.getAdditionalProperties().isEmpty())) {
      return map;
    }
    @SuppressWarnings("unchecked")
    var resources = (Map<String, Quantity>) map;
    var key = new StringBuilder();
    resources.forEach((name, q) -> key.append(name).append('=').append(q.getAmount()).append(' ').append(q.getFormat()).append(';'));
    var known = RESOURCES.get(key.toString());
    if (known != null) {
      return known;
    }
    if (RESOURCES.size() >= DISTINCT) {
      return map;
    }
    var copy = new LinkedHashMap<String, Quantity>();
    resources.forEach((name, q) -> {
      var kept = new Quantity(q.getAmount(), q.getFormat());
      kept.setAdditionalProperties(Map.of());
      copy.put(name, kept);
    });
    var prior = RESOURCES.putIfAbsent(key.toString(), Collections.unmodifiableMap(copy));
    return prior != null ? prior : RESOURCES.get(key.toString());
  }

  private static boolean isModelOrCollection(Class<?> type) {
    return List.class.isAssignableFrom(type) || Map.class.isAssignableFrom(type) || type.getName().startsWith(MODEL) || type == Object.class;
  }
}
