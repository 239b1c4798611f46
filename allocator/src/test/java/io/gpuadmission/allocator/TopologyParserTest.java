package io.gpuadmission.allocator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TopologyParserTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "dgx1-v100-sxm2-8gpu-hybrid-cube-mesh.txt, 8, 0, 3, NV2",
    "dgx1-v100-sxm2-8gpu-hybrid-cube-mesh.txt, 8, 0, 5, SYS",
    "dgx2-v100-16gpu-nvswitch-partial.txt, 16, 14, 15, NV6",
    "dgx-a100-8gpu-nvswitch-partial.txt, 8, 6, 7, NV12",
    "hgx-h100-8gpu-nvswitch-partial.txt, 8, 3, 7, NV18",
    "gb200-nvl72-compute-tray-4gpu.txt, 4, 1, 2, NV18",
    "pcie-8gpu-rtx4090-all-sys.txt, 8, 0, 7, SYS",
    "pcie-5gpu-phb-node-sys.txt, 5, 1, 2, PHB",
    "pcie-5gpu-phb-node-sys.txt, 5, 2, 3, NODE",
    "pcie-8gpu-nvlink-bridge-pairs.txt, 8, 6, 7, NV12",
    "synthetic-pcie-8gpu-pix-pxb.txt, 8, 0, 2, PXB",
    "synthetic-pcie-8gpu-pix-pxb.txt, 8, 4, 5, PIX"
  })
  void readsEveryDataFile(String file, int gpus, int i, int j, String link) throws Exception {
    var matrix = TopologyParser.parse(Files.readString(Path.of("src/test/resources/topologies", file)), file.contains("partial"));

    assertThat(matrix.size()).isEqualTo(gpus);
    assertThat(matrix.link(i, j)).hasToString(link);
    assertThat(matrix.link(j, i)).isEqualTo(matrix.link(i, j));
  }

  @Test
  void readsNumaGroupsFromAffinityColumns() throws Exception {
    var h100 = TopologyParser.parse(Files.readString(Path.of("src/test/resources/topologies/hgx-h100-8gpu-nvswitch-partial.txt")), true);

    assertThat(new int[] {h100.numa(0), h100.numa(2), h100.numa(3), h100.numa(4), h100.numa(5), h100.numa(6)})
        .containsExactly(0, 0, 1, 2, 2, -1);
    assertThat(h100.score(0, 1)).isEqualTo(1805);
    assertThat(h100.score(0, 3)).isEqualTo(1800);
  }

  @Test
  void refusesAsymmetricMatrix() {
    var text = "\tGPU0\tGPU1\tGPU2\nGPU0\t X \tNV2\tSYS\nGPU1\tNV2\t X \tSYS\nGPU2\tPHB\tSYS\t X \n";

    assertThatThrownBy(() -> TopologyParser.parse(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("asymmetric link matrix: GPU0->GPU2 is SYS but GPU2->GPU0 is PHB");
  }

  @Test
  void refusesUnknownLinkType() {
    assertThatThrownBy(() -> TopologyParser.parse("\tGPU0\tGPU1\nGPU0\t X \tNVX\nGPU1\tNVX\t X \n"))
        .hasMessage("GPU0 to GPU1 is \"NVX\": not a link type");
  }

  @Test
  void refusesMissingRowsUnlessCompletionIsAsked() {
    var text = "\tGPU0\tGPU1\tGPU2\nGPU0\t X \tNV6\tNV6\n";

    assertThatThrownBy(() -> TopologyParser.parse(text)).hasMessage("the matrix has 1 GPU rows for 3 GPU columns");
    assertThat(TopologyParser.parse(text, true).link(1, 2)).hasToString("NV6");
  }

  @Test
  void refusesCompletionWhenShownLinksDiffer() {
    var text = "\tGPU0\tGPU1\tGPU2\nGPU0\t X \tNV6\tSYS\n";

    assertThatThrownBy(() -> TopologyParser.parse(text, true))
        .hasMessage("rows are missing and the shown links differ (NV6, SYS): cannot complete");
  }

  @Test
  void refusesDiagonalOtherThanX() {
    assertThatThrownBy(() -> TopologyParser.parse("\tGPU0\tGPU1\nGPU0\tSYS\tSYS\nGPU1\tSYS\t X \n"))
        .hasMessage("GPU0 to itself is \"SYS\", expected X");
  }
}
