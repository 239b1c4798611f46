package io.gpuadmission.cluster;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;

/** Node objects as an informer delivers them: told of each node as it is now, or gone. */
public interface NodeSource {
  /** Calls {@code current} for every node known now and every change after, {@code gone} on deletion. */
  void subscribe(Consumer<Node> current, Consumer<Node> gone);

  /** The nodes known now. */
  List<Node> list();

  /** One node as known now, by name; empty when it is not (yet, or any more). */
  Optional<Node> node(String name);

  /** The nodes of {@code informer}: its events, its store. */
  static NodeSource over(SharedIndexInformer<Node> informer) {
    return new NodeSource() {
      @Override
      public void subscribe(Consumer<Node> current, Consumer<Node> gone) {
        informer.addEventHandler(Informers.handler(current, gone));
      }

      @Override
      public List<Node> list() {
        return informer.getStore().list();
      }

      @Override
      public Optional<Node> node(String name) {
        return Optional.ofNullable(informer.getStore().getByKey(name));
      }
    };
  }
}
