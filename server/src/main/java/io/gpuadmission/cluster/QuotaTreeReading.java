package io.gpuadmission.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import io.gpuadmission.quota.QuotaTree;
import io.gpuadmission.quota.QuotaTreeCheck;

/** An ElasticQuotaTree object's JSON, read and checked: what the webhook and the watcher both judge by. */
public final class QuotaTreeReading {
  private QuotaTreeReading() {}

  public static QuotaTreeCheck check(JsonNode object) {
    var read = QuotaTreeReader.read(object);
    if (read instanceof QuotaTreeReader.Read.Unreadable unreadable) {
      return new QuotaTreeCheck.Invalid(unreadable.violations());
    }
    return QuotaTree.check(((QuotaTreeReader.Read.Spec) read).root());
  }
}
