package io.gpuadmission.admission;

import io.gpuadmission.cluster.QuotaTreeReading;
import io.gpuadmission.cluster.QuotaTreeWatcher;
import io.gpuadmission.quota.QuotaTreeCheck;
import java.util.Optional;

/**
 * The ElasticQuotaTree check of {@code /validate}: a tree that breaks ACK's rules (or cannot be
 * read) is refused at {@code kubectl apply} with each rule and where it is broken, as a bad policy
 * is. Trees outside {@code kube-system} are not the cluster's tree and pass unjudged.
 */
final class QuotaTreeValidation {
  private QuotaTreeValidation() {}

  static boolean isQuotaTree(DecodedReview review) {
    return QuotaTreeWatcher.GROUP.equals(review.group()) && QuotaTreeWatcher.KIND.equals(review.kind());
  }

  /** Why the tree is refused; empty when it keeps every rule or is not the cluster's tree. */
  static Optional<String> refusal(DecodedReview review) {
    if (!QuotaTreeWatcher.NAMESPACE.equals(review.namespace())) {
      return Optional.empty();
    }
    var checked = QuotaTreeReading.check(review.object());
    if (checked instanceof QuotaTreeCheck.Invalid invalid) {
      return Optional.of("the quota tree breaks ACK's rules: " + QuotaTreeWatcher.describe(invalid.violations()));
    }
    return Optional.empty();
  }
}
