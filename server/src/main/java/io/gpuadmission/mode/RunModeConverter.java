package io.gpuadmission.mode;

import org.eclipse.microprofile.config.spi.Converter;

/**
 * Reads {@value RunMode#PROPERTY} as its written names ({@code cli}, not the enum constant's),
 * so beans inject the mode with {@code @ConfigProperty}; anything else fails start-up naming the
 * accepted values.
 */
public final class RunModeConverter implements Converter<RunMode> {
  private static final long serialVersionUID = 1L;

  @Override
  public RunMode convert(String value) {
    return RunMode.parse(value);
  }
}
