package io.gpuadmission.allocator;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/**
 * The allocator is plain Java: records in, decisions out, nothing of Kubernetes or Quarkus (this
 * module's pom has no such dependency, so such an import does not compile; this says the rest). The
 * module's other packages, the formats both programs share, use nothing but Java either.
 */
class AllocatorArchitectureTest {
  private static final JavaClasses CORE =
      new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("io.gpuadmission");

  @Test
  void allocatorDependsOnJavaOnly() {
    classes()
        .that()
        .resideInAPackage("io.gpuadmission.allocator..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage("java..", "io.gpuadmission.allocator..")
        .check(CORE);
  }

  @Test
  void theSharedFormatsDependOnJavaAndEachOtherOnly() {
    classes()
        .that()
        .resideInAnyPackage("io.gpuadmission.contract..", "io.gpuadmission.quantity..")
        .should()
        .onlyDependOnClassesThat()
        .resideInAnyPackage("java..", "io.gpuadmission.contract..", "io.gpuadmission.quantity..")
        .check(CORE);
  }

  @Test
  void noPackageImportsBackIntoOneThatImportsIt() {
    slices().matching("io.gpuadmission.(*)..").should().beFreeOfCycles().check(CORE);
  }
}
