package io.gpuadmission.validation;

/**
 * One reason to refuse an object: the rule that found it, the field it is about, and a message
 * that names the fix.
 */
public record Violation(String rule, String path, String message) {}
