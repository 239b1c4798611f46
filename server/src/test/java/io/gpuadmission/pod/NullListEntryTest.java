package io.gpuadmission.pod;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

class NullListEntryTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static JsonNode json(String text) throws Exception {
    return JSON.readTree(text.replace('\'', '"'));
  }

  @Test
  void namesTheFirstNullListEntryAtAnyDepth() throws Exception {
    var pod = json("{'spec':{'containers':[{'name':'a','env':[{'name':'X'}]},{'name':'b','env':[{'name':'Y'},null]}],'tolerations':[null]}}");

    assertThat(NullListEntry.find(pod, "")).contains("spec.containers[1].env[1]");
    assertThat(NullListEntry.find(pod.path("spec").path("containers"), "spec.template.spec.containers")).contains("spec.template.spec.containers[1].env[1]");
    assertThat(NullListEntry.find(json("[[1],[2,null]]"), "")).contains("[1][1]");
  }

  @Test
  void leavesNullFieldsAndCompleteListsAlone() throws Exception {
    var pod = json("{'metadata':{'labels':null},'spec':{'containers':[{'name':'a','resources':null,'args':['x','']}],'tolerations':[]}}");

    assertThat(NullListEntry.find(pod, "")).isEmpty();
    assertThat(NullListEntry.find(null, "")).isEmpty();
  }

  @Test
  void saysWhatToDo() {
    assertThat(NullListEntry.problem("spec.tolerations[0]"))
        .isEqualTo("spec.tolerations[0] is null: an entry of a list cannot be empty (remove it, or give it its fields)");
  }
}
