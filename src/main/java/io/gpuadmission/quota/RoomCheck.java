package io.gpuadmission.quota;

import java.util.Set;

/**
 * The placement's answer, which quota cannot know (it does not see GPUs): whether the pending pod
 * fits {@code node} once the pods of these uids are gone from it (uids of other nodes' pods may be
 * among them; they do not change this node).
 */
@FunctionalInterface
public interface RoomCheck {
  boolean fitsAfterRemoving(String node, Set<String> uids);
}
