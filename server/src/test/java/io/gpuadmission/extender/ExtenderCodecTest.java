package io.gpuadmission.extender;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.gpuadmission.placement.PlacementDecider.NodeScore;
import io.gpuadmission.support.Fixtures;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The streamed ExtenderArgs reader and the direct answer writer against the Jackson mapper they
 * stand in for: the same arguments read, the same bytes written, and the mapper's own answer or
 * error wherever they step aside.
 */
class ExtenderCodecTest {
  /** The mapper ExtenderCodec reads and writes with. */
  private static final ObjectMapper MAPPER =
      JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build();

  private static final String POD = "{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":{\"containers\":"
      + "[{\"name\":\"c\",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}}]}}";

  private final ExtenderArgsReader reader = new ExtenderArgsReader(MAPPER);

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static ExtenderWire.Args byMapper(byte[] body) throws IOException {
    return MAPPER.readValue(body, ExtenderWire.Args.class);
  }

  @Test
  void readsWhatTheMapperReadsInBothCasingsAndBothCacheModes() throws IOException {
    var bodies =
        List.of(
            Fixtures.text(Fixtures.path("extender/filter-args-node-names.json")),
            Fixtures.text(Fixtures.path("extender/filter-args-nodes-lowercase.json")),
            Fixtures.text(Fixtures.path("bench/extender-args-500.json")),
            "{\"POD\":" + POD + ",\"nodenames\":[\"a\",null,\"b\"],\"Extra\":{\"x\":[1,{\"y\":2}]},\"more\":[[]]}",
            "{\"Pod\":null,\"Nodes\":null,\"NodeNames\":null}",
            "{\"Pod\":" + POD + ",\"NodeNames\":[]}",
            "{\"NodeNames\":[\"caf\\u00e9\",\"a\\\"b\",\"\\u00e9t\\u00e9-\\ud83d\\ude00\"],\"Pod\":" + POD + "}",
            "{}");
    for (var body : bodies) {
      var read = reader.read(bytes(body));

      assertThat(read).as(body).contains(byMapper(bytes(body)));
    }
  }

  @Test
  void findsEachNameItHasSeenBeforeInsteadOfBuildingItAgain() {
    var body = bytes("{\"Pod\":" + POD + ",\"NodeNames\":[\"gpu-node-1\",\"gpu-node-2\"]}");

    var first = reader.read(body).orElseThrow().nodeNames();
    var second = reader.read(body).orElseThrow().nodeNames();

    assertThat(second).containsExactly("gpu-node-1", "gpu-node-2");
    assertThat(second.get(0)).isSameAs(first.get(0));
    assertThat(second.get(1)).isSameAs(first.get(1));
  }

  @Test
  void leavesUnusualShapesToTheMapperWhoseAnswerOrErrorStands() {
    var bodies =
        List.of(
            "", "null", "[]", "\"x\"", "{", "{\"NodeNames\":[1,true]}", "{\"NodeNames\":\"a\"}", "{\"NodeNames\":[[\"a\"]]}",
            "{\"Pod\":\"x\",\"NodeNames\":[\"a\"]}", "{\"Pod\":{\"metadata\":[]},\"NodeNames\":[\"a\"]}", "{\"Nodes\":{\"items\":3}}");
    for (var body : bodies) {
      assertThat(reader.read(bytes(body))).as(body).isEmpty();
    }
    // The mapper coerces numbers and booleans to names: the codec answers as it always did.
    assertThat(ExtenderCodec.args(bytes("{\"Pod\":" + POD + ",\"NodeNames\":[1,true]}")).nodeNames()).containsExactly("1", "true");
    assertThat(catchThrowable(() -> ExtenderCodec.args(bytes("{\"Pod\":\"x\",\"NodeNames\":[\"a\"]}"))))
        .isInstanceOf(ExtenderCodec.MalformedRequest.class)
        .hasMessage("Pod: expected a Pod object, got the string \"x\" at line 1, column 8");
    assertThat(catchThrowable(() -> ExtenderCodec.args(bytes("null")))).hasMessage("expected a JSON ExtenderArgs, got null");
    assertThat(catchThrowable(() -> ExtenderCodec.args(bytes("")))).hasMessage("empty body: expected a JSON ExtenderArgs");
  }

  @Test
  void writesTheFilterAnswerByteForByteAsTheMapper() throws IOException {
    var failed = new LinkedHashMap<String, String>();
    failed.put("gpu-b", "largest free GPU has 3GiB of aliyun.com/gpu-mem, pod needs 14GiB");
    failed.put("gpu-c", "1 of 4 GPUs free, pod needs 2 whole GPUs; GPUs 2,3 unhealthy");
    var answers =
        List.of(
            new ExtenderWire.FilterResult(null, List.of("gpu-a", "gpu-d"), failed, Map.of("cpu", "no GPUs known on this node"), ""),
            new ExtenderWire.FilterResult(null, List.of(), Map.of(), Map.of(), ""),
            new ExtenderWire.FilterResult(null, null, null, null, null),
            new ExtenderWire.FilterResult(null, new ArrayList<>(java.util.Arrays.asList("a", null)), Map.of("x", "~ /{}[]:,'`"), Map.of(), "e"));
    for (var answer : answers) {
      assertThat(ExtenderAnswerWriter.filter(answer)).as(answer.toString()).isEqualTo(MAPPER.writeValueAsBytes(answer));
      assertThat(ExtenderCodec.filterAnswer(answer)).isEqualTo(MAPPER.writeValueAsBytes(answer));
    }
  }

  @Test
  void leavesStringsThatNeedEscapingAndNodeObjectsToTheMapper() throws IOException {
    var nodes = MAPPER.readValue("{\"items\":[{\"metadata\":{\"name\":\"a\"}}]}", io.fabric8.kubernetes.api.model.NodeList.class);
    var answers =
        List.of(
            new ExtenderWire.FilterResult(nodes, null, Map.of(), Map.of(), ""),
            new ExtenderWire.FilterResult(null, List.of("caf\u00e9"), Map.of(), Map.of(), ""),
            new ExtenderWire.FilterResult(null, List.of("a"), Map.of("b", "say \"no\"\n\t\\"), Map.of(), ""),
            new ExtenderWire.FilterResult(null, List.of("a\u007f", "\u0001"), Map.of(), Map.of(), ""));
    for (var answer : answers) {
      assertThat(ExtenderAnswerWriter.filter(answer)).isNull();
      assertThat(ExtenderCodec.filterAnswer(answer)).isEqualTo(MAPPER.writeValueAsBytes(answer));
    }
    var nullKey = new java.util.HashMap<String, String>();
    nullKey.put(null, "x");
    var refused = new ExtenderWire.FilterResult(null, List.of(), nullKey, Map.of(), "");
    assertThat(ExtenderAnswerWriter.filter(refused)).isNull();
    assertThat(catchThrowable(() -> ExtenderCodec.filterAnswer(refused)))
        .isInstanceOf(IllegalStateException.class).hasMessage("cannot encode FilterResult");
  }

  @Test
  void writesThePrioritizeAnswerByteForByteAsTheMapper() throws IOException {
    var lists =
        List.of(
            List.of(new NodeScore("gpu-a", 0), new NodeScore("gpu-b", 10), new NodeScore("gpu-c", 7)),
            List.<NodeScore>of(),
            List.of(new NodeScore("x", -3), new NodeScore("y", Integer.MIN_VALUE), new NodeScore("z", Integer.MAX_VALUE), new NodeScore("w", 100)),
            List.of(new NodeScore("n\u00e9", 1)),
            List.of(new NodeScore(null, 1)));
    for (var scores : lists) {
      var mapped = MAPPER.writeValueAsBytes(scores.stream().map(s -> new ExtenderWire.HostPriority(s.node(), s.score())).toList());

      assertThat(ExtenderCodec.prioritizeAnswer(scores)).as(scores.toString()).isEqualTo(mapped);
    }
    assertThat(ExtenderAnswerWriter.priorities(lists.get(2))).isNotNull();
    assertThat(ExtenderAnswerWriter.priorities(lists.get(3))).isNull();
  }
}
