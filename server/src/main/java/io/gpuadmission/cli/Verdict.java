package io.gpuadmission.cli;

/** What the webhook does with an object: lets it in, refuses it, or is never asked. */
enum Verdict {
  ADMITTED("admitted"),
  REFUSED("refused"),
  NOT_JUDGED("not judged");

  private final String text;

  Verdict(String text) {
    this.text = text;
  }

  @Override
  public String toString() {
    return text;
  }
}
