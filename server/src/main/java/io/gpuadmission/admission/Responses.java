package io.gpuadmission.admission;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.admission.v1.AdmissionResponse;
import java.util.Base64;
import java.util.List;

/** The few AdmissionResponse shapes the webhook answers with. */
public final class Responses {
  /**
   * A refusal longer than this is cut at the last line that fits (a policy with dozens of mistakes):
   * it stays readable in kubectl's output, and says that it was cut.
   */
  static final int MAX_MESSAGE = 4000;

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
    status.setMessage(shortened(message));
    response.setStatus(status);
    if (!warnings.isEmpty()) {
      response.setWarnings(List.copyOf(warnings));
    }
    return response;
  }

  /** {@code message}, or as much of it as fits in whole lines, then how much was left out. */
  static String shortened(String message) {
    if (message.length() <= MAX_MESSAGE) {
      return message;
    }
    var room = MAX_MESSAGE - 80;
    var cut = message.lastIndexOf('\n', room);
    if (cut <= 0) {
      cut = room;
    }
    var left = message.substring(cut).strip();
    var lines = left.isEmpty() ? 0 : left.split("\n").length;
    return message.substring(0, cut) + "\n... cut here: " + lines + " more line(s), " + left.length() + " more characters";
  }
}
