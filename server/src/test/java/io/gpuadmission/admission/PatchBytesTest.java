package io.gpuadmission.admission;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ArrayNode;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The patch's bytes are its JSON text in UTF-8, as toString() gives it, for any character. */
class PatchBytesTest {
  @Test
  void charactersBeyondTheBasicPlaneAreWrittenAsUtf8() {
    var patch = KubernetesJson.mapper().createArrayNode();
    patch.addObject().put("op", "add").put("path", "/metadata/annotations/a~1b").put("value", "😀,é,\u2028,\"");

    var bytes = MutationService.patchBytes(patch);

    assertThat(new String(bytes, StandardCharsets.UTF_8)).isEqualTo(patch.toString());
    assertThat(bytes).containsSequence((byte) 0xF0, (byte) 0x9F, (byte) 0x98, (byte) 0x80);
  }

  @Test
  void anEmptyPatchIsAnEmptyArray() {
    assertThat(MutationService.patchBytes((ArrayNode) KubernetesJson.mapper().createArrayNode())).isEqualTo("[]".getBytes(StandardCharsets.US_ASCII));
  }
}
