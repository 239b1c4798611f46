package io.gpuadmission.admission;

/**
 * The words of /mutate and /validate before the cluster's policy has been read (the API server
 * not reached since start): the built-in default may differ from it in every rule, so GPU objects
 * are refused for now rather than judged by the wrong policy; other objects are admitted.
 */
final class UnreadPolicy {
  private UnreadPolicy() {}

  /** What has not happened yet and why, as the policy store says it, cut to fit a kubectl line. */
  static String notRead(String unread) {
    return "gpu-admission has not read the cluster's GPU policy yet: " + (unread.length() <= 400 ? unread : unread.substring(0, 397) + "...");
  }

  /**
   * The refusal's message: {@code refused} (such as "GPU pods") are refused rather than {@code
   * treated} (mutated, judged) by another policy; {@code again} says what to do once ready.
   */
  static String refusal(String notRead, String refused, String treated, String again) {
    return notRead + ". " + refused + " are refused until it has, rather than " + treated + " by a policy that may not be the cluster's; "
        + again + " once the gpu-admission pods are Ready (kubectl -n gpu-admission get pods),"
        + " and if they stay unready check that they reach the API server (kubectl -n gpu-admission logs deploy/gpu-admission).";
  }
}
