package io.gpuadmission.mode;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods;

import com.tngtech.archunit.ArchConfiguration;
import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.quarkus.runtime.StartupEvent;
import org.junit.jupiter.api.Test;

/**
 * Every mode sees Quarkus' StartupEvent; only {@link RunModeStartup} may observe it. Anything else
 * starts on its mode's event, so a new informer or timer cannot start in the command line or the
 * node agent by accident.
 */
class RunModeArchitectureTest {
  private static final DescribedPredicate<JavaMethod> TAKE_STARTUP_EVENT =
      DescribedPredicate.describe(
          "take a StartupEvent", method -> method.getRawParameterTypes().stream().anyMatch(t -> t.getName().equals(StartupEvent.class.getName())));

  @Test
  void onlyTheRunModeStartupObservesStartupEvent() {
    // Parameter types are named in our own class files: nothing of the libraries needs importing
    // (resolving them from the class path took 20 s on a loaded 2-core machine).
    var configuration = ArchConfiguration.get();
    var resolving = configuration.resolveMissingDependenciesFromClassPath();
    configuration.setResolveMissingDependenciesFromClassPath(false);
    try {
      var classes =
          new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS).importPackages("io.gpuadmission");
      methods().that(TAKE_STARTUP_EVENT).should().beDeclaredIn(RunModeStartup.class).check(classes);
    } finally {
      configuration.setResolveMissingDependenciesFromClassPath(resolving);
    }
  }
}
