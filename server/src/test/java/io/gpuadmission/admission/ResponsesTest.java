package io.gpuadmission.admission;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class ResponsesTest {
  @Test
  void aRefusalTooLongIsCutAtALineAndSaysHowMuchWasLeftOut() {
    // 100 policy errors of 59 characters each, one per line: 5,999 characters.
    var message = IntStream.rangeClosed(1, 100).mapToObj(i -> String.format("line %03d: allocator.fgdWorkload.windowMinutes: must be 1-60", i))
        .collect(Collectors.joining("\n"));

    var shown = Responses.deny("uid-1", 403, "Invalid", message, java.util.List.of()).getStatus().getMessage();

    assertThat(message).hasSize(5999);
    assertThat(shown).startsWith("line 001: ").contains("\nline 065: allocator.fgdWorkload.windowMinutes: must be 1-60\n... cut here")
        .doesNotContain("line 066").endsWith("\n... cut here: 35 more line(s), 2099 more characters");
    assertThat(shown.length()).isLessThanOrEqualTo(Responses.MAX_MESSAGE);
    assertThat(Responses.deny("uid-1", 403, "Invalid", "short", java.util.List.of()).getStatus().getMessage()).isEqualTo("short");
  }
}
