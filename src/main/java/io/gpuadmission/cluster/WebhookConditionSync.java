package io.gpuadmission.cluster;

import io.gpuadmission.mode.ServerStartup;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.gpuadmission.admission.KubernetesJson;
import io.gpuadmission.policy.PolicyStore;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

/**
 * Keeps the one place outside this process that names the topology job label, the
 * {@code pods.validate} webhook's match condition, equal to the policy: a pod that carries a custom
 * job label but asks for no GPU must still reach /validate. The API server cannot read our policy,
 * so the condition is rewritten when the policy names another label.
 */
@ApplicationScoped
public class WebhookConditionSync {
  static final String WEBHOOK = "pods.validate.gpu-admission.io";
  static final String CONDITION = "gpu-or-topology-pod";
  private static final Logger LOG = Logger.getLogger(WebhookConditionSync.class);
  private static final Pattern LABEL_TEST = Pattern.compile("'([^']*)' in object\\.metadata\\.labels");

  private final ClusterConnection cluster;
  private final PolicyStore policies;
  private final String configurationName;
  private final Duration resyncPeriod;
  private ScheduledExecutorService resync;
  private volatile String lastWarning = "";

  public WebhookConditionSync(
      ClusterConnection cluster,
      PolicyStore policies,
      @ConfigProperty(name = "gpu-admission.webhook.configuration-name", defaultValue = "gpu-admission") String configurationName,
      @ConfigProperty(name = "gpu-admission.webhook.condition-resync", defaultValue = "60s") Duration resyncPeriod) {
    this.cluster = cluster;
    this.policies = policies;
    this.configurationName = configurationName;
    this.resyncPeriod = resyncPeriod;
  }

  void start(@Observes ServerStartup event) {
    if (!cluster.available()) {
      return;
    }
    policies.onChangeOf(p -> p.topology().jobLabel(), p -> CompletableFuture.runAsync(() -> sync(p.topology().jobLabel())));
    // Never hold start-up on the API server. Then again every minute: re-applying webhooks.yaml
    // (an upgrade, a GitOps sync) writes the shipped label back.
    resync = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "webhook-condition-sync"));
    resync.scheduleWithFixedDelay(() -> sync(policies.current().topology().jobLabel()), 0, resyncPeriod.toSeconds(), TimeUnit.SECONDS);
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    if (resync != null) {
      resync.shutdownNow();
    }
  }

  /** Rewrites the condition for {@code label}; returns whether it now names it. */
  boolean sync(String label) {
    try {
      var config = cluster.client().admissionRegistration().v1().validatingWebhookConfigurations().withName(configurationName).get();
      if (config == null) {
        LOG.debugf("no ValidatingWebhookConfiguration %s: nothing to keep in step with the job label", configurationName);
        return false;
      }
      var webhooks = config.getWebhooks();
      for (int w = 0; w < webhooks.size(); w++) {
        if (!WEBHOOK.equals(webhooks.get(w).getName()) || webhooks.get(w).getMatchConditions() == null) {
          continue;
        }
        var conditions = webhooks.get(w).getMatchConditions();
        for (int c = 0; c < conditions.size(); c++) {
          if (CONDITION.equals(conditions.get(c).getName())) {
            return rewrite(w, c, conditions.get(c).getExpression(), label);
          }
        }
      }
      warnOnce(
          String.format(
              "ValidatingWebhookConfiguration %s has no match condition %s on webhook %s: pods labelled %s that ask for"
                  + " no GPU are not validated", configurationName, CONDITION, WEBHOOK, label));
      return false;
    } catch (KubernetesClientException e) {
      warnOnce(
          String.format(
              "could not set the job label %s in the match condition of webhook %s (%s): pods carrying it that ask for"
                  + " no GPU are not validated until the condition names it; edit it by hand or grant the webhook's"
                  + " ServiceAccount get and patch on validatingwebhookconfigurations/%s",
              label, WEBHOOK, e.getMessage(), configurationName));
      return false;
    }
  }

  private boolean rewrite(int webhook, int condition, String expression, String label) {
    var expected = withLabel(expression, label);
    if (expected.isEmpty()) {
      warnOnce(String.format("match condition %s of webhook %s does not test a label as shipped; left alone", CONDITION, WEBHOOK));
      return false;
    }
    if (expected.get().equals(expression)) {
      return true;
    }
    var path = "/webhooks/" + webhook + "/matchConditions/" + condition + "/expression";
    // The test operation makes the patch fail, not overwrite, if someone changed it meanwhile.
    var patch =
        List.of(
            Map.of("op", "test", "path", path, "value", expression),
            Map.of("op", "replace", "path", path, "value", expected.get()));
    cluster.client().admissionRegistration().v1().validatingWebhookConfigurations().withName(configurationName)
        .patch(PatchContext.of(PatchType.JSON), KubernetesJson.mapper().valueToTree(patch).toString());
    LOG.infof("webhook %s now sends pods labelled %s to /validate", WEBHOOK, label);
    return true;
  }

  /** The resync runs every minute: say a problem when it appears or changes, not every time. */
  private void warnOnce(String warning) {
    if (!warning.equals(lastWarning)) {
      lastWarning = warning;
      LOG.warn(warning);
    }
  }

  /** The expression testing {@code label} instead of the label it tests, if it tests exactly one. */
  static Optional<String> withLabel(String expression, String label) {
    Matcher matcher = LABEL_TEST.matcher(expression);
    if (!matcher.find()) {
      return Optional.empty();
    }
    var start = matcher.start();
    var end = matcher.end();
    if (matcher.find()) {
      return Optional.empty();
    }
    return Optional.of(expression.substring(0, start) + "'" + label + "' in object.metadata.labels" + expression.substring(end));
  }
}
