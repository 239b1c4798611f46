package io.gpuadmission.mode;

/**
 * Fired once at start-up in {@code server} mode only. Whatever only the webhook and extender do
 * (informers, leader election, certificates, their metrics and timers) starts on it, never on
 * Quarkus' StartupEvent, which every mode sees. Their ShutdownEvent observers are conditional
 * ({@code notifyObserver = Reception.IF_EXISTS}): another mode never creates them just to stop them.
 */
public record ServerStartup() {}
