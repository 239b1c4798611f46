package io.gpuadmission.node.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** The agent's JSON without an ObjectMapper: the same trees as Jackson's databind reads, written back as compact JSON. */
class JsonTest {
  static final String EVENT = "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"a\",\"annotations\":{\"x\":\"1,2\"},"
      + "\"deletionTimestamp\":null},\"spec\":{\"containers\":[{\"name\":\"c\",\"ports\":[80,8080]}],\"priority\":-3,"
      + "\"ratio\":0.25,\"hostNetwork\":false,\"ready\":true}}}";

  @Test
  void readsTheTreeDatabindReads() throws Exception {
    assertThat(Json.read(EVENT)).isEqualTo(new ObjectMapper().readTree(EVENT).deepCopy());
    assertThat(Json.read(EVENT).at("/object/spec/containers/0/ports/1").asInt()).isEqualTo(8080);
    assertThat(Json.read(EVENT).at("/object/metadata").hasNonNull("deletionTimestamp")).isFalse();
  }

  @Test
  void writesCompactJsonThatReadsBackTheSame() throws Exception {
    var patch = Json.object();
    patch.putObject("metadata").put("uid", "u-1").putObject("annotations").put("gpu-admission.io/gpu-allocated", "0,3");

    assertThat(Json.write(patch)).isEqualTo("{\"metadata\":{\"uid\":\"u-1\",\"annotations\":{\"gpu-admission.io/gpu-allocated\":\"0,3\"}}}");
    assertThat(Json.read(Json.write(Json.read(EVENT)))).isEqualTo(Json.read(EVENT));
  }

  @Test
  void refusesWhatIsNotOneJsonDocument() {
    assertThatThrownBy(() -> Json.read("{\"type\":\"ADDED\",\"object\":{")).isInstanceOf(JsonProcessingException.class);
    assertThatThrownBy(() -> Json.read("{} {}")).isInstanceOf(JsonProcessingException.class);
  }
}
