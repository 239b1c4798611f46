package io.gpuadmission.node;

/**
 * node-agent.jar's Main-Class: makes jboss-logmanager the JDK's log manager, then runs {@link
 * NodeAgentMain}. It has to come first and hold no logger of its own: jboss-logging picks its
 * back end when the first logger is created (NodeAgentMain's, as that class initialises), and the
 * JDK fixes its log manager the first time one is asked for; with {@code java -jar node-agent.jar}
 * and no {@code -Djava.util.logging.manager}, both would happen before {@code main} runs and the
 * agent's log would go to JUL's default console, not the agent's stdout.
 */
public final class NodeAgentLauncher {
  private NodeAgentLauncher() {}

  public static void main(String... args) {
    NodeAgentLogging.useLogManager();
    NodeAgentMain.main(args);
  }
}
