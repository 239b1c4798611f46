package io.gpuadmission.node.nativeimage;

import io.gpuadmission.node.NodeAgentConfig;
import io.smallrye.config.ConfigMappingLoader;
import org.graalvm.nativeimage.hosted.Feature;
import org.graalvm.nativeimage.hosted.RuntimeReflection;

/**
 * The build-time half of {@link NodeAgentConfig} in a native executable. SmallRye Config implements
 * a {@code @ConfigMapping} interface with a class it generates (ASM) and defines when the mapping is
 * first read; a native executable cannot define classes. Here the builder's JVM generates them
 * (the agent's and its nested {@code device-plugin} mapping's) before the analysis, so they are
 * compiled in, and registers what SmallRye then finds by name and reflection at run time: each
 * implementation by name ({@code ClassLoader.loadClass}, which finds it instead of generating it),
 * its constructor and its static property tables, and the interfaces' methods with their
 * annotations (defaults, names). Quarkus does the same for the server at its own build.
 */
public final class ConfigMappingFeature implements Feature {
  @Override
  public String getDescription() {
    return "gpu-admission node agent: NodeAgentConfig's SmallRye Config implementation classes, generated at build time";
  }

  @Override
  public void beforeAnalysis(BeforeAnalysisAccess access) {
    for (var mapping : ConfigMappingLoader.getConfigMappingsMetadata(NodeAgentConfig.class)) {
      var type = mapping.getInterfaceType();
      register(type);
      register(ConfigMappingLoader.ensureLoaded(type).implementation());
    }
  }

  private static void register(Class<?> type) {
    RuntimeReflection.register(type);
    RuntimeReflection.registerAllDeclaredMethods(type);
    RuntimeReflection.registerAllDeclaredConstructors(type);
    RuntimeReflection.registerAllDeclaredFields(type);
    RuntimeReflection.register(type.getDeclaredConstructors());
    RuntimeReflection.register(type.getDeclaredMethods());
  }
}
