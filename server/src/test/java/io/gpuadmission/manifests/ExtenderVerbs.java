package io.gpuadmission.manifests;

import io.gpuadmission.extender.ExtenderResource;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import java.util.Arrays;
import java.util.List;

/** The verbs the extender serves: the POST paths of {@link ExtenderResource}, read from its annotations. */
final class ExtenderVerbs {
  private ExtenderVerbs() {}

  static List<String> served() {
    return Arrays.stream(ExtenderResource.class.getMethods())
        .filter(m -> m.isAnnotationPresent(POST.class) && m.isAnnotationPresent(Path.class))
        .map(m -> m.getAnnotation(Path.class).value())
        .sorted()
        .toList();
  }
}
