package io.gpuadmission.cluster;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.client.server.mock.KubernetesMixedDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Dispatcher;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A CRUD mock API server that encodes ValidatingWebhookConfigurations and applies JSON patches to
 * them as kube-apiserver does. kube-apiserver encodes the stored object with Go's encoding/json,
 * which escapes {@code <}, {@code >}, {@code &}, U+2028 and U+2029 ({@code \u0026}), and applies the
 * patch to those bytes with evanphx/json-patch, whose {@code test} operation compares a string
 * value's encoded bytes with the bytes of the patch's value (lazyNode.equal: neither is an object
 * or array, so bytes.Equal of the compacted raw JSON). The fabric8 mock compares decoded values
 * instead, which is why a text test passed there and failed with 422 on a real API server.
 *
 * <p>{@link #beforeNextPatch} changes the object just before a patch is applied (another writer),
 * and {@link #refusePatches} answers patches with a status.
 */
final class GoEncodingApiServer extends Dispatcher {
  private static final String CONFIGURATIONS = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/";
  private static final ObjectMapper JSON = new ObjectMapper();
  /** Go's encoding/json: HTML characters and the two JavaScript line separators escaped, hex in lower case. */
  private static final ObjectMapper GO = new ObjectMapper(new JsonFactory().setCharacterEscapes(new GoEscapes()));

  private final KubernetesMixedDispatcher crud;
  private final List<String> patches = new CopyOnWriteArrayList<>();
  private volatile Runnable beforeNextPatch;
  private volatile int refusal;
  private volatile int refusals;

  private GoEncodingApiServer(KubernetesMixedDispatcher crud) {
    this.crud = crud;
  }

  static KubernetesMockServer start(List<GoEncodingApiServer> handle) {
    var responses = new HashMap<io.fabric8.mockwebserver.ServerRequest, java.util.Queue<io.fabric8.mockwebserver.ServerResponse>>();
    var dispatcher = new GoEncodingApiServer(new KubernetesMixedDispatcher(responses));
    var server = new KubernetesMockServer(new Context(), new MockWebServer(), responses, dispatcher, false);
    server.init();
    handle.add(dispatcher);
    return server;
  }

  /** The bodies of the JSON patches sent to a webhook configuration, in order. */
  List<String> patches() {
    return List.copyOf(patches);
  }

  void beforeNextPatch(Runnable change) {
    beforeNextPatch = change;
  }

  /** Answers the next {@code times} patches with {@code code}. */
  void refusePatches(int code, int times) {
    refusal = code;
    refusals = times;
  }

  /** A JSON merge patch applied to a configuration in this thread, as another client's write. */
  void mergePatch(String name, String patch) {
    var headers = Headers.builder().add("Content-Type", "application/merge-patch+json").build();
    crud.dispatch(new RecordedRequest("HTTP/1.1", HttpMethod.PATCH, CONFIGURATIONS + name, headers, new Buffer().writeUtf8(patch)));
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
    var path = request.getPath() == null ? "" : request.getPath();
    if (!path.startsWith(CONFIGURATIONS)) {
      return crud.dispatch(request);
    }
    if ("PATCH".equals(request.getMethod())) {
      try {
        return patch(request);
      } catch (RuntimeException e) {
        // A bug of this mock must show as such, not as a client timeout.
        return status(500, "GoEncodingApiServer: " + e, "Failure");
      }
    }
    var response = crud.dispatch(request);
    return "GET".equals(request.getMethod()) && response.code() == 200 ? goEncoded(response) : response;
  }

  private MockResponse patch(RecordedRequest request) {
    var body = request.getUtf8Body();
    patches.add(body);
    var change = beforeNextPatch;
    if (change != null) {
      beforeNextPatch = null;
      change.run();
    }
    if (refusals > 0) {
      refusals--;
      return status(refusal, "refused by the test", "Failure");
    }
    if (String.valueOf(request.getHeader("Content-Type")).startsWith("application/json-patch+json")) {
      var current = crud.dispatch(new RecordedRequest("HTTP/1.1", HttpMethod.GET, request.getPath(), Headers.builder().build(), new Buffer()));
      if (current.code() != 200) {
        return current;
      }
      var failed = failedTest(tree(current.getBody().readUtf8()), body);
      if (failed != null) {
        // What kube-apiserver answers when evanphx/json-patch returns ErrTestFailed.
        return new MockResponse().setResponseCode(422).setBody(
            "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"the server rejected"
                + " our request due to an error in our request\",\"reason\":\"Invalid\",\"details\":{\"causes\":[{\"reason\":"
                + "\"UnexpectedServerResponse\",\"message\":\"testing value " + failed + " failed: test failed\"}]},\"code\":422}");
      }
    }
    // Reading the body consumed it: the CRUD dispatcher gets a copy.
    return crud.dispatch(new RecordedRequest(request.getHttpVersion(), request.method(), request.getPath(), request.getHeaders(), new Buffer().writeUtf8(body)));
  }

  /** The path of the first {@code test} operation that fails on {@code document}, or null. */
  private static String failedTest(JsonNode document, String patch) {
    for (var op : operations(patch)) {
      if (!"test".equals(op.name())) {
        continue;
      }
      var value = document.at(op.path());
      var raw = op.rawValue();
      var equal =
          value.isTextual()
              ? encodeGo(value).equals(raw) // bytes as Go wrote them against bytes as sent
              : value.equals(tree(raw));
      if (!equal) {
        return op.path();
      }
    }
    return null;
  }

  /** One operation of a JSON patch, its value as the raw (compact) text the client sent. */
  private record Operation(String name, String path, String rawValue) {}

  private static List<Operation> operations(String patch) {
    var operations = new ArrayList<Operation>();
    try (var parser = JSON.getFactory().createParser(patch)) {
      parser.nextToken(); // [
      while (parser.nextToken() == JsonToken.START_OBJECT) {
        String op = null;
        String path = null;
        String raw = null;
        while (parser.nextToken() == JsonToken.FIELD_NAME) {
          var field = parser.currentName();
          parser.nextToken();
          var start = (int) parser.currentTokenLocation().getCharOffset();
          if (parser.currentToken().isStructStart()) {
            parser.skipChildren();
          } else {
            parser.getText(); // reads the whole token, so the location below is past it
          }
          var text = patch.substring(start, (int) parser.currentLocation().getCharOffset());
          switch (field) {
            case "op" -> op = tree(text).asText();
            case "path" -> path = tree(text).asText();
            case "value" -> raw = compact(text);
            default -> { }
          }
        }
        operations.add(new Operation(op, path, raw));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return operations;
  }

  private static MockResponse goEncoded(MockResponse response) {
    return new MockResponse().setResponseCode(200).setHeaders(response.getHeaders()).setBody(encodeGo(tree(response.getBody().readUtf8())));
  }

  static String encodeGo(JsonNode node) {
    try {
      return GO.writeValueAsString(node);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** json.Compact: whitespace outside strings removed, nothing else changed (escapes stay as sent). */
  private static String compact(String json) {
    var out = new StringBuilder();
    var inString = false;
    for (int i = 0; i < json.length(); i++) {
      var c = json.charAt(i);
      if (inString) {
        out.append(c);
        if (c == '\\') {
          out.append(json.charAt(++i));
        } else if (c == '"') {
          inString = false;
        }
      } else if (c == '"') {
        inString = true;
        out.append(c);
      } else if (!Character.isWhitespace(c)) {
        out.append(c);
      }
    }
    return out.toString();
  }

  private static JsonNode tree(String json) {
    try {
      return JSON.readTree(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static MockResponse status(int code, String message, String status) {
    return new MockResponse().setResponseCode(code).setBody(
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"" + status + "\",\"message\":\"" + message + "\",\"code\":" + code + "}");
  }

  /** encoding/json's string escaping beyond JSON's own (encodeState.string with escapeHTML). */
  private static final class GoEscapes extends CharacterEscapes {
    private final int[] ascii = standardAsciiEscapesForJSON();

    GoEscapes() {
      for (var c : new char[] {'<', '>', '&'}) {
        ascii[c] = ESCAPE_CUSTOM;
      }
    }

    @Override
    public int[] getEscapeCodesForAscii() {
      return ascii;
    }

    @Override
    public SerializableString getEscapeSequence(int ch) {
      return ch == '<' || ch == '>' || ch == '&' || ch == 0x2028 || ch == 0x2029
          ? new SerializedString(String.format("\\u%04x", ch))
          : null;
    }
  }
}
