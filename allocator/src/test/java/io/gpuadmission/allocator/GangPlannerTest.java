package io.gpuadmission.allocator;

import static org.assertj.core.api.Assertions.assertThat;

import io.gpuadmission.allocator.GangPlanner.Result;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class GangPlannerTest {
  private final GangPlanner planner = new GangPlanner(new TopologyAwareStrategy());

  private static NodeGpus node(String name, LinkMatrix links, int... used) {
    var gpus = new ArrayList<GpuDevice>();
    for (int i = 0; i < links.size(); i++) {
      var busy = false;
      for (var u : used) {
        busy |= u == i;
      }
      gpus.add(new GpuDevice(i, "test", 16, busy ? 16 : 0, true));
    }
    return NodeGpus.withoutCpu(name, gpus, Optional.of(links));
  }

  /** A placement as node name and GPUs, to read the expectations below. */
  private record At(String node, List<Integer> gpus) {}

  private static At at(String node, int... gpus) {
    return new At(node, java.util.Arrays.stream(gpus).boxed().toList());
  }

  private List<At> plan(List<NodeGpus> nodes, int members, int gpusEach) {
    var result = planner.plan(nodes, members, gpusEach);
    assertThat(result).isInstanceOf(Result.Planned.class);
    return ((Result.Planned) result).placements().stream()
        .map(p -> new At(nodes.get(p.node()).name(), java.util.Arrays.stream(p.gpus()).boxed().toList()))
        .toList();
  }

  private static LinkMatrix nvSwitch8() {
    return LinkMatrix.nvSwitch(8, 12, new int[] {0, 0, 0, 0, 1, 1, 1, 1});
  }

  @Test
  void placesFourPairsOnOneIdleDgx1OnItsNvlinkPairs() {
    var result = plan(List.of(node("dgx-a", LinkMatrix.dgx1V100()), node("dgx-b", LinkMatrix.dgx1V100())), 4, 2);

    assertThat(result).containsExactly(at("dgx-a", 0, 3), at("dgx-a", 1, 2), at("dgx-a", 4, 7), at("dgx-a", 5, 6));
  }

  @Test
  void givesEachEightGpuMemberANodeOfItsOwn() {
    var result = plan(List.of(node("dgx-a", LinkMatrix.dgx1V100()), node("dgx-b", LinkMatrix.dgx1V100())), 2, 8);

    assertThat(result).containsExactly(at("dgx-a", 0, 1, 2, 3, 4, 5, 6, 7), at("dgx-b", 0, 1, 2, 3, 4, 5, 6, 7));
  }

  @Test
  void placesPairsOfAnNvSwitchNodeWithinItsNumaGroups() {
    var result = plan(List.of(node("hgx", nvSwitch8())), 4, 2);

    assertThat(result).containsExactly(at("hgx", 0, 1), at("hgx", 2, 3), at("hgx", 4, 5), at("hgx", 6, 7));
  }

  @Test
  void membersThatUseHostPortsGetOneNodeEachOrNoRoom() {
    var nodes = List.of(node("dgx-a", LinkMatrix.dgx1V100()), node("dgx-b", LinkMatrix.dgx1V100()), node("dgx-c", LinkMatrix.dgx1V100(), 0, 1, 2, 4));

    var result = planner.plan(nodes, 3, 2, 1);

    assertThat(((Result.Planned) result).placements().stream().map(p -> nodes.get(p.node()).name() + " " + java.util.Arrays.toString(p.gpus())))
        // Equal pairs everywhere (NV2): the fullest node first, keeping idle nodes whole for longer.
        .containsExactly("dgx-c [5, 6]", "dgx-a [0, 3]", "dgx-b [0, 3]");
    assertThat(planner.plan(nodes, 4, 2, 1)).isEqualTo(new Result.NoRoom(3));
  }

  @Test
  void aNodeGivesNoMoreGpusThanItIsAllowed() {
    var nodes = List.of(node("dgx-a", LinkMatrix.dgx1V100()), node("dgx-b", LinkMatrix.dgx1V100()));

    // dgx-a may give 5 GPUs (its allocatable count): two 2-GPU members, the other two go to dgx-b.
    var result = planner.plan(nodes, 4, 2, 4, n -> n.name().equals("dgx-a") ? 5 : Integer.MAX_VALUE);

    assertThat(((Result.Planned) result).placements().stream().map(p -> nodes.get(p.node()).name() + " " + java.util.Arrays.toString(p.gpus())))
        .containsExactly("dgx-b [0, 3]", "dgx-b [1, 2]", "dgx-b [4, 7]", "dgx-b [5, 6]");
    assertThat(planner.plan(nodes, 4, 2, 4, n -> 3)).isEqualTo(new Result.NoRoom(2));
  }

  @Test
  void usesTheFewestNodes() {
    var half = node("half-used", LinkMatrix.dgx1V100(), 4, 5, 6, 7);
    var idle = node("idle", LinkMatrix.dgx1V100());

    var result = plan(List.of(half, idle), 2, 4);

    assertThat(result).containsExactly(at("idle", 0, 1, 2, 3), at("idle", 4, 5, 6, 7));
  }

  @Test
  void prefersNvlinkOverPcieForTheLastMembers() {
    var pcie = node("pcie", LinkMatrix.pcieOnly(new int[] {0, 0, 0, 0, 1, 1, 1, 1}));
    var dgx = node("dgx", LinkMatrix.dgx1V100());

    assertThat(plan(List.of(pcie, dgx), 1, 2)).containsExactly(at("dgx", 0, 3));
  }

  @Test
  void sendsTheLastMembersToTheFullestNodeThatHoldsThemAsWell() {
    var idle = node("a-idle", nvSwitch8());
    var busy = node("b-busy", nvSwitch8(), 0, 1, 2, 3);

    assertThat(plan(List.of(idle, busy), 1, 2)).containsExactly(at("b-busy", 4, 5));
  }

  @Test
  void reservesNothingAndSaysHowManyFitWhenTheGangDoesNot() {
    var a = node("a", LinkMatrix.dgx1V100(), 0, 1, 2, 3, 4);
    var b = node("b", LinkMatrix.dgx1V100(), 0, 1, 2, 3, 4);

    assertThat(planner.plan(List.of(a, b), 3, 2)).isEqualTo(new Result.NoRoom(2));
  }
}
