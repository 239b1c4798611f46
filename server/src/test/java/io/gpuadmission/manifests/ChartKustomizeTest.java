package io.gpuadmission.manifests;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The chart's kustomize (templates/_kustomize.tpl) on kustomizations made here, shaped like the
 * changes manifests/ is likely to get (a patch adding a mount and an env entry to a container, a
 * JSON patch appending to a list, a deleted object, a generated ConfigMap): it gives what
 * kubectl kustomize gives, and refuses what it cannot do rather than drop it.
 */
class ChartKustomizeTest {
  @TempDir Path dir;

  private static final String DEPLOYMENT =
      """
      apiVersion: apps/v1
      kind: Deployment
      metadata: {name: app, namespace: ns}
      spec:
        template:
          spec:
            containers:
            - name: main
              image: app:1
              env:
              - {name: A, value: "1"}
              volumeMounts:
              - {name: tmp, mountPath: /tmp}
            - name: side
              image: side:1
            volumes:
            - name: tmp
              emptyDir: {}
      ---
      apiVersion: v1
      kind: ServiceAccount
      metadata: {name: gone, namespace: ns}
      ---
      apiVersion: admissionregistration.k8s.io/v1
      kind: ValidatingWebhookConfiguration
      metadata: {name: app}
      webhooks:
      - name: a.example.io
        sideEffects: None
        admissionReviewVersions: [v1]
        clientConfig: {service: {name: app, namespace: ns}}
        rules:
        - {operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}
      """;

  @Test
  void patchesAndGeneratorsComeOutAsKustomizeMakesThem() throws Exception {
    write("objects.yaml", DEPLOYMENT);
    write("client-cert.yaml",
        """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: app, namespace: ns}
        spec:
          template:
            spec:
              containers:
              - name: side
                env:
                - {name: B, value: "2"}
              - name: main
                env:
                - {name: CERT, value: /etc/cert/tls.crt}
                - {name: A, value: "3"}
                volumeMounts:
                - {name: cert, mountPath: /etc/cert, readOnly: true}
              volumes:
              - name: cert
                secret: {secretName: client}
        """);
    write("data.json", "{\"a\": 1}\n");
    write("kustomization.yaml",
        """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
        - objects.yaml
        patches:
        - path: client-cert.yaml
        - target: {kind: ValidatingWebhookConfiguration, name: app}
          patch: |-
            - op: add
              path: /webhooks/0/rules/-
              value: {operations: [UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}
        - target: {kind: Deployment, name: app}
          patch: |-
            - op: add
              path: /metadata/annotations
              value: {example.io~1x: "y"}
        - patch: |-
            $patch: delete
            apiVersion: v1
            kind: ServiceAccount
            metadata: {name: gone, namespace: ns}
        configMapGenerator:
        - name: data
          namespace: ns
          files: [data.json]
          options: {disableNameSuffixHash: true, labels: {l: "1"}}
        """);

    var kustomize = ChartEquivalenceTest.byIdentity(Overlays.render(dir.toString()));
    var result = renderWithChart();

    assertThat(result.exit()).as(result.error()).isNotZero();
    assertThat(result.error()).contains("JSON patch path /webhooks/0/rules/- is not a path of map keys (or of map keys and a final /-)");

    // Without the patch at a list index, the chart follows kustomize exactly.
    write("kustomization.yaml", Files.readString(dir.resolve("kustomization.yaml"))
        .replace("path: /webhooks/0/rules/-", "path: /metadata/labels").replace("value: {operations: [UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}", "value: {a: b}"));
    var chart = renderWithChart();
    assertThat(chart.exit()).as(chart.error()).isZero();
    assertThat(ChartEquivalenceTest.byIdentity(chart.output())).isEqualTo(ChartEquivalenceTest.byIdentity(Overlays.render(dir.toString())));
    assertThat(kustomize).containsKey("v1/ConfigMap/ns/data").doesNotContainKey("v1/ServiceAccount/ns/gone");
  }

  @Test
  void appendsToAListAtTheEndOfAJsonPatchPath() throws Exception {
    write("objects.yaml", DEPLOYMENT);
    write("kustomization.yaml",
        """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources:
        - objects.yaml
        patches:
        - target: {kind: Deployment, name: app}
          patch: |-
            - op: add
              path: /spec/template/spec/volumes/-
              value: {name: extra, emptyDir: {}}
        """);
    var chart = renderWithChart();
    assertThat(chart.exit()).as(chart.error()).isZero();
    assertThat(ChartEquivalenceTest.byIdentity(chart.output())).isEqualTo(ChartEquivalenceTest.byIdentity(Overlays.render(dir.toString())));
  }

  @Test
  void refusesWhatItDoesNotApply() throws Exception {
    write("objects.yaml", DEPLOYMENT);
    write("kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [objects.yaml]\nimages:\n- {name: app, newTag: \"2\"}\n");
    var result = renderWithChart();
    assertThat(result.exit()).isNotZero();
    assertThat(result.error()).contains("chart: manifests/x/kustomization.yaml: the chart does not apply images (templates/_kustomize.tpl)");
  }

  /** A chart with the real _kustomize.tpl that renders kustomization manifests/x (this test's). */
  private Chart.Result renderWithChart() throws Exception {
    var chart = dir.resolveSibling(dir.getFileName() + "-chart");
    if (!Files.exists(chart)) {
      Files.createDirectories(chart.resolve("templates"));
      Files.createDirectories(chart.resolve("manifests"));
      Files.writeString(chart.resolve("Chart.yaml"), "apiVersion: v2\nname: kustomize-test\nversion: 0.1.0\n");
      Files.createSymbolicLink(chart.resolve("templates/_kustomize.tpl"), Chart.DIR.resolve("templates/_kustomize.tpl").toAbsolutePath());
      Files.createSymbolicLink(chart.resolve("manifests/x"), dir.toAbsolutePath());
      Files.writeString(chart.resolve("templates/objects.yaml"),
          "{{- range (include \"gpu-admission.kustomize\" (dict \"root\" $ \"dir\" \"manifests/x\") | fromJson).v }}\n---\n{{ toYaml . }}\n{{- end }}\n");
    }
    return Chart.run(List.of(Chart.helm(), "template", "t", chart.toString()));
  }

  private void write(String name, String text) throws Exception {
    Files.writeString(dir.resolve(name), text);
  }
}
