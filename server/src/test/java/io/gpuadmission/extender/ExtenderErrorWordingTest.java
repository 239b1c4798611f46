package io.gpuadmission.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A body kube-scheduler could not have sent is refused in the body's own terms: what was expected
 * where and what came, at which line and column; never a Java type.
 */
class ExtenderErrorWordingTest {
  private static final String POD = "{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\"},\"spec\":{\"containers\":[{\"name\":\"c\"}]}}";

  private static String args(String body) {
    return catchThrowable(() -> ExtenderCodec.args(body.getBytes(StandardCharsets.UTF_8))).getMessage();
  }

  private static String bindingArgs(String body) {
    return catchThrowable(() -> ExtenderCodec.bindingArgs(body.getBytes(StandardCharsets.UTF_8))).getMessage();
  }

  @Test
  void anArrayForTheWholeBodyIsNamedAsSuch() {
    assertThat(args("[]")).isEqualTo("expected an ExtenderArgs object, got an array at line 1, column 1");
    assertThat(bindingArgs("[]")).isEqualTo("expected an ExtenderBindingArgs object, got an array at line 1, column 1");
  }

  @Test
  void aValueOfTheWrongTypeIsNamedWithItsPath() {
    assertThat(args("{\"Pod\":\"x\",\"NodeNames\":[\"a\"]}"))
        .isEqualTo("Pod: expected a Pod object, got the string \"x\" at line 1, column 8");
    assertThat(args("{\"Pod\":" + POD.replace("[{\"name\":\"c\"}]", "\"c\"") + ",\"NodeNames\":[\"a\"]}"))
        .isEqualTo("Pod.spec.containers: expected an array, got a string at line 1, column 76");
  }

  @Test
  void aBadNumberIsNamedWithItsValue() {
    var port = POD.replace("{\"name\":\"c\"}", "{\"name\":\"c\",\"ports\":[{\"containerPort\":\"http\"}]}");

    assertThat(args("{\"Pod\":" + port + ",\"NodeNames\":[\"a\"]}"))
        .isEqualTo("Pod.spec.containers[0].ports[0].containerPort: expected an integer, got the string \"http\" at line 1, column 115");
  }

  @Test
  void truncatedJsonSaysWhereItEnds() {
    assertThat(args("{\"Pod\":{")).isEqualTo(
        "not JSON: Unexpected end-of-input: expected close marker for Object (start marker at line 1, column 8) at line 1, column 9");
  }
}
