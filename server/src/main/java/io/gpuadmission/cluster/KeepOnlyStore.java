package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * An informer store that keeps only the objects that matter, and only the fields that matter, so
 * memory grows with GPU pods rather than with all pods. Objects it drops reach the event handlers
 * as nothing at all (see {@link #put}), unless the store held them before.
 */
final class KeepOnlyStore<T extends HasMetadata> implements ItemStore<T> {
  private final Map<String, T> items = new ConcurrentHashMap<>();
  private final Predicate<T> keep;
  private final UnaryOperator<T> strip;

  KeepOnlyStore(Predicate<T> keep, UnaryOperator<T> strip) {
    this.keep = keep;
    this.strip = strip;
  }

  @Override
  public String getKey(T obj) {
    return Cache.metaNamespaceKeyFunc(obj);
  }

  /**
   * An object not kept, and not held before, is answered as its own previous copy: the informer
   * then sees it unchanged and queues no event. An event would carry the whole object (fabric8
   * hands handlers what it read, not what the store kept) to handlers that drop it, and on a
   * relist of a large cluster its unbounded queue would hold every such pod at once. One held
   * before and no longer kept is removed, and its handlers are told as before. Indexers would
   * see the dropped object as stored: informers with this store have none.
   */
  @Override
  public T put(String key, T obj) {
    if (keep.test(obj)) {
      return items.put(key, strip.apply(obj));
    }
    var held = items.remove(key);
    return held != null ? held : obj;
  }

  @Override
  public T remove(String key) {
    return items.remove(key);
  }

  @Override
  public Stream<String> keySet() {
    return items.keySet().stream();
  }

  @Override
  public Stream<T> values() {
    return items.values().stream();
  }

  @Override
  public int size() {
    return items.size();
  }

  @Override
  public T get(String key) {
    return items.get(key);
  }
}
