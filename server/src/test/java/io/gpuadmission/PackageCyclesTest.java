package io.gpuadmission;

import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.ArchConfiguration;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import io.gpuadmission.main.GpuAdmissionMain;
import java.net.URISyntaxException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * No package of the server imports back into one that imports it (issue 42): each package can be
 * read, tested and moved with only what it depends on. What two packages both need lives in the
 * lower one or behind an interface there (cluster/ClusterView, admission/LargerBodyLimit), and the
 * one class that knows the modes and the command line has a package no other imports
 * (main/GpuAdmissionMain). The modules' own direction is the build's: their poms.
 */
class PackageCyclesTest {
  @Test
  void theServersPackagesAreFreeOfCycles() {
    // Our own class files name every dependency between our packages: nothing of the libraries
    // needs importing (resolving it from the class path costs seconds on a loaded machine).
    var configuration = ArchConfiguration.get();
    var resolving = configuration.resolveMissingDependenciesFromClassPath();
    configuration.setResolveMissingDependenciesFromClassPath(false);
    try {
      // The server's classes only: the allocator and the node agent are modules of their own (on
      // this class path as directories too, when the reactor builds them).
      var classes = new ClassFileImporter().importPath(serverClasses());
      slices().matching("io.gpuadmission.(*)..").should().beFreeOfCycles().check(classes);
    } finally {
      configuration.setResolveMissingDependenciesFromClassPath(resolving);
    }
  }

  private static Path serverClasses() {
    try {
      return Path.of(GpuAdmissionMain.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    } catch (URISyntaxException e) {
      throw new AssertionError(e);
    }
  }
}
