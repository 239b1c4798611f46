package io.gpuadmission.admission;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The one-pass decoder: the same answers as a tree-first decoder, for good and bad bodies. */
class ReviewCodecTest {
  private static final String POD =
      "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},"
          + "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"nginx\"}]}}";

  private static DecodedReview decode(String body) throws MalformedReviewException {
    return ReviewCodec.decode(body.getBytes(StandardCharsets.UTF_8));
  }

  private static String review(String request) {
    return "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":" + request + "}";
  }

  @Test
  void readsObjectAsTypedPodAndAsTreeFromOneParse() throws Exception {
    var review = decode(review("{\"uid\":\"u1\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
        + "\"operation\":\"CREATE\",\"object\":" + POD + ",\"dryRun\":true}"));

    assertThat(review.uid()).isEqualTo("u1");
    assertThat(review.isCoreKind("Pod")).isTrue();
    assertThat(review.dryRun()).isTrue();
    assertThat(review.namespace()).as("from the object when the request names none").isEqualTo("ns");
    assertThat(review.pod().getSpec().getContainers().get(0).getImage()).isEqualTo("nginx");
    assertThat(review.pod()).as("a new pod on each call").isNotSameAs(review.pod());
    assertThat(review.object().path("metadata").path("name").asText()).isEqualTo("p");
    assertThat(review.oldObject()).isNull();
  }

  @Test
  void treatsNullObjectAsNoObject() throws Exception {
    var review = decode(review("{\"uid\":\"u\",\"operation\":\"DELETE\",\"object\":null,\"oldObject\":" + POD + "}"));

    assertThat(review.hasObject()).isFalse();
    assertThat(review.object()).isNull();
    assertThat(review.oldObject().path("kind").asText()).isEqualTo("Pod");
    assertThatThrownBy(review::pod).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void keepsEachObjectsOwnBytesAfterMultiByteCharacters() throws Exception {
    var old = POD.replace("\"name\":\"p\"", "\"name\":\"p\",\"annotations\":{\"note\":\"für été ✓\"}");
    var review = decode(review("{\"uid\":\"u\",\"userInfo\":{\"username\":\"zoë 日本\"},\"operation\":\"UPDATE\","
        + "\"object\":" + POD.replace("nginx", "nginx:é") + ",\"oldObject\":" + old + ",\"dryRun\":false}"));

    assertThat(review.request().getUserInfo().getUsername()).isEqualTo("zoë 日本");
    assertThat(review.pod().getSpec().getContainers().get(0).getImage()).isEqualTo("nginx:é");
    assertThat(review.oldObject().path("metadata").path("annotations").path("note").asText()).isEqualTo("für été ✓");
    assertThat(review.dryRun()).isFalse();
  }

  @Test
  void keepsAnObjectThatIsNotAnObjectAsItsValue() throws Exception {
    var review = decode(review("{\"uid\":\"u\",\"object\":[1,2],\"oldObject\":\"text\"}"));

    assertThat(review.object().toString()).isEqualTo("[1,2]");
    assertThat(review.oldObject().asText()).isEqualTo("text");
    assertThatThrownBy(review::pod).isInstanceOf(MalformedObjectException.class).hasMessage("Pod \"\": expected a Pod object, got an array");
  }

  @Test
  void answersIllegalArgumentForAnObjectThatIsNotAPod() throws Exception {
    var review = decode(review("{\"uid\":\"u\",\"object\":{\"spec\":{\"hostPID\":\"maybe\"}}}"));

    assertThatThrownBy(review::pod).isInstanceOf(MalformedObjectException.class)
        .hasMessage("Pod \"\": spec.hostPID: expected true or false, got the string \"maybe\"");
  }

  @Test
  void reportsSyntaxErrorInsideTheObjectAsNotJson() {
    assertThatThrownBy(() -> decode(review("{\"uid\":\"u\",\"object\":{\"metadata\":{name:1}}}")))
        .isInstanceOf(MalformedReviewException.class)
        .hasMessage("body is not JSON: Unexpected character ('n' (code 110)): was expecting double-quote to start field name at line 1, column 105");
  }

  @Test
  void refusesBodiesThatAreNotReviews() throws Exception {
    assertThatThrownBy(() -> decode("[1,2]")).hasMessage("body is not a JSON object: expected an AdmissionReview");
    assertThatThrownBy(() -> decode("  ")).hasMessage("body is not a JSON object: expected an AdmissionReview");
    assertThatThrownBy(() -> decode("[1,")).hasMessageStartingWith("body is not JSON: ");
    assertThatThrownBy(() -> decode("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":\"x\"}"))
        .hasMessage("AdmissionReview has no request");
    assertThatThrownBy(() -> decode(review("{\"object\":" + POD + "}"))).hasMessage("request.uid is missing");
    assertThatThrownBy(() -> decode(review("{\"uid\":true}"))).hasMessage("request.uid is boolean: expected a string");
    assertThatThrownBy(() -> decode(review("{\"uid\":7}"))).hasMessage("request.uid is number: expected a string");
    assertThatThrownBy(() -> decode(review("{\"uid\":{\"a\":1}}"))).hasMessage("request.uid is object: expected a string");
    assertThat(decode(review("{\"uid\":7,\"uid\":\"u\"}")).uid()).as("the last of repeated keys").isEqualTo("u");
    assertThatThrownBy(() -> decode(review("{\"uid\":\"u\",\"uid\":[]}"))).hasMessage("request.uid is array: expected a string");
    assertThatThrownBy(() -> decode(review("{\"uid\":\"u\",\"dryRun\":\"often\"}")))
        .hasMessage("request is malformed: request.dryRun: expected true or false, got the string \"often\"");
    assertThatThrownBy(() -> decode(review("{\"uid\":\"u\",\"kind\":[]}")))
        .hasMessage("request is malformed: request.kind: expected a GroupVersionKind object, got an array");
    assertThatThrownBy(() -> decode("{\"request\":{\"uid\":\"u\"")).hasMessage(
        "body is not JSON: Unexpected end-of-input: expected close marker for Object (start marker at line 1, column 12) at line 1, column 22");
  }

  @Test
  void checksKindBeforeRequestWhateverTheKeyOrder() {
    assertThatThrownBy(() -> decode("{\"request\":{\"uid\":\"u\"},\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"Pod\"}"))
        .hasMessage("kind is \"Pod\": expected AdmissionReview");
  }
}
