package io.gpuadmission.quantity;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import java.math.BigDecimal;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Answers checked against apimachinery's resource.ParseQuantity (its quantity_test.go tables and its scanner). */
class KubeQuantityTest {
  @ParameterizedTest(name = "{0} is {1}")
  @CsvSource(delimiter = '|', value = {
      "2|2", "500m|0.5", "1Ki|1024", "1e3|1000", "1.5G|1500000000", "16Gi|17179869184", "100n|0.0000001",
      "-3|-3", "+3|3", "1E|1000000000000000000", "1E3|1000", "1e+3|1000", "1e-3|0.001", "12e0003|12000",
      // the scanner's own: a bare sign, a bare point, a suffix without digits, a point without decimals
      "-|0", "+|0", ".|0", "-000|0", "Ki|0", "m|0", ".e3|0", "1.|1", "1.G|1000000000", ".001|0.001", ".0001k|0.1",
      // rounded up (away from zero) to 10^-9, binary amounts capped at 2^63-1
      "0.000000000001Ki|0.000000002", "1e-12|0.000000001", "-1e-12|-0.000000001", "1.0000000001|1.000000001",
      "1e-2147483648|0.000000001", "8Ei|9223372036854775807", "-8Ei|-9223372036854775807", "-0.0009765625Ki|-1"})
  void readsWhatApimachineryReads(String text, String amount) {
    assertThat(KubeQuantity.parse(text)).hasValueSatisfying(q -> assertThat(q).isEqualByComparingTo(new BigDecimal(amount)));
  }

  @ParameterizedTest(name = "\"{0}\" is no quantity")
  @ValueSource(strings = {
      "", "lots", "aoeu", "1.1.M", "1+1.0M", "0.1mi", "0.1am", ".5i", "1i", "-3.01i", "-3.01e-", " 1", "1 ", "1e", "1e+",
      "1e1.5", "1e.5", "1e3k", "1E3Ki", "1e+-3", "1..5", "1-", "++1", "1,5", "1_000", "0x10", "1/2", "１", "٣", "−1",
      "1K", "1ki", "1KI", "1KiB", "1Zi", "1µ", "Inf", "NaN", "1e9223372036854775808", "1e99999999999999999999", "1ee3"})
  void refusesWhatApimachineryRefuses(String text) {
    assertThat(KubeQuantity.parse(text)).isEmpty();
    assertThat(KubeQuantity.isValid(text)).isFalse();
  }

  @Test
  void aJsonValueIsTrimmedAsQuantityUnmarshalJsonTrimsIt() {
    assertThat(KubeQuantity.parseJsonValue(" 2\t")).contains(new BigDecimal(2));
    assertThat(KubeQuantity.parseJsonValue("\u00a0500m\u3000")).contains(new BigDecimal("0.500"));
    assertThat(KubeQuantity.parseJsonValue("\u001c2")).isEmpty();
    assertThat(KubeQuantity.parseJsonValue(" ")).isEmpty();
    assertThat(KubeQuantity.parseJsonValue(null)).isEmpty();
  }

  @Test
  void aHugeExponentStaysCheap() {
    assertThat(KubeQuantity.parse("1e2000000000")).hasValueSatisfying(q -> assertThat(q.scale()).isEqualTo(-2000000000));
  }

  @Test
  void dependsOnJavaOnly() {
    var imported = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("io.gpuadmission.quantity");
    classes().that().resideInAPackage("io.gpuadmission.quantity..").should().onlyDependOnClassesThat()
        .resideInAnyPackage("java..", "io.gpuadmission.quantity..").check(imported);
  }
}
