package io.gpuadmission.quota;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** Quota is plain Java: trees and pods in, decisions out, nothing of Kubernetes, Quarkus or JSON. */
class QuotaArchitectureTest {
  @Test
  void quotaDependsOnJavaOnly() {
    var classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.gpuadmission.quota");
    classes()
        .that()
        .resideInAPackage("io.gpuadmission.quota..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage("java..", "io.gpuadmission.quota..")
        .check(classes);
  }
}
