package io.gpuadmission.cluster;

import io.gpuadmission.mode.ServerStartup;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.MatchCondition;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfiguration;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingWebhookConfigurationList;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.gpuadmission.policy.PolicyStore;
import io.quarkus.runtime.ShutdownEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Reception;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
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
  /** Reads and patches when the configuration changed in between (409), before waiting for the next resync. */
  private static final int ATTEMPTS = 3;
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
    // Never hold start-up on the API server. Then again every minute: re-applying webhooks.yaml
    // (an upgrade, a GitOps sync) writes the shipped label back.
    resync = Executors.newSingleThreadScheduledExecutor(r -> new Thread(r, "webhook-condition-sync"));
    policies.onChangeOf(p -> p.topology().jobLabel(), p -> {
      try {
        resync.execute(() -> syncAndSay(p.topology().jobLabel()));
      } catch (java.util.concurrent.RejectedExecutionException shuttingDown) {
        // The next start syncs.
      }
    });
    resync.scheduleWithFixedDelay(() -> syncAndSay(policies.current().topology().jobLabel()), 0, resyncPeriod.toSeconds(), TimeUnit.SECONDS);
  }

  void stop(@Observes(notifyObserver = Reception.IF_EXISTS) ShutdownEvent event) {
    if (resync != null) {
      resync.shutdownNow();
    }
  }

  /** What one sync found: the condition names the label now, or why it does not (a sentence for the log). */
  record Outcome(boolean named, String problem) {
    static final Outcome NAMED = new Outcome(true, "");

    static Outcome notNamed(String problem) {
      return new Outcome(false, problem);
    }
  }

  /**
   * Rewrites the condition for {@code label}. The patch carries the resourceVersion that was read
   * (fabric8's JSON patch by diff of the edited copy): the API server refuses it with 409 if the
   * configuration changed since, and it is read and tried again. It never tests the expression's
   * text: kube-apiserver compares a JSON patch {@code test} value byte for byte with the object as
   * Go encodes it, which writes {@code &} as {@code \u0026}, so a test of the shipped condition
   * (it has {@code &&}) always failed with 422.
   */
  Outcome sync(String label) {
    for (int attempt = 1; ; attempt++) {
      ValidatingWebhookConfiguration read;
      try {
        read = configurations().withName(configurationName).get();
      } catch (KubernetesClientException e) {
        return failed(label, "get", e);
      }
      if (read == null) {
        LOG.debugf("no ValidatingWebhookConfiguration %s: nothing to keep in step with the job label", configurationName);
        return Outcome.notNamed("");
      }
      var edited = cluster.client().getKubernetesSerialization().clone(read);
      var condition = condition(edited);
      if (condition.isEmpty()) {
        return Outcome.notNamed(
            String.format(
                "ValidatingWebhookConfiguration %s has no match condition %s on webhook %s: pods labelled %s that ask for"
                    + " no GPU are not validated", configurationName, CONDITION, WEBHOOK, label));
      }
      var expression = condition.get().getExpression();
      var expected = expression == null ? Optional.<String>empty() : withLabel(expression, label);
      if (expected.isEmpty()) {
        return Outcome.notNamed(String.format("match condition %s of webhook %s does not test a label as shipped; left alone", CONDITION, WEBHOOK));
      }
      if (expected.get().equals(expression)) {
        return Outcome.NAMED;
      }
      condition.get().setExpression(expected.get());
      try {
        configurations().resource(read).patch(PatchContext.of(PatchType.JSON), edited);
        LOG.infof("webhook %s now sends pods labelled %s to /validate", WEBHOOK, label);
        return Outcome.NAMED;
      } catch (KubernetesClientException e) {
        if (e.getCode() == 409 && attempt < ATTEMPTS) {
          continue; // changed since read: read it again
        }
        if (e.getCode() == 404) {
          return Outcome.notNamed(""); // deleted since read: nothing to keep in step
        }
        return failed(label, "patch", e);
      }
    }
  }

  private NonNamespaceOperation<ValidatingWebhookConfiguration, ValidatingWebhookConfigurationList, Resource<ValidatingWebhookConfiguration>> configurations() {
    return cluster.client().admissionRegistration().v1().validatingWebhookConfigurations();
  }

  private static Optional<MatchCondition> condition(ValidatingWebhookConfiguration config) {
    return Optional.ofNullable(config.getWebhooks()).stream()
        .flatMap(List::stream)
        .filter(w -> WEBHOOK.equals(w.getName()) && w.getMatchConditions() != null)
        .flatMap(w -> w.getMatchConditions().stream())
        .filter(c -> CONDITION.equals(c.getName()))
        .findFirst();
  }

  /** Says what the API server answered; RBAC is named only when it refused the call (403). */
  private Outcome failed(String label, String verb, KubernetesClientException e) {
    var start =
        String.format("could not set the job label %s in the match condition of webhook %s: ", label, WEBHOOK);
    var consequence = "; pods carrying it that ask for no GPU are not validated until the condition names it";
    var answer = e.getStatus() != null && e.getStatus().getMessage() != null ? e.getStatus().getMessage() : e.getMessage();
    var why =
        switch (e.getCode()) {
          case 403 -> String.format(
              "the API server refused to %s ValidatingWebhookConfiguration %s (403: %s); grant the webhook's ServiceAccount"
                  + " get and patch on validatingwebhookconfigurations/%s, or edit the condition by hand",
              verb, configurationName, answer, configurationName);
          case 409 -> String.format(
              "ValidatingWebhookConfiguration %s changed under each of %d attempts to patch it (409: %s); trying again in %s",
              configurationName, ATTEMPTS, answer, resyncPeriod);
          case 422 -> String.format(
              "the API server refused the new condition (422: %s); edit it by hand", answer);
          default -> e.getCode() <= 0
              ? String.format("no answer from the API server (%s); trying again in %s", describe(e), resyncPeriod)
              : String.format(
                  "the API server answered %d to the %s of ValidatingWebhookConfiguration %s (%s); trying again in %s",
                  e.getCode(), verb, configurationName, answer, resyncPeriod);
        };
    return Outcome.notNamed(start + why + consequence);
  }

  private static String describe(KubernetesClientException e) {
    return e.getCause() == null ? e.getMessage() : e.getMessage() + ": " + e.getCause().getMessage();
  }

  private void syncAndSay(String label) {
    var outcome = sync(label);
    if (outcome.named()) {
      lastWarning = "";
    } else if (!outcome.problem().isEmpty()) {
      warnOnce(outcome.problem());
    }
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
