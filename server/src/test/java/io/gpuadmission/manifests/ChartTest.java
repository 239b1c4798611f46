package io.gpuadmission.manifests;

import static io.gpuadmission.manifests.RenderedObjects.deployment;
import static io.gpuadmission.manifests.RenderedObjects.env;
import static io.gpuadmission.manifests.RenderedObjects.find;
import static io.gpuadmission.manifests.RenderedObjects.has;
import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MutatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.Role;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** charts/gpu-admission beyond what kustomize also renders: lint, schema, values, hooks. */
class ChartTest {
  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "",
        "certificates.mode=cert-manager,scheduler.enabled=true,monitoring.enabled=true,nodeAgent.enabled=true,controlPlane.enabled=true",
        "certificates.mode=secret,certificates.caBundle=Y2E=,networkPolicy.enabled=true,networkPolicy.apiServerCIDRs={10.0.0.5/32},namespace.create=true"
      })
  void lintsStrictlyClean(String values) throws Exception {
    var command = new java.util.ArrayList<>(List.of(Chart.helm(), "lint", "--strict", Chart.DIR.toString(), "--namespace", Chart.NAMESPACE));
    if (!values.isEmpty()) {
      command.addAll(List.of("--set", values));
    }
    var result = Chart.run(command);
    assertThat(result.exit()).as("%s%n%s", result.output(), result.error()).isZero();
    assertThat(result.output()).contains("1 chart(s) linted, 0 chart(s) failed").doesNotContain("[WARNING]", "[ERROR]");
  }

  /** helm install ./charts/gpu-admission runs the image this checkout builds. */
  @Test
  void chartVersionAndAppVersionAreTheProjectVersion() throws Exception {
    var pom = Files.readString(Path.of("pom.xml"));
    var matcher = Pattern.compile("<artifactId>gpu-admission-parent</artifactId>\\s*<version>([^<]+)</version>").matcher(pom);
    assertThat(matcher.find()).isTrue();
    var version = matcher.group(1);
    var chart = Chart.file("Chart.yaml");
    assertThat(chart).contains("\nversion: " + version + "\n").contains("\nappVersion: " + version + "\n");
    var container = deployment(Overlays.objects(Chart.template(List.of())), "gpu-admission").getSpec().getTemplate().getSpec().getContainers().get(0);
    assertThat(container.getImage()).isEqualTo("gpu-admission/gpu-admission:" + version);
  }

  /** What the build publishes (.mvn/helm-package.sh) renders what the chart directory renders. */
  @Test
  void packagedChartCarriesTheManifestsAndTheProjectVersion(@org.junit.jupiter.api.io.TempDir Path out) throws Exception {
    var packaged = Chart.run(List.of("bash", ".mvn/helm-package.sh", "7.8.9", out.toString()));
    assertThat(packaged.exit()).as(packaged.error()).isZero();
    var archive = out.resolve("gpu-admission-7.8.9.tgz");
    assertThat(archive).exists();

    var fromArchive = Chart.run(List.of(Chart.helm(), "template", Chart.RELEASE, archive.toString(), "--namespace", Chart.NAMESPACE, "--set", "scheduler.enabled=true"));
    assertThat(fromArchive.exit()).as(fromArchive.error()).isZero();
    var objects = Overlays.objects(fromArchive.output());
    assertThat(deployment(objects, "gpu-admission").getSpec().getTemplate().getSpec().getContainers().get(0).getImage())
        .isEqualTo("gpu-admission/gpu-admission:7.8.9");
    var directory = Overlays.objects(Chart.template(List.of("scheduler.enabled=true", "image.tag=7.8.9")));
    assertThat(objects.stream().filter(o -> !o.getMetadata().getAnnotations().containsKey("helm.sh/hook")).toList())
        .containsExactlyInAnyOrderElementsOf(directory);
  }

  @Test
  void mistypedValuesFailNamingTheirKeys() throws Exception {
    var result = Chart.templateResult(List.of("replicas=two", "monitoring.enable=true", "certificates.mode=certmanager", "networkPolicy.apiServerCIDRs={10.0.0.5}"));

    assertThat(result.exit()).isNotZero();
    assertThat(result.error())
        .contains("- replicas: Invalid type. Expected: integer, given: string")
        .contains("- monitoring: Additional property enable is not allowed")
        .contains("- certificates.mode: certificates.mode must be one of the following: \"self-managed\", \"cert-manager\", \"secret\"")
        .contains("- networkPolicy.apiServerCIDRs.0: Does not match pattern");
  }

  @Test
  void theSecondSchedulerNeedsAPolicyThatSendsGpuPodsToIt() throws Exception {
    var none = Chart.templateResult(List.of("scheduler.enabled=true", "policy=allocator:\n  memoryShare: binpack\n"));
    var other = Chart.templateResult(List.of("scheduler.enabled=true", "policy=scheduling:\n  schedulerName: volcano\n"));

    assertThat(none.exit()).isNotZero();
    assertThat(none.error()).contains("policy: with scheduler.enabled, scheduling.schedulerName must be gpu-scheduler, the scheduler this chart"
        + " installs (it is \"\"): otherwise no GPU pod reaches it");
    assertThat(other.error()).contains("(it is \"volcano\")");
    assertThat(Chart.templateResult(List.of("scheduler.enabled=true", "policy=scheduling:\n  schedulerName: gpu-scheduler\n")).exit()).isZero();
  }

  @Test
  void hookAndTestObjectsCarryTheCommonLabelsAndTheAgentItsServeValue() throws Exception {
    var hooks = Overlays.objects(String.join("\n---\n", Chart.hooks(List.of("commonLabels.owner=gpu-team"))));
    var objects = Overlays.objects(Chart.template(List.of("nodeAgent.enabled=true", "nodeAgent.devicePlugin.serve=never")));

    assertThat(hooks).hasSize(9).allSatisfy(h -> assertThat(h.getMetadata().getLabels()).containsEntry("owner", "gpu-team"));
    var agent = (io.fabric8.kubernetes.api.model.apps.DaemonSet) find(objects, "DaemonSet", "gpu-admission-node", "gpu-admission-node-agent");
    assertThat(env(agent.getSpec().getTemplate().getSpec().getContainers().get(0), "GPU_ADMISSION_NODE_AGENT_DEVICE_PLUGIN_SERVE")).isEqualTo("never");
  }

  /** Nothing on stderr: Helm warns of a symbolic link in the chart, of a deprecated API, on every command. */
  @Test
  void helmPrintsNoWarning() throws Exception {
    var template = Chart.run(List.of(Chart.helm(), "template", Chart.RELEASE, Chart.DIR.toString(), "--namespace", "gpu-system",
        "--set", "scheduler.enabled=true,monitoring.enabled=true,nodeAgent.enabled=true,controlPlane.enabled=true"));
    var lint = Chart.run(List.of(Chart.helm(), "lint", Chart.DIR.toString(), "--namespace", "gpu-system"));

    assertThat(template.exit()).isZero();
    assertThat(template.error()).isEmpty();
    assertThat(lint.error()).isEmpty();
    try (var files = Files.walk(Chart.DIR)) {
      assertThat(files.filter(Files::isSymbolicLink).toList()).isEmpty();
    }
  }

  @Test
  void valuesSetTheWebhookPod() throws Exception {
    var objects = Overlays.objects(Chart.template(List.of(
        "replicas=3", "image.repository=registry.example/gpu-admission", "image.tag=1.2.3", "image.pullPolicy=Always",
        "resources.requests.cpu=500m", "resources.limits.memory=512Mi", "jvmOptions=-Xmx192m",
        "tolerations[0].key=gpu", "tolerations[0].operator=Exists", "nodeSelector.pool=system",
        "priorityClassName=system-cluster-critical", "imagePullSecrets[0].name=registry",
        "podLabels.team=platform", "podAnnotations.note=x", "commonLabels.owner=gpu-team", "commonAnnotations.ticket=T-1",
        "nodeAgent.enabled=true")));

    var webhook = deployment(objects, "gpu-admission");
    var pod = webhook.getSpec().getTemplate();
    var container = pod.getSpec().getContainers().get(0);
    assertThat(webhook.getSpec().getReplicas()).isEqualTo(3);
    assertThat(container.getImage()).isEqualTo("registry.example/gpu-admission:1.2.3");
    assertThat(container.getImagePullPolicy()).isEqualTo("Always");
    assertThat(container.getResources().getRequests()).isEqualTo(Map.of("cpu", new Quantity("500m")));
    assertThat(container.getResources().getLimits()).isEqualTo(Map.of("memory", new Quantity("512Mi")));
    assertThat(env(container, "JAVA_OPTS_APPEND")).isEqualTo("-Xmx192m");
    assertThat(pod.getSpec().getTolerations()).extracting(t -> t.getKey() + " " + t.getOperator()).containsExactly("gpu Exists");
    assertThat(pod.getSpec().getNodeSelector()).isEqualTo(Map.of("pool", "system"));
    assertThat(pod.getSpec().getPriorityClassName()).isEqualTo("system-cluster-critical");
    assertThat(pod.getSpec().getImagePullSecrets()).extracting(s -> s.getName()).containsExactly("registry");
    assertThat(pod.getMetadata().getLabels()).isEqualTo(Map.of("app.kubernetes.io/name", "gpu-admission", "team", "platform"));
    assertThat(pod.getMetadata().getAnnotations()).containsEntry("note", "x").containsEntry("prometheus.io/scrape", "true");
    assertThat(webhook.getSpec().getSelector().getMatchLabels()).isEqualTo(Map.of("app.kubernetes.io/name", "gpu-admission"));
    assertThat(objects).allSatisfy(o -> {
      assertThat(o.getMetadata().getLabels()).containsEntry("owner", "gpu-team");
      assertThat(o.getMetadata().getAnnotations()).containsEntry("ticket", "T-1");
    });
    var agent = (io.fabric8.kubernetes.api.model.apps.DaemonSet) find(objects, "DaemonSet", "gpu-admission-node", "gpu-admission-node-agent");
    assertThat(agent.getSpec().getTemplate().getSpec().getContainers()).extracting(c -> c.getImage()).containsOnly("registry.example/gpu-admission:1.2.3");
    assertThat(RestrictedProfile.violations(pod.getSpec())).isEmpty();
  }

  /**
   * One replica (a one-node cluster): stopped, then started again (Recreate), so that helm --wait
   * waits for a Ready pod and going down from two replicas does not leave the successor Pending
   * beside the old replicas' anti-affinity; no anti-affinity and no budget that would block every
   * drain of its node. Two or more: kept apart, replaced one at a time, a budget keeps one.
   */
  @Test
  void oneReplicaIsRecreatedAndHasNoBudgetToBlockADrain() throws Exception {
    var one = Overlays.objects(Chart.template(List.of("replicas=1")));
    var single = deployment(one, "gpu-admission").getSpec();
    assertThat(single.getStrategy().getType()).isEqualTo("Recreate");
    assertThat(single.getStrategy().getRollingUpdate()).isNull();
    assertThat(single.getTemplate().getSpec().getAffinity()).isNull();
    assertThat(one).extracting(HasMetadata::getKind).doesNotContain("PodDisruptionBudget");

    var two = Overlays.objects(Chart.template(List.of()));
    var pair = deployment(two, "gpu-admission").getSpec();
    assertThat(pair.getStrategy().getType()).isEqualTo("RollingUpdate");
    assertThat(pair.getStrategy().getRollingUpdate()).extracting(r -> r.getMaxSurge().getIntVal(), r -> r.getMaxUnavailable().getIntVal())
        .containsExactly(0, 1);
    assertThat(pair.getTemplate().getSpec().getAffinity().getPodAntiAffinity().getRequiredDuringSchedulingIgnoredDuringExecution()).hasSize(1);
    assertThat(find(two, "PodDisruptionBudget", Chart.NAMESPACE, "gpu-admission")).isNotNull();
  }

  /**
   * The rendering docs/install.md gives kubectl: no hook and no test (kubectl would run the
   * uninstall hook at once, deleting the webhook configurations), the CRD of crds/ included.
   */
  @Test
  void theRenderingForKubectlHasNoHookOrTestAndTheCrd() throws Exception {
    var rendered = Chart.templateResult(List.of("namespace.create=true"), "--no-hooks", "--skip-tests", "--include-crds");
    assertThat(rendered.exit()).as(rendered.error()).isZero();
    assertThat(rendered.output()).doesNotContain("helm.sh/hook");
    var objects = Overlays.objects(rendered.output());
    assertThat(objects).extracting(HasMetadata::getKind).doesNotContain("Job").contains("CustomResourceDefinition", "Namespace",
        "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration");
    assertThat(objects).filteredOn(o -> o.getKind().equals("Pod")).isEmpty();
    var install = java.nio.file.Files.readString(java.nio.file.Path.of("docs/install.md"));
    assertThat(install).contains("helm template gpu-admission charts/gpu-admission --no-hooks --skip-tests\n--include-crds --set namespace.create=true | kubectl apply -f -");
  }

  /** secret mode: cert-manager's Deployment and RBAC, without cert-manager, and the CA from values. */
  @Test
  void providedSecretServesTheCertificateWithTheValuesCaInTheWebhooks() throws Exception {
    var objects = Overlays.objects(Chart.template(List.of("certificates.mode=secret", "certificates.caBundle=Q0EgUEVN")));
    var certManager = Overlays.renderObjects("manifests/cert-manager");

    assertThat(deployment(objects, "gpu-admission")).isEqualTo(deployment(certManager, "gpu-admission"));
    assertThat(RenderedObjects.webhookClientConfigs(objects)).hasSize(6).allSatisfy(c -> assertThat(c.getCaBundle()).isEqualTo("Q0EgUEVN"));
    assertThat(objects).noneMatch(o -> o.getMetadata().getName().equals("gpu-admission-certificates"));
    assertThat(objects).noneMatch(o -> o.getKind().equals("Certificate") || o.getKind().equals("Issuer"));
    assertThat(((MutatingWebhookConfiguration) find(objects, "MutatingWebhookConfiguration", null, "gpu-admission")).getMetadata().getAnnotations()).isNullOrEmpty();

    var missing = Chart.templateResult(List.of("certificates.mode=secret"));
    assertThat(missing.exit()).isNotZero();
    assertThat(missing.error()).contains("certificates.caBundle: with certificates.mode secret, give the CA that signed Secret gpu-admission-tls");
  }

  /**
   * helm uninstall deletes kinds it does not know (webhook configurations) after the Service and
   * the Deployment: the pre-delete hook deletes the webhook configurations first, with a grant for
   * nothing else, from a pod Pod Security restricted admits.
   */
  @Test
  void preDeleteHookRemovesTheWebhookConfigurationsFirstWithJustThatRight() throws Exception {
    var hooks = Overlays.objects(String.join("\n---\n", Chart.hooks(List.of(), "--skip-tests")));
    var install = Overlays.objects(Chart.template(List.of()));

    assertThat(hooks).allSatisfy(h -> assertThat(h.getMetadata().getAnnotations())
        .containsEntry("helm.sh/hook", "pre-delete").containsEntry("helm.sh/hook-delete-policy", "before-hook-creation,hook-succeeded"));
    var job = (Job) find(hooks, "Job", "gpu-admission", "gpu-admission-uninstall");
    var pod = job.getSpec().getTemplate().getSpec();
    assertThat(pod.getContainers().get(0).getArgs())
        .containsExactly("delete", "mutatingwebhookconfiguration,validatingwebhookconfiguration", "gpu-admission", "--ignore-not-found", "--wait=false");
    assertThat(has(install, "MutatingWebhookConfiguration", null, "gpu-admission")).isTrue();
    assertThat(has(install, "ValidatingWebhookConfiguration", null, "gpu-admission")).isTrue();
    assertThat(RestrictedProfile.violations(pod)).isEmpty();
    assertThat(Integer.parseInt(job.getMetadata().getAnnotations().get("helm.sh/hook-weight")))
        .isGreaterThan(Integer.parseInt(find(hooks, "ClusterRoleBinding", null, "gpu-admission-uninstall").getMetadata().getAnnotations().get("helm.sh/hook-weight")));
    var grants = RbacGrant.of(hooks, "gpu-admission", "gpu-admission-uninstall");
    assertThat(grants).extracting(Object::toString).hasSize(2);
    assertThat(((ClusterRole) find(hooks, "ClusterRole", null, "gpu-admission-uninstall")).getRules())
        .extracting(r -> r.getApiGroups() + " " + r.getResources() + " " + r.getResourceNames() + " " + r.getVerbs())
        .containsExactly("[admissionregistration.k8s.io] [mutatingwebhookconfigurations, validatingwebhookconfigurations] [gpu-admission] [delete]");
  }

  /**
   * Where every node is tainted, or the registry is a mirror, the hooks' pods run as the webhook's
   * do: its tolerations, node selector and pull secrets, the values' kubectl image.
   */
  @Test
  void hookPodsRunWhereTheChartRuns() throws Exception {
    var hooks = Overlays.objects(String.join("\n---\n", Chart.hooks(List.of(
        "tolerations[0].key=dedicated", "tolerations[0].operator=Exists", "nodeSelector.pool=system", "imagePullSecrets[0].name=mirror",
        "kubectlImage.repository=mirror.example/kubectl", "kubectlImage.tag=v1.33.1", "kubectlImage.pullPolicy=IfNotPresent"))));
    var job = (Job) find(hooks, "Job", "gpu-admission", "gpu-admission-uninstall");
    var probe = (Pod) find(hooks, "Pod", "gpu-admission", "gpu-admission-test");

    for (var pod : List.of(job.getSpec().getTemplate().getSpec(), probe.getSpec())) {
      // The values' tolerations, and every NoSchedule taint besides (a hook that finds no node blocks helm uninstall).
      assertThat(pod.getTolerations()).extracting(t -> t.getKey() + " " + t.getOperator() + " " + t.getEffect())
          .containsExactly("dedicated Exists null", "null Exists NoSchedule");
      assertThat(pod.getNodeSelector()).isEqualTo(Map.of("pool", "system"));
      assertThat(pod.getImagePullSecrets()).extracting(s -> s.getName()).containsExactly("mirror");
      assertThat(pod.getContainers()).extracting(c -> c.getImage() + " " + c.getImagePullPolicy()).containsExactly("mirror.example/kubectl:v1.33.1 IfNotPresent");
      assertThat(pod.getEnableServiceLinks()).isFalse();
    }
    var defaults = (Job) find(Overlays.objects(String.join("\n---\n", Chart.hooks(List.of()))), "Job", "gpu-admission", "gpu-admission-uninstall");
    assertThat(defaults.getSpec().getTemplate().getSpec().getContainers().get(0).getImage()).isEqualTo("registry.k8s.io/kubectl:v1.32.0");
    assertThat(defaults.getSpec().getTemplate().getSpec().getTolerations()).extracting(t -> t.getKey() + " " + t.getOperator() + " " + t.getEffect())
        .containsExactly("null Exists NoSchedule");
    // One that cannot run fails before Helm's own 5-minute timeout, so helm uninstall says the hook failed.
    assertThat(defaults.getSpec().getActiveDeadlineSeconds()).isEqualTo(120L);
  }

  /**
   * helm test leaves nothing when it passes (Helm deletes every hook-succeeded object); a failed
   * test's objects are replaced by the next run (before-hook-creation).
   */
  @Test
  void helmTestObjectsAreDeletedOnceItHasRun() throws Exception {
    var tests = Overlays.objects(String.join("\n---\n", Chart.hooks(List.of("tests.namespace=ml")).stream().filter(d -> d.contains("helm.sh/hook: test")).toList()));

    assertThat(tests).extracting(o -> o.getKind() + " " + o.getMetadata().getNamespace())
        .containsExactlyInAnyOrder("ServiceAccount gpu-admission", "ConfigMap gpu-admission", "Role ml", "RoleBinding ml", "Pod gpu-admission");
    assertThat(tests).allSatisfy(o -> assertThat(o.getMetadata().getAnnotations()).containsEntry("helm.sh/hook-delete-policy", "before-hook-creation,hook-succeeded"));
    var probeWeight = Integer.parseInt(find(tests, "Pod", "gpu-admission", "gpu-admission-test").getMetadata().getAnnotations().get("helm.sh/hook-weight"));
    assertThat(tests.stream().filter(o -> !o.getKind().equals("Pod")))
        .allSatisfy(o -> assertThat(Integer.parseInt(o.getMetadata().getAnnotations().get("helm.sh/hook-weight"))).isLessThan(probeWeight));
  }

  /** helm test: a GPU pod the webhook must see, created with --dry-run=server, must come back mutated. */
  @Test
  void helmTestDryRunCreatesAGpuPodTheWebhookMutates() throws Exception {
    var documents = Chart.hooks(List.of("tests.namespace=ml"));
    var tests = Overlays.objects(String.join("\n---\n", documents.stream().filter(d -> d.contains("helm.sh/hook: test")).toList()));
    var install = Overlays.objects(Chart.template(List.of()));

    var probe = (Pod) find(tests, "Pod", "gpu-admission", "gpu-admission-test");
    assertThat(probe.getSpec().getContainers().get(0).getArgs())
        .containsExactly("create", "--dry-run=server", "-f", "/etc/gpu-admission-test/pod.yaml", "-o",
            "jsonpath={.metadata.annotations.gpu-admission\\.io/mutated}", "--allow-missing-template-keys=false");
    assertThat(RestrictedProfile.violations(probe.getSpec())).isEmpty();
    var gpuPod = (Pod) Overlays.objects(((ConfigMap) find(tests, "ConfigMap", "gpu-admission", "gpu-admission-test")).getData().get("pod.yaml")).get(0);
    assertThat(gpuPod.getMetadata().getNamespace()).isEqualTo("ml");
    assertThat(gpuPod.getSpec().getContainers().get(0).getResources().getLimits()).containsOnlyKeys("aliyun.com/gpu-mem");
    var policy = ((ConfigMap) find(install, "ConfigMap", "gpu-admission", "gpu-admission-policy")).getData().get("policy.yaml");
    assertThat(io.gpuadmission.policy.PolicyParser.parse(policy).exemptNamespaces()).doesNotContain("ml");
    assertThat(io.gpuadmission.policy.PolicyParser.parse(policy).gpuResources()).contains("aliyun.com/gpu-mem");
    var role = (Role) find(tests, "Role", "ml", "gpu-admission-test");
    assertThat(role.getRules()).extracting(r -> r.getResources() + " " + r.getVerbs()).containsExactly("[pods] [create]");
  }

  /**
   * The install notes print the control-plane stanza itself (the chart's file that manifests/control-plane copies), and what
   * uninstall leaves with the command that removes it. helm
   * install --dry-run needs a cluster: the notes are rendered here by a copy of the chart that
   * renders NOTES.txt into a ConfigMap with tpl.
   */
  @Test
  void notesPrintTheControlPlaneStanzaAndWhatUninstallLeaves() throws Exception {
    var notes = notes(List.of("controlPlane.enabled=true"));
    for (var line : Chart.file("files/kube-scheduler-config.yaml").split("\n")) {
      assertThat(notes).contains(line.isBlank() ? "" : "  " + line);
    }
    assertThat(notes).contains("""
        hook), then the rest. It leaves what is made at run time (Secrets gpu-admission-tls, gpu-scheduler-client;
        Leases gpu-admission-placement) and the namespace:
          kubectl -n gpu-admission delete secret gpu-admission-tls gpu-scheduler-client --ignore-not-found
          kubectl -n gpu-admission delete lease gpu-admission-placement --ignore-not-found
          kubectl delete namespace gpu-admission    # once nothing else lives there
        The ElasticQuotaTree CRD stays (Helm never deletes a CRD). Where the chart installed it and nothing else uses it:
          kubectl delete crd elasticquotatrees.scheduling.sigs.k8s.io    # deletes every quota tree with it
        """);
    assertThat(notes(List.of("certificates.mode=cert-manager", "scheduler.enabled=true", "namespace.create=true"))).doesNotContain("extenders:", "delete namespace")
        .contains("(Secrets gpu-admission-ca, gpu-admission-tls, gpu-scheduler-client;\nLeases gpu-admission-placement, gpu-scheduler):");
  }

  private static String notes(List<String> values) throws Exception {
    var copy = Path.of("target", "chart-notes").toAbsolutePath();
    if (Files.exists(copy)) {
      try (var walk = Files.walk(copy)) {
        walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    var source = Chart.DIR.toAbsolutePath();
    Files.createDirectories(copy.resolve("templates"));
    for (var name : List.of("Chart.yaml", "values.yaml", "values.schema.json")) {
      Files.createSymbolicLink(copy.resolve(name), source.resolve(name));
    }
    Files.createSymbolicLink(copy.resolve("files"), source.resolve("files"));
    try (var templates = Files.list(source.resolve("templates"))) {
      for (var template : templates.filter(t -> t.getFileName().toString().startsWith("_")).toList()) {
        Files.createSymbolicLink(copy.resolve("templates").resolve(template.getFileName()), template);
      }
    }
    Files.copy(source.resolve("templates/NOTES.txt"), copy.resolve("notes.txt"));
    Files.writeString(copy.resolve("templates/notes.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\ndata:\n  notes: {{ tpl (.Files.Get \"notes.txt\") . | quote }}\n");
    var command = new java.util.ArrayList<>(List.of(Chart.helm(), "template", Chart.RELEASE, copy.toString(), "--namespace", Chart.NAMESPACE));
    values.forEach(v -> command.addAll(List.of("--set", v)));
    var result = Chart.run(command);
    assertThat(result.exit()).as(result.error()).isZero();
    return ((ConfigMap) Overlays.objects(result.output()).get(0)).getData().get("notes");
  }
}
