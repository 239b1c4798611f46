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
 * as adds (the informer finds no previous copy), which the handlers treat as "current state".
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

  @Override
  public T put(String key, T obj) {
    return keep.test(obj) ? items.put(key, strip.apply(obj)) : items.remove(key);
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
