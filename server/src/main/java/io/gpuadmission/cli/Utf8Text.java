package io.gpuadmission.cli;

import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Manifests and policies are UTF-8 text, as kubectl reads them. A file that is not (an image, an
 * archive, a file saved in another encoding) is said to be so, with the offset of its first byte
 * that is no UTF-8, instead of the decoder's exception name; stdin is held to the same rule rather
 * than having its bad bytes replaced silently.
 */
final class Utf8Text {
  private Utf8Text() {}

  /** Why {@code bytes} are not UTF-8 text. */
  static final class NotText extends Exception {
    private static final long serialVersionUID = 1L;

    NotText(String message) {
      super(message, null, false, false);
    }
  }

  static String decode(byte[] bytes) throws NotText {
    var decoder = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT);
    var in = ByteBuffer.wrap(bytes);
    var out = CharBuffer.allocate(bytes.length);
    var result = decoder.decode(in, out, true);
    if (result.isError()) {
      throw new NotText("not UTF-8 text (byte " + in.position() + " is not UTF-8; a binary file?)");
    }
    try {
      result = decoder.flush(out);
      if (result.isError()) {
        result.throwException();
      }
    } catch (CharacterCodingException e) {
      throw new NotText("not UTF-8 text (it ends inside a character)");
    }
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] == 0) {
        // Valid UTF-8, but neither YAML nor JSON allows a NUL: a binary file.
        throw new NotText("not text (byte " + i + " is NUL; a binary file?)");
      }
    }
    return out.flip().toString();
  }
}
