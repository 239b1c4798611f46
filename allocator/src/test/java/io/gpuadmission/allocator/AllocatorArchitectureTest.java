package io.gpuadmission.allocator;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The allocator is plain Java: records in, decisions out, nothing of Kubernetes or Quarkus. */
class AllocatorArchitectureTest {
  @Test
  void allocatorDependsOnJavaOnly() {
    var classes =
        new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("io.gpuadmission.allocator");
    classes()
        .that()
        .resideInAPackage("io.gpuadmission.allocator..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage("java..", "io.gpuadmission.allocator..")
        .check(classes);
  }
}
