package io.gpuadmission.mode;

/** Fired once at start-up in {@code node-agent} mode only: what the node agent runs starts on it. */
public record NodeAgentStartup() {}
