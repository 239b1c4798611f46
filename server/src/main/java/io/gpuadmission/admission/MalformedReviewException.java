package io.gpuadmission.admission;

/** A request body that is not an AdmissionReview we can answer; the message is the 400 reason. */
public final class MalformedReviewException extends Exception {
  private static final long serialVersionUID = 1L;

  public MalformedReviewException(String reason) {
    super(reason);
  }
}
