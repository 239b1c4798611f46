package io.gpuadmission.admission;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import java.util.Base64;
import java.util.List;

/** The few AdmissionResponse shapes the webhook answers with. */
public final class Responses {
  /** Kubernetes truncates long messages in kubectl output; keep refusals readable. */
  static final int MAX_MESSAGE = 1000;

  private Responses() {}

  public static AdmissionResponse allow(String uid, List<String> warnings) {
    var response = new AdmissionResponse();
    response.setUid(uid);
    response.setAllowed(true);
    if (!warnings.isEmpty()) {
      response.setWarnings(List.copyOf(warnings));
    }
    return response;
  }

  /** An admission with a JSON Patch, given as its UTF-8 bytes (the wire carries them in base64). */
  public static AdmissionResponse patch(String uid, byte[] jsonPatch, List<String> warnings) {
    var response = allow(uid, warnings);
    response.setPatchType("JSONPatch");
    response.setPatch(Base64.getEncoder().encodeToString(jsonPatch));
    return response;
  }

  /** A refusal: HTTP 200 with {@code allowed: false}; {@code status.code} carries 403. */
  public static AdmissionResponse deny(String uid, String reason, String message, List<String> warnings) {
    return deny(uid, 403, reason, message, warnings);
  }

  /**
   * A refusal for now (the object is not judged yet): {@code status.code} 503 and reason {@code
   * ServiceUnavailable}, which a person and kube-apiserver read as "try again", not "fix it".
   */
  public static AdmissionResponse unavailable(String uid, String message) {
    return deny(uid, 503, "ServiceUnavailable", message, List.of());
  }

  /** A refusal with the given {@code status.code} (403 for a rule, 503 for "not judged yet"). */
  public static AdmissionResponse deny(String uid, int code, String reason, String message, List<String> warnings) {
    var response = new AdmissionResponse();
    response.setUid(uid);
    response.setAllowed(false);
    var status = new Status();
    status.setCode(code);
    status.setReason(reason);
    status.setMessage(message.length() <= MAX_MESSAGE ? message : message.substring(0, MAX_MESSAGE - 3) + "...");
    response.setStatus(status);
    if (!warnings.isEmpty()) {
      response.setWarnings(List.copyOf(warnings));
    }
    return response;
  }
}
