package io.gpuadmission.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.support.Fixtures;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/**
 * Every command on the repository's own fixtures, run as the jar runs them (the same picocli
 * command line, its commands as CDI beans), with the whole stdout compared to the expected output
 * under {@code cli/expected/}, stderr and the exit code. In the app the other Quarkus tests of
 * the default profile start, so it costs no restart. Outputs name fixture paths as given, relative
 * to the project, as a CI job in a checkout runs the command.
 */
@QuarkusTest
class CommandLineTest {
  private static final String R = "server/src/test/resources/";

  @Inject CommandLine.IFactory factory;

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        // Seed 004's PyTorchJob with its Worker asking 2 GPUs: the README's refusal, word for word.
        "explain-seed004-refused   | 1 | explain -f " + R + "workloads/pytorchjob-worker-2-gpus.yaml",
        // Every workload fixture, each kind: what each template's pods get, and /validate's verdict.
        "explain-workloads         | 1 | explain -f " + R + "workloads --cluster " + R + "cluster/nodes.yaml",
        // Gang checks see the members before them in the input: worker-3 disagrees with worker-0.
        "explain-gang-input        | 1 | explain -f " + R + "cli/bert-gang-disagreeing.yaml --policy " + R + "gang/policy.yaml --cluster " + R + "gang/nodes.yaml",
        // JSON for machines; namespaces from --cluster give Pod Security its levels.
        "explain-pods-json         | 1 | explain -o json -f " + R + "mutation/pytorch-dist-nccl-worker/pod.yaml -f " + R
            + "mutation/topology-share-process-namespace/pod.yaml -f " + R + "extender/pod-cgpu-test.yaml -f " + R
            + "manifests/pod-not-restricted.yaml --cluster " + R + "cluster/nodes.yaml --cluster " + R + "cluster/namespaces.yaml",
        // Namespaces from --cluster: Pod Security baseline refuses the host namespaces of a topology pod.
        "explain-pod-security      | 1 | explain -f " + R + "cli/pod-topology-team-restricted.yaml --cluster " + R + "cluster/nodes.yaml --cluster " + R
            + "cluster/namespaces.yaml",
        // The admitted objects as they would be stored; the refused one as a comment.
        "explain-yaml              | 1 | explain -o yaml -f " + R + "mutation/pytorch-dist-nccl-worker/pod.yaml -f " + R
            + "workloads/pytorchjob-consistent.yaml -f " + R + "workloads/pytorchjob-worker-2-gpus.yaml",
        // Whole GPUs judged by the nodes offering the resource asked (status.allocatable): seed 000's notebook on the
        // share pool's Tesla-M40, 3 nvidia.com/gpu where default-t4 has 2, a V100 whose nodes all serve shares or topology.
        "explain-allocatable       | 1 | explain -f " + R + "cli/seed000-tf-notebook.yaml -f " + R + "validation/pod-nvidia-gpus-3.yaml -f " + R
            + "validation/pod-v100-nvidia-gpu.yaml -f " + R + "cluster/gang-master.yaml --cluster " + R + "cli/cluster-allocatable.yaml",
        // ElasticQuotaTrees: each quota node of a good tree; a broken one refused with each rule and its path.
        "explain-quota-trees       | 1 | explain -f " + R + "quota/tree.yaml -f " + R + "quota/tree-broken.yaml",
        // The README's gpushare example with five replicas: four fit on cgpu-v100-a, the fifth nowhere.
        "place-shares              | 1 | place --cluster " + R + "cluster/nodes.yaml --cluster " + R + "extender/bound-pods.yaml -f " + R + "cli/cgpu-deployment.yaml",
        "place-shares-json         | 1 | place -o json --cluster " + R + "cluster/nodes.yaml --cluster " + R + "extender/bound-pods.yaml -f " + R + "cli/cgpu-deployment.yaml",
        // Gangs planned whole: four NVSwitch members on one H100 board, seed 004's pair on a DGX-1's
        // double NVLink (0,3); the refused PyTorchJob is never created.
        "place-gangs               | 1 | place --policy " + R + "gang/policy.yaml --cluster " + R + "gang/nodes.yaml -f " + R + "cli/bert-gang.yaml -f " + R
            + "workloads/pytorchjob-consistent.yaml -f " + R + "workloads/pytorchjob-worker-2-gpus.yaml",
        // Why is it Pending: the cluster's own pending member, one of four.
        "place-pending             | 1 | place --policy " + R + "gang/policy.yaml --cluster " + R + "gang/nodes.yaml --cluster " + R + "gang/bert-worker.yaml",
        // Why is it Pending on ACK: only nodes whose allocatable offers the resource asked (the extender's own eligibility).
        "place-allocatable         | 1 | place --cluster " + R + "cli/cluster-allocatable.yaml --cluster " + R + "cli/pending-whole-gpus.yaml",
        "place-no-room             | 1 | place --policy " + R + "gang/policy.yaml --cluster " + R + "gang/nodes.yaml -f " + R + "cli/statefulset-topology-4x8.yaml",
        // Unhealthy GPUs (kube-system ConfigMap), NVLink pairs on a DGX-1, binpack of a share.
        "place-placement-fixtures  | 0 | place --policy " + R + "placement/policy-dgx1.yaml --cluster " + R + "placement/nodes.yaml --cluster " + R
            + "placement/unhealthy-gpu-gpu-share-b.yaml -f " + R + "placement/pod-whole-2.yaml -f " + R + "placement/pod-share-8g.yaml -f " + R
            + "placement/pod-topology-4.yaml",
        "policy-check-valid        | 0 | policy check server/src/main/resources/policy.yaml manifests/base/policy-configmap.yaml " + R + "gang/policy.yaml " + R
            + "placement/policy-dgx1.yaml",
        "policy-check-invalid      | 1 | policy check " + R + "cli/policy-configmap-invalid.yaml",
        "policy-check-invalid-json | 1 | policy check -o json " + R + "cli/policy-configmap-invalid.yaml",
      })
  void writesTheExpectedOutput(String expected, int exitCode, String args) {
    var run = CommandRun.of(factory, args.trim().split(" +"));

    assertThat(run.stderr()).isEmpty();
    assertThat(run.stdout()).isEqualTo(Fixtures.text(Fixtures.path("cli/expected/" + expected.trim() + ".txt")));
    assertThat(run.exitCode()).isEqualTo(exitCode);
  }

  /**
   * Each {@code $ kubectl gpu-admission ...} block of docs/cli.md, run with its arguments as
   * written: stdout is the lines shown, where a line {@code ...} stands for any lines left out.
   */
  @Test
  void theExamplesOfDocsCliAreWhatTheCommandsPrint() throws Exception {
    var prompt = "$ kubectl gpu-admission ";
    var checked = 0;
    for (var block : io.gpuadmission.docs.DocPages.codeBlocks(Files.readString(Path.of("docs/cli.md")))) {
      var lines = block.lines().toList();
      var commands = lines.stream().filter(l -> l.startsWith("$ ")).toList();
      if (commands.isEmpty()) {
        continue;
      }
      assertThat(commands).as("one command per example, the one the reader runs").hasSize(1);
      assertThat(lines.get(0)).startsWith(prompt);
      var run = CommandRun.of(factory, lines.get(0).substring(prompt.length()).trim().split(" +"));
      var shown = new StringBuilder("(?s)");
      for (var line : lines.subList(1, lines.size())) {
        shown.append(line.strip().equals("...") ? "(?:[^\\n]*\\n)*?" : Pattern.quote(line + "\n"));
      }
      assertThat(run.stderr()).as(lines.get(0)).isEmpty();
      assertThat(run.stdout()).as(lines.get(0)).matches(shown.toString());
      checked++;
    }
    assertThat(checked).isEqualTo(2);
  }

  @Test
  void badInputIsOneLinePerProblemAndTheRestIsStillJudged() {
    var run =
        CommandRun.of(
            factory, "explain", "-f", R + "cli/bad-document.yaml", "-f", R + "cli/not-objects.yaml", "-f", R + "cli/missing.yaml");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.stdout()).isEqualTo(Fixtures.text(Fixtures.path("cli/expected/explain-bad-input.txt")));
    assertThat(run.stderr())
        .isEqualTo(
            """
            gpu-admission: bad input: server/src/test/resources/cli/bad-document.yaml, document 2, line 16: while parsing a flow sequence: expected ',' or ']', but got <stream end>
            gpu-admission: bad input: server/src/test/resources/cli/not-objects.yaml, document 1 (line 2): kind not set: not a Kubernetes object
            gpu-admission: bad input: server/src/test/resources/cli/not-objects.yaml, document 2 (line 6): an array, not a Kubernetes object
            gpu-admission: bad input: server/src/test/resources/cli/not-objects.yaml, document 3 (line 9), items[0]: apiVersion not set: not a Kubernetes object
            gpu-admission: bad input: server/src/test/resources/cli/missing.yaml: no such file or directory
            """);
  }

  @Test
  void aManifestPodTheClusterHasAlreadyIsNotASecondGangMember() {
    // The cluster's pending bert-worker-0, and the manifests of all four members: apply creates three.
    var run = CommandRun.of(factory, "place", "--policy", R + "gang/policy.yaml", "--cluster", R + "gang/nodes.yaml", "--cluster", R + "gang/bert-worker.yaml",
        "-f", R + "cli/bert-gang.yaml");

    assertThat(run.stderr())
        .isEqualTo("gpu-admission: note: " + R + "cli/bert-gang.yaml#1: pod ml/bert-worker-0 exists already (in the cluster or earlier in the input);"
            + " kubectl apply would update it, not create another: placed once\n");
    assertThat(run.stdout()).isEqualTo(Fixtures.text(Fixtures.path("cli/expected/place-pending-with-manifests.txt")));
    assertThat(run.exitCode()).isZero();
  }

  @Test
  void aBinaryFileIsSaidToBeNoTextWithTheOffsetOfItsFirstBadByte() throws Exception {
    var dir = Files.createTempDirectory("binary");
    // A PNG's signature: byte 0 (0x89) starts no UTF-8 character.
    var image = Files.write(dir.resolve("logo.yaml"), new byte[] {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'});
    var zeros = Files.write(dir.resolve("zeros.json"), new byte[] {'{', 0, 0, '}'});
    var policy = Files.write(dir.resolve("policy.yaml"), new byte[] {'v', 'e', 'r', (byte) 0xc3});

    var explain = CommandRun.of(factory, "explain", "-f", image.toString(), "-f", zeros.toString());
    var fromStdin = CommandRun.withStdin(factory, "\u0000", "explain", "-f", "-");
    var check = CommandRun.of(factory, "policy", "check", policy.toString());

    assertThat(explain.exitCode()).isEqualTo(2);
    assertThat(explain.stderr())
        .isEqualTo("gpu-admission: bad input: " + image + ": not UTF-8 text (byte 0 is not UTF-8; a binary file?)\n"
            + "gpu-admission: bad input: " + zeros + ": not text (byte 1 is NUL; a binary file?)\n");
    assertThat(fromStdin.exitCode()).isEqualTo(2);
    assertThat(fromStdin.stderr()).isEqualTo("gpu-admission: bad input: stdin: not text (byte 0 is NUL; a binary file?)\n");
    assertThat(check.exitCode()).isEqualTo(2);
    assertThat(check.stderr()).isEqualTo("gpu-admission: bad input: " + policy + ": not UTF-8 text (byte 3 is not UTF-8; a binary file?)\n");
  }

  @Test
  void theMutatedPodIsTheMutationFixturesExpectedPod() {
    var run = CommandRun.of(factory, "explain", "-o", "yaml", "-f", R + "mutation/pytorch-dist-nccl-worker/pod.yaml");

    assertThat(run.exitCode()).isZero();
    assertThat(Fixtures.canonicalPod(Fixtures.yamlTreeOf(run.stdout())))
        .isEqualTo(Fixtures.podJson(Fixtures.path("mutation/pytorch-dist-nccl-worker/expected.yaml")));
  }

  @Test
  void readsStdinAsKubectlDoes() throws Exception {
    var pod = Files.readString(Path.of(R + "mutation/pytorch-dist-nccl-worker/pod.yaml"));
    var fromFile = CommandRun.of(factory, "explain", "-o", "json", "-f", R + "mutation/pytorch-dist-nccl-worker/pod.yaml");

    var fromStdin = CommandRun.withStdin(factory, pod, "explain", "-o", "json", "-f", "-");

    assertThat(fromStdin.exitCode()).isZero();
    assertThat(fromStdin.stdout()).isEqualTo(fromFile.stdout().replace(R + "mutation/pytorch-dist-nccl-worker/pod.yaml", "stdin"));
  }

  @Test
  void aPolicyFileThatIsNotValidIsBadInputForTheOtherCommands() {
    var run = CommandRun.of(factory, "explain", "--policy", R + "cli/policy-configmap-invalid.yaml", "-f", R + "workloads/pytorchjob-consistent.yaml");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.stdout()).isEmpty();
    assertThat(run.stderr())
        .isEqualTo(
            """
            gpu-admission: bad input: server/src/test/resources/cli/policy-configmap-invalid.yaml:12: policy is not valid: topology.hostIpc: unknown key; known keys here: ackAnnotations, allowedNamespaces, dnsPolicy, hostIPC, hostNetwork, hostPID, jobLabel, onConflict, pool, replicaLabel, requireNVLink, resourceName, wholeGpuResource
            gpu-admission: bad input: server/src/test/resources/cli/policy-configmap-invalid.yaml:13: policy is not valid: topology.allowedNamespaces[1]: "Team_A" is not a valid namespace name
            gpu-admission: bad input: server/src/test/resources/cli/policy-configmap-invalid.yaml:15: policy is not valid: cpuPods.keepOffGpuNodes: expected true or false
            gpu-admission: bad input: server/src/test/resources/cli/policy-configmap-invalid.yaml:17: policy is not valid: gpuModel.memoryTolerancePercent: 80 must be between 0 and 50
            """);
  }

  @Test
  void placeNeedsTheClusterAndExplainNeedsManifests() {
    var place = CommandRun.of(factory, "place", "-f", R + "workloads/pytorchjob-consistent.yaml");
    var explain = CommandRun.of(factory, "explain");
    var missing = CommandRun.of(factory, "policy", "check", R + "cli/missing-policy.yaml");

    assertThat(place.exitCode()).isEqualTo(2);
    assertThat(place.stderr())
        .isEqualTo("gpu-admission: bad input: place needs the cluster: --cluster FILE|DIR (kubectl get nodes,pods -A -o yaml > cluster.yaml)\n");
    assertThat(explain.exitCode()).isEqualTo(2);
    assertThat(explain.stderr()).isEqualTo("gpu-admission: bad input: explain needs manifests: -f FILE|DIR|-\n");
    assertThat(missing.exitCode()).isEqualTo(2);
    assertThat(missing.stderr()).isEqualTo("gpu-admission: bad input: server/src/test/resources/cli/missing-policy.yaml: no such file or directory\n");
  }

  @Test
  void aClusterFileOfOtherKindsIsSaidOnStderrAndAnUnreadablePodIsBadInput() throws Exception {
    var mixed = Files.createTempFile("cluster", ".yaml");
    Files.writeString(
        mixed,
        """
        apiVersion: v1
        kind: Service
        metadata: {name: web}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: odd}
        spec: {containers: 5}
        """);
    var run = CommandRun.of(factory, "place", "--cluster", mixed.toString());

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.stderr())
        .startsWith("gpu-admission: bad input: --cluster " + mixed + ", document 2 (line 5): Pod \"odd\" does not read as one: ");
  }

  @Test
  void aClusterNodeWhoseQuantityIsNoQuantityIsBadInputNamingTheNodeAndField() throws Exception {
    var nodes = Files.createTempFile("cluster", ".yaml");
    Files.writeString(
        nodes,
        """
        apiVersion: v1
        kind: Node
        metadata: {name: gpu-a}
        status:
          allocatable: {aliyun.com/gpu: lots}
        """);
    var run = CommandRun.of(factory, "place", "--cluster", nodes.toString(), "-f", R + "placement/pod-whole-2.yaml");

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.stderr()).isEqualTo("gpu-admission: bad input: --cluster " + nodes + ", document 1 (line 1): Node \"gpu-a\": status.allocatable"
        + "[\"aliyun.com/gpu\"] is \"lots\", not a quantity (a quantity is a number with an optional suffix, such as 2, 500m, 16Gi or 1e3)\n");
  }

  @Test
  void aPodFieldOfTheWrongTypeIsBadInputNamingTheField() throws Exception {
    var pod = Files.createTempFile("pod", ".yaml");
    Files.writeString(
        pod,
        """
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          hostIPC: "yes"
          containers: [{name: c, image: busybox}]
        """);
    var run = CommandRun.of(factory, "explain", "-f", pod.toString());

    assertThat(run.exitCode()).isEqualTo(2);
    assertThat(run.stderr()).isEqualTo("gpu-admission: bad input: " + pod + ", document 1 (line 1): Pod \"p\": spec.hostIPC: expected true or"
        + " false, got the string \"yes\"\n");
  }
}
