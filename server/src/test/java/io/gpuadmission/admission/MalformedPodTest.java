package io.gpuadmission.admission;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.pod.NullListEntry;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A review's Pod is checked on what the decoder noted while skipping it: the same answers as a
 * pass of its own over the Pod's tokens ({@link NullListEntry#find}), wherever the problem sits.
 */
class MalformedPodTest {
  private static final String MISSING = " is missing or not an object: a pod cannot be judged without it";

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      value = {
        "{'metadata':{'name':'p'},'spec':{'containers':[{'name':'c'}]}}|",
        "{'metadata':{'name':'p'},'spec':{'containers':[null]}}|spec.containers[0]",
        "{'metadata':{'ownerReferences':[{},null]},'spec':{'containers':[null]}}|metadata.ownerReferences[1]",
        "{'spec':{'containers':[{'env':[{'name':'A'},null]}]},'metadata':{}}|spec.containers[0].env[1]",
        "{'metadata':{'x':[[1],[2,null]]},'spec':{}}|metadata.x[1][1]",
        "{'metadata':{'name':null},'spec':{'nodeName':null,'containers':[]}}|",
        "{'metadata':{'annotations':{'a.b/c':'[null]'}},'spec':{}}|",
      })
  void namesTheFirstNullListEntryAsItsOwnPassDoes(String pod, String where) throws Exception {
    var json = pod.replace('\'', '"');
    var expected = NullListEntry.find(KubernetesJson.mapper().readTree(json), "");

    assertThat(expected.orElse(null)).isEqualTo(where);
    assertThat(MalformedPod.pod(decode(json).rawObject())).isEqualTo(expected.map(NullListEntry::problem));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      quoteCharacter = '"',
      value = {
        "{'spec':{}}|metadata",
        "{'metadata':'none','spec':{}}|metadata",
        "{'metadata':{},'spec':'none'}|spec",
        "{'metadata':{'spec':{}},'status':{'metadata':{}}}|spec",
        "{'metadata':{},'spec':{'containers':[null]},'spec':'none'}|spec",
        "{'metadata':{},'spec':{},'spec':null}|spec",
        "{'metadata':{},'metadata':null,'spec':{}}|metadata",
        "{'metadata':{},'spec':'none','spec':{'containers':[null]}}|",
        "[{'metadata':{},'spec':{}}]|request.object",
        "'text'|request.object",
      })
  void findsAMissingMetadataOrSpecOnlyAtTheTop(String pod, String missing) throws Exception {
    var problem = MalformedPod.pod(decode(pod.replace('\'', '"')).rawObject());

    if (missing == null) {
      assertThat(problem).as("a repeated key's last value is judged, as the typed read keeps it")
          .contains("spec.containers[0]" + " is null: an entry of a list cannot be empty (remove it, or give it its fields)");
    } else {
      assertThat(problem).contains(missing + MISSING);
    }
  }

  private static DecodedReview decode(String pod) throws MalformedReviewException {
    var review = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"userInfo\":"
        + "{\"groups\":[null]},\"object\":" + pod + ",\"oldObject\":{\"spec\":[null]}}}";
    return ReviewCodec.decode(review.getBytes(StandardCharsets.UTF_8));
  }
}
