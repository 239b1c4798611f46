package io.gpuadmission.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicyBinding;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.support.Fixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The ValidatingAdmissionPolicy that keeps each node agent to its own node's pods and to one
 * annotation, read from manifests/components/node-agent/admission-policy.yaml and evaluated with
 * Google's CEL on pod updates as the API server would present them: match conditions, then the
 * variables, then every validation.
 */
class NodeAgentAdmissionPolicyTest {
  private static final String AGENT = "system:serviceaccount:gpu-admission-node:gpu-admission-node-agent";
  private static final String NODE = "cn-beijing.i-topo-v100-a";
  private static final CelCompiler COMPILER =
      CelCompilerFactory.standardCelCompilerBuilder()
          .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
          .addVar("object", SimpleType.DYN)
          .addVar("oldObject", SimpleType.DYN)
          .addVar("request", SimpleType.DYN)
          .addVar("variables", SimpleType.DYN)
          .build();
  private static final CelRuntime RUNTIME = CelRuntimeFactory.standardCelRuntimeBuilder().build();
  private static ValidatingAdmissionPolicy policy;

  @BeforeAll
  @SuppressWarnings("unchecked")
  static void readPolicy() throws Exception {
    var objects = (List<Object>) new KubernetesSerialization()
        .unmarshal(Files.readString(Path.of("manifests/components/node-agent/admission-policy.yaml")));
    policy = (ValidatingAdmissionPolicy) objects.get(0);
    var binding = (ValidatingAdmissionPolicyBinding) objects.get(1);
    assertThat(binding.getSpec().getPolicyName()).isEqualTo(policy.getMetadata().getName());
    assertThat(binding.getSpec().getValidationActions()).containsExactly("Deny");
    assertThat(binding.getSpec().getMatchResources()).isNull();
    assertThat(policy.getSpec().getFailurePolicy()).isEqualTo("Fail");
    assertThat(policy.getSpec().getMatchConstraints().getResourceRules()).singleElement().satisfies(rule -> {
      assertThat(rule.getResources()).containsExactly("pods");
      assertThat(rule.getOperations()).containsExactly("UPDATE");
    });
  }

  /** "not matched", "allowed", or the messages of the validations that fail. */
  private static List<String> verdict(JsonNode request, JsonNode oldObject, JsonNode object) throws Exception {
    var input = new HashMap<String, Object>();
    input.put("request", CelValues.of(request));
    input.put("oldObject", CelValues.of(oldObject));
    input.put("object", CelValues.of(object));
    for (var condition : policy.getSpec().getMatchConditions()) {
      if (!Boolean.TRUE.equals(eval(condition.getExpression(), input))) {
        return List.of("not matched");
      }
    }
    var variables = new HashMap<String, Object>();
    input.put("variables", variables);
    for (var variable : policy.getSpec().getVariables()) {
      variables.put(variable.getName(), eval(variable.getExpression(), input));
    }
    var failures = new ArrayList<String>();
    for (var validation : policy.getSpec().getValidations()) {
      if (!Boolean.TRUE.equals(eval(validation.getExpression(), input))) {
        assertThat(validation.getReason()).isEqualTo("Forbidden");
        failures.add(validation.getMessageExpression() != null
            ? (String) eval(validation.getMessageExpression(), input)
            : validation.getMessage().strip());
      }
    }
    return failures.isEmpty() ? List.of("allowed") : failures;
  }

  private static Object eval(String expression, Map<String, Object> input) throws Exception {
    return RUNTIME.createProgram(COMPILER.compile(expression).getAst()).eval(input);
  }

  private static JsonNode request(String user, String... nodeClaim) {
    var request = KubernetesJson.mapper().createObjectNode();
    var userInfo = request.putObject("userInfo");
    userInfo.put("username", user);
    var extra = userInfo.putObject("extra");
    extra.putArray("authentication.kubernetes.io/pod-name").add("gpu-admission-node-agent-7x2kq");
    if (nodeClaim.length > 0) {
      var nodes = extra.putArray("authentication.kubernetes.io/node-name");
      for (var node : nodeClaim) {
        nodes.add(node);
      }
    }
    return request;
  }

  private static ObjectNode pod() {
    return (ObjectNode) Fixtures.yamlTree(Fixtures.agentPath("node/pod-bert-worker-0.yaml"));
  }

  private static JsonNode recorded(JsonNode pod, String gpus) {
    var copy = pod.deepCopy();
    ((ObjectNode) copy.path("metadata").path("annotations")).put("gpu-admission.io/gpu-allocated", gpus);
    return copy;
  }

