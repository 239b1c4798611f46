package io.gpuadmission.extender;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class NodeNameTableTest {
  private final NodeNameTable table = new NodeNameTable();

  private String name(String text) {
    var chars = ("[\"" + text + "\"]").toCharArray();
    return table.name(chars, 2, text.length());
  }

  @Test
  void givesTheSameStringForTheSameName() {
    var first = name("gpu-node-00001");

    assertThat(first).isEqualTo("gpu-node-00001");
    assertThat(name("gpu-node-00001")).isSameAs(first);
    assertThat(name("gpu-node-00002")).isEqualTo("gpu-node-00002").isNotSameAs(first);
  }

  @Test
  void tellsApartNamesWithTheSameHash() {
    assertThat("Aa".hashCode()).isEqualTo("BB".hashCode());

    var aa = name("Aa");
    var bb = name("BB");

    assertThat(aa).isEqualTo("Aa");
    assertThat(bb).isEqualTo("BB");
    assertThat(name("Aa")).isSameAs(aa);
    assertThat(name("BB")).isSameAs(bb);
    assertThat(name("")).isEmpty();
  }

  @Test
  void keepsEveryNameAsItGrowsUpToItsLimit() {
    var kept = new String[NodeNameTable.LIMIT];
    for (int i = 0; i < kept.length; i++) {
      kept[i] = name("node-" + i);
    }
    for (int i = 0; i < kept.length; i += 997) {
      assertThat(name("node-" + i)).isSameAs(kept[i]);
    }
    assertThat(table.size()).isEqualTo(NodeNameTable.LIMIT);

    var beyond = name("one-too-many");

    assertThat(beyond).isEqualTo("one-too-many");
    assertThat(name("one-too-many")).isEqualTo("one-too-many").isNotSameAs(beyond);
    assertThat(table.size()).isEqualTo(NodeNameTable.LIMIT);
  }
}
