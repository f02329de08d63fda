package io.pintle.server.access;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The CFEngine door's route table: the longest tree wins, 50_techniques and everything outside are no route. */
class CfengineRoutesTest {
    private static final List<CfengineRoutes.Tree> TREES = List.of(
            new CfengineRoutes.Tree("share", Path.of("/var/rudder/share"), Rule.NODE_TREE),
            new CfengineRoutes.Tree("shared-files", Path.of("/var/rudder/shared-files"), Rule.NODE_TREE),
            new CfengineRoutes.Tree("ncf-local", Path.of("/var/rudder/configuration-repository/ncf"), Rule.LIBRARY),
            new CfengineRoutes.Tree("shared-folder", Path.of("/var/rudder/configuration-repository/shared-files"),
                    Rule.LIBRARY),
            new CfengineRoutes.Tree("nested", Path.of("/var/rudder/share/n1/special"), Rule.LIBRARY));

    private static CfengineRoutes.Target route(String path) {
        return CfengineRoutes.route(Path.of(path), TREES);
    }

    @Test
    void findsTheTreeAndWhatIsBelowIt() {
        assertThat(route("/var/rudder/share/n1/rules/cfengine-community/promises.cf"))
                .isEqualTo(new CfengineRoutes.Target(TREES.get(0), Rule.NODE_TREE,
                        "n1/rules/cfengine-community/promises.cf"));
        assertThat(route("/var/rudder/share").below()).isEmpty();
        assertThat(route("/var/rudder/shared-files/n2/files/n1/f").tree().name()).isEqualTo("shared-files");
        assertThat(route("/var/rudder/configuration-repository/shared-files/a.txt").rule()).isEqualTo(Rule.LIBRARY);
        assertThat(route("/var/rudder/share/n1/special/x").tree().name()).as("the longest root").isEqualTo("nested");
    }

    @Test
    void fiftyTechniquesAndPathsOutsideEveryTreeAreNoRoute() {
        assertThat(route("/var/rudder/configuration-repository/ncf/50_techniques/t/1.0/t.cf").rule())
                .isEqualTo(Rule.NONE);
        assertThat(route("/var/rudder/configuration-repository/ncf/50_techniques").rule()).isEqualTo(Rule.NONE);
        assertThat(route("/var/rudder/configuration-repository/ncf/50_techniquesX").rule()).isEqualTo(Rule.LIBRARY);
        assertThat(route("/var/rudder/configuration-repository/ncf/30_generic_methods/a.cf").rule())
                .isEqualTo(Rule.LIBRARY);
        assertThat(route("/etc/passwd")).isEqualTo(new CfengineRoutes.Target(null, Rule.NONE, null));
        assertThat(route("/var/rudder/sharex/n1").rule()).as("a sibling with the same prefix").isEqualTo(Rule.NONE);
        assertThat(route("/var/rudder").rule()).isEqualTo(Rule.NONE);
    }
}