  @Test
  void anAgentRecordsAndCorrectsTheGpusOfAPodOnItsOwnNode() throws Exception {
    var before = pod();
    var after = recorded(before, "1,2");

    assertThat(verdict(request(AGENT, NODE), before, after)).containsExactly("allowed");
    assertThat(verdict(request(AGENT, NODE), after, recorded(before, "1,5"))).containsExactly("allowed");
  }

  @Test
  void anAgentCannotTouchAPodOfAnotherNodeOrAPendingPod() throws Exception {
    var elsewhere = pod();
    ((ObjectNode) elsewhere.path("spec")).put("nodeName", "cn-beijing.i-cgpu-v100-a");
    var pending = pod();
    ((ObjectNode) pending.path("spec")).remove("nodeName");

    assertThat(verdict(request(AGENT, NODE), elsewhere, recorded(elsewhere, "1,2"))).containsExactly(
        "the node agent of node cn-beijing.i-topo-v100-a may change only pods on that node; pod bert-worker-0 is on node"
            + " cn-beijing.i-cgpu-v100-a");
    // Moving the pod to its own node in the same update does not help: the pod's node before counts.
    var moved = recorded(elsewhere, "1,2");
    ((ObjectNode) moved.path("spec")).put("nodeName", NODE);
    assertThat(verdict(request(AGENT, NODE), elsewhere, moved)).contains(
        "the node agent of node cn-beijing.i-topo-v100-a may change only pods on that node; pod bert-worker-0 is on node"
            + " cn-beijing.i-cgpu-v100-a");
    assertThat(verdict(request(AGENT, NODE), pending, recorded(pending, "1,2"))).containsExactly(
        "the node agent of node cn-beijing.i-topo-v100-a may change only pods on that node; pod bert-worker-0 is not bound");
  }

  @Test
  void anAgentCannotChangeAnythingButItsAnnotation() throws Exception {
    var before = pod();
    var otherAnnotation = recorded(before, "1,2");
    ((ObjectNode) otherAnnotation.path("metadata").path("annotations")).put("gpu-admission.io/gpu-indices", "1,2");
    var removedAnnotation = recorded(before, "1,2");
    ((ObjectNode) removedAnnotation.path("metadata").path("annotations")).remove("gpu-admission.io/gpu-indices");
    var label = recorded(before, "1,2");
    ((ObjectNode) label.path("metadata").path("labels")).put("gpu-topology", "other-job");
    var image = recorded(before, "1,2");
    ((ObjectNode) image.path("spec").path("containers").get(0)).put("image", "attacker/miner:1");
    var finalizer = recorded(before, "1,2");
    ((ObjectNode) finalizer.path("metadata")).putArray("finalizers").add("example.com/keep");
    var only = "the node agent may change only the annotations gpu-admission.io/gpu-allocated and gpu-admission.io/gpu-assigned";

    assertThat(verdict(request(AGENT, NODE), before, otherAnnotation)).containsExactly(only);
    assertThat(verdict(request(AGENT, NODE), before, removedAnnotation)).containsExactly(only);
    assertThat(verdict(request(AGENT, NODE), before, label)).containsExactly(only);
    assertThat(verdict(request(AGENT, NODE), before, image)).containsExactly(only);
    assertThat(verdict(request(AGENT, NODE), before, finalizer)).containsExactly(only);
  }

  @Test
  void credentialsThatNameNoNodeMayChangeNoPod() throws Exception {
    var before = pod();
    var noNode = "the node agent's credentials name no node (a ServiceAccount token bound to its pod carries it from Kubernetes"
        + " 1.30): it may change no pod";

    assertThat(verdict(request(AGENT), before, recorded(before, "1,2"))).first().isEqualTo(noNode);
    assertThat(verdict(request(AGENT, NODE, "cn-beijing.i-cgpu-v100-a"), before, recorded(before, "1,2"))).first().isEqualTo(noNode);
  }

  @Test
  void otherUsersAreNotJudgedByIt() throws Exception {
    var before = pod();

    assertThat(verdict(request("system:serviceaccount:gpu-admission:gpu-admission", NODE), before, recorded(before, "1,2")))
        .containsExactly("not matched");
    assertThat(verdict(request("system:node:" + NODE), before, recorded(before, "1,2"))).containsExactly("not matched");
  }

  /** The chart's node agent carries exactly the policy and binding judged here. */
  @Test
  void chartsNodeAgentHasThisPolicy() throws Exception {
    var file = Overlays.objects(Files.readString(Path.of("manifests/components/node-agent/admission-policy.yaml")));
    var chart = Overlays.objects(Chart.template(List.of("nodeAgent.enabled=true")));
    for (var object : file) {
      assertThat(RenderedObjects.find(chart, object.getKind(), object.getMetadata().getNamespace(), object.getMetadata().getName()))
          .isEqualTo(object);
    }
    assertThat(file).hasSize(2);
  }
}
