package io.gpuadmission.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class WebhookConditionSyncTest {
  @Test
  void replacesTheOneLabelTheConditionTests() {
    var shipped = "has(object.spec.containers) || (has(object.metadata.labels) && 'gpu-topology' in object.metadata.labels)";

    assertThat(WebhookConditionSync.withLabel(shipped, "train.example.com/gang"))
        .contains("has(object.spec.containers) || (has(object.metadata.labels) && 'train.example.com/gang' in object.metadata.labels)");
  }

  @Test
  void leavesAloneAConditionThatTestsNoLabelOrSeveral() {
    assertThat(WebhookConditionSync.withLabel("object.metadata.name == 'x'", "a")).isEmpty();
    assertThat(WebhookConditionSync.withLabel("'a' in object.metadata.labels || 'b' in object.metadata.labels", "c")).isEmpty();
  }
}
