package io.gpuadmission.cli;

import org.eclipse.microprofile.config.ConfigProvider;
import picocli.CommandLine.IVersionProvider;

/** {@code --version}: the application's name and version, as Quarkus knows them. */
public final class VersionProvider implements IVersionProvider {
  @Override
  public String[] getVersion() {
    var config = ConfigProvider.getConfig();
    var name = config.getOptionalValue("quarkus.application.name", String.class).orElse("gpu-admission");
    var version = config.getOptionalValue("quarkus.application.version", String.class).orElse("unknown");
    return new String[] {name + " " + version};
  }
}
