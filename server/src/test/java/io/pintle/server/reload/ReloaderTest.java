package io.pintle.server.reload;

import static org.assertj.core.api.Assertions.assertThat;

import io.pintle.server.acl.PolicyServerNetworks;
import io.pintle.server.config.ConfigLoader;
import io.pintle.server.config.ServerConfig;
import io.pintle.server.nodes.KeyHash;
import io.pintle.server.testing.Sandbox;
import io.pintle.server.testing.TestThreads;
import io.pintle.server.uploads.UploadKind;
import io.pintle.server.tls.SelfSigned;
import io.pintle.server.tls.ServerCredentials;
import io.pintle.server.tls.TlsUpdater;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The single writer, without any server: build, validate, publish; on failure keep the previous snapshot. */
class ReloaderTest {
    @TempDir
    Path dir;

    Sandbox sandbox;
    Path config;
    SnapshotHolder holder;
    RecordingTls tls;
    Reloader reloader;

    @RegisterExtension
    final TestThreads threads = new TestThreads();

    @BeforeEach
    void setUp() throws Exception {
        sandbox = Sandbox.create(dir, SelfSigned.KeyType.EC_P256, false);
        sandbox.addNode("node-a", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        config = sandbox.config("");
        ServerConfig loaded = ConfigLoader.load(config);
        holder = new SnapshotHolder(new SnapshotLoader(loaded, Clock.systemUTC()).load(1));
        tls = new RecordingTls();
        reloader = new Reloader(() -> ConfigLoader.load(config), holder, tls, Clock.systemUTC(), threads.workers());
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        reloader.stop();
    }

    @Test
    void changedInputsArePublishedAsTheNextGeneration() throws Exception {
        sandbox.addNode("node-b", SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
        ReloadOutcome outcome = reloader.reload("test").get();
        assertThat(outcome.result()).isEqualTo(ReloadOutcome.Result.APPLIED);
        assertThat(outcome.generation()).isEqualTo(2);
        assertThat(holder.current().generation()).isEqualTo(2);
        assertThat(holder.current().nodes().nodeCount()).isEqualTo(2);
        assertThat(tls.applied).as("same server credentials: TLS untouched").isEmpty();
        assertThat(reloader.history().applied()).isEqualTo(1);
    }

    @Test
    void unchangedInputsAreReusedNotParsedAgain() throws Exception {
        ServerSnapshot before = holder.current();
        ServerConfig loaded = ConfigLoader.load(config);
        ServerSnapshot next = new SnapshotLoader(loaded, Clock.systemUTC()).load(2, before);
        assertThat(next.credentials()).isSameAs(before.credentials());
        assertThat(next.nodesList()).isSameAs(before.nodesList());
        assertThat(next.certificates()).isEqualTo(before.certificates());
        assertThat(next.nodes().nodes()).containsExactlyInAnyOrderElementsOf(before.nodes().nodes());
        assertThat(next.sameInputs(before)).isTrue();
        assertThat(next.inputs().keySet()).containsExactlyElementsOf(before.inputs().keySet());
    }

    @Test
    void unchangedInputsKeepTheLiveSnapshot() throws Exception {
        ServerSnapshot before = holder.current();
        ReloadOutcome outcome = reloader.reload("test").get();
        assertThat(outcome.result()).isEqualTo(ReloadOutcome.Result.UNCHANGED);
        assertThat(holder.current()).isSameAs(before);
        assertThat(reloader.history().unchanged()).isEqualTo(1);
    }

    @Test
    void invalidInputIsRejectedAndThePreviousSnapshotStays() throws Exception {
        ServerSnapshot before = holder.current();
        sandbox.nodesListContent("{\"node-a\": {\"hostname\": \"a\"}}");
        ReloadOutcome outcome = reloader.reload("test").get();
        assertThat(outcome.result()).isEqualTo(ReloadOutcome.Result.FAILED);
        assertThat(outcome.error()).contains("nodeslist.json").contains("node 'node-a'").contains("policy-server");
        assertThat(holder.current()).isSameAs(before);
        assertThat(reloader.history().lastFailure()).isEqualTo(outcome);
        assertThat(reloader.history().failed()).isEqualTo(1);
    }

    @Test
    void passwordFilesAreInputsAndAreReusedWhenUnchanged() throws Exception {
        ServerSnapshot before = holder.current();
        Path users = sandbox.dir().resolve("server/htpasswd-webdav");
        assertThat(before.inputs()).containsKey(users);

        ServerSnapshot next = new SnapshotLoader(ConfigLoader.load(config), Clock.systemUTC()).load(2, before);

        assertThat(next.uploadUsers().webdav()).isSameAs(before.uploadUsers().webdav());
        assertThat(next.uploadUsers().initial()).isSameAs(before.uploadUsers().initial());
    }

    @Test
    void aMissingUploadDirectoryIsRejectedSayingWhatToDo() throws Exception {
        ServerSnapshot before = holder.current();
        Files.delete(sandbox.uploads(UploadKind.REPORTS));

        ReloadOutcome outcome = reloader.reload("test").get();

        assertThat(outcome.result()).isEqualTo(ReloadOutcome.Result.FAILED);
        assertThat(outcome.error()).contains(sandbox.uploads(UploadKind.REPORTS).toString())
                .contains("upload directory does not exist").contains("[uploads] enabled = false");
        assertThat(holder.current()).isSameAs(before);
    }

    @Test
    void unknownConfigurationKeyIsRejectedWhole() throws Exception {
        ServerSnapshot before = holder.current();
        Files.writeString(config, Files.readString(config) + "\n[paths]\ncolour = \"red\"\n");
        ReloadOutcome outcome = reloader.reload("test").get();
        assertThat(outcome.result()).isEqualTo(ReloadOutcome.Result.FAILED);
        assertThat(holder.current()).isSameAs(before);
    }

    @Test
    void newServerCredentialsAreValidatedThenApplied() throws Exception {
        SelfSigned.Identity rotated = SelfSigned.generate(SelfSigned.KeyType.EC_P256, "root");
        SelfSigned.writePrivateKey(sandbox.server().keyPath(), rotated.keyPair().getPrivate(), false);
        SelfSigned.writeCertificates(sandbox.server().certificatePath(), rotated.certificate());
        ReloadOutcome outcome = reloader.reload("test").get();
        assertThat(outcome.result()).isEqualTo(ReloadOutcome.Result.APPLIED);
        assertThat(tls.validated).hasSize(1);
        assertThat(tls.applied).hasSize(1);
        assertThat(tls.applied.get(0).chain().get(0)).isEqualTo(rotated.certificate());
    }

    @Test
    void credentialsTheTlsLayerRefusesLeaveEverythingAsItWas() throws Exception {
        ServerSnapshot before = holder.current();
        tls.refuse = true;
        SelfSigned.Identity rotated = SelfSigned.generate(SelfSigned.KeyType.EC_P256, "root");
        SelfSigned.writePrivateKey(sandbox.server().keyPath(), rotated.keyPair().getPrivate(), false);
        SelfSigned.writeCertificates(sandbox.server().certificatePath(), rotated.certificate());
        ReloadOutcome outcome = reloader.reload("test").get();
        assertThat(outcome.result()).isEqualTo(ReloadOutcome.Result.FAILED);
        assertThat(outcome.error()).contains("server TLS credentials refused");
        assertThat(tls.applied).isEmpty();
        assertThat(holder.current()).isSameAs(before);
    }

    @Test
    void concurrentTriggersAreSerialisedIntoConsecutiveGenerations() throws Exception {
        List<CompletableFuture<ReloadOutcome>> futures = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            sandbox.addNode("extra-" + i, SelfSigned.KeyType.EC_P256, Sandbox.Pinning.BOTH);
            futures.add(reloader.reload("trigger " + i));
        }
        List<Long> generations = new ArrayList<>();
        for (CompletableFuture<ReloadOutcome> future : futures) {
            ReloadOutcome outcome = future.get();
            if (outcome.result() == ReloadOutcome.Result.APPLIED) {
                generations.add(outcome.generation());
            }
        }
        assertThat(generations).isNotEmpty().isSorted().doesNotHaveDuplicates();
        assertThat(holder.current().generation()).isEqualTo(1 + generations.size());
        assertThat(holder.current().nodes().nodeCount()).isEqualTo(9);
    }

    @Test
    void listenersAreToldOfEachAttemptBeforeAndAfterInTheOrderTheyWereAdded() throws Exception {
        List<String> told = new CopyOnWriteArrayList<>();
        reloader.addListener(new Recorder("first", told));
        reloader.addListener(new Recorder("second", told));
        sandbox.nodesListContent("{");
        reloader.reload("test").get();
        assertThat(told).containsExactly("first attempted test", "second attempted test", "first finished failed",
                "second finished failed");
    }

    /** A listener that writes down what it is told. */
    private record Recorder(String name, List<String> told) implements ReloadListener {
        @Override
        public void attempted(String trigger) {
            told.add(name + " attempted " + trigger);
        }

        @Override
        public void finished(ReloadOutcome outcome) {
            told.add(name + " finished " + outcome.result().text());
        }
    }

    @Test
    void thePolicyServerNetworksFileIsAReloadInputAndAConfiguredMissingOneIsAnError() throws Exception {
        assertThat(holder.current().policyServerNetworks()).isEqualTo(PolicyServerNetworks.NONE);

        sandbox.policyServerNetworks("Require local\nRequire ip 192.0.2.1\n");
        Path file = sandbox.policyServerNetworksFile();
        sandbox.config("");
        assertThat(reloader.reload("test").get().result()).isEqualTo(ReloadOutcome.Result.APPLIED);
        assertThat(holder.current().inputs()).containsKey(file);
        assertThat(holder.current().policyServerNetworks().contains(InetAddress.getByName("192.0.2.1"))).isTrue();
        assertThat(holder.current().policyServerNetworks().contains(InetAddress.getByName("192.0.2.2"))).isFalse();

        Files.writeString(file, "Require ip 192.0.2.2\n");
        assertThat(reloader.reload("test").get().result()).isEqualTo(ReloadOutcome.Result.APPLIED);
        assertThat(holder.current().policyServerNetworks().contains(InetAddress.getByName("192.0.2.2"))).isTrue();

        Files.writeString(file, "Require host relay.example\n");
        ReloadOutcome invalid = reloader.reload("test").get();
        assertThat(invalid.result()).isEqualTo(ReloadOutcome.Result.FAILED);
        assertThat(invalid.error()).contains(file + ":1");

        Files.delete(file);
        ReloadOutcome missing = reloader.reload("test").get();
        assertThat(missing.result()).isEqualTo(ReloadOutcome.Result.FAILED);
        assertThat(missing.error()).contains(file + ": no such file");
        assertThat(holder.current().policyServerNetworks().contains(InetAddress.getByName("192.0.2.2"))).isTrue();
    }

    @Test
    void theDefaultPolicyServerNetworksFileMayBeAbsentAndIsWatchedUntilItAppears() throws Exception {
        Path file = dir.resolve("rudder-networks-policy-server-24.conf");
        ServerConfig loaded = ConfigLoader.load(config);
        ServerConfig.Networks networks = loaded.networks();
        // As ConfigLoader leaves the default path: not required.
        ServerConfig withDefault = new ServerConfig(loaded.source(), loaded.general(), loaded.tls(), loaded.nodes(),
                new ServerConfig.Networks(networks.allowedFile(), networks.allowed(), file, false), loaded.paths(),
                loaded.admin(), loaded.reload(), loaded.log(), loaded.limits(), loaded.upstream(),
                loaded.remoteRun(), loaded.uploads(), loaded.webapp(), loaded.cfengine(), loaded.delivery());

        ServerSnapshot absent = new SnapshotLoader(withDefault, Clock.systemUTC()).load(1);
        assertThat(absent.policyServerNetworks()).isEqualTo(PolicyServerNetworks.absent(file));
        assertThat(absent.inputs()).doesNotContainKey(file);
        assertThat(absent.watched()).contains(file);

        Files.writeString(file, "Require ip 192.0.2.1\n");
        ServerSnapshot present = new SnapshotLoader(withDefault, Clock.systemUTC()).load(2, absent);
        assertThat(present.policyServerNetworks().present()).isTrue();
        assertThat(present.policyServerNetworks().contains(InetAddress.getByName("192.0.2.1"))).isTrue();
        assertThat(present.inputs()).containsKey(file);
        assertThat(present.sameInputs(absent)).isFalse();
    }

    @Test
    void upstreamCertificateIsAnInputAndItsKeyIsThePinOfTheSnapshot() throws Exception {
        SelfSigned.Identity policyServer = SelfSigned.generate(SelfSigned.KeyType.EC_P256, "root");
        Path certificate = dir.resolve("policy_server.pem");
        SelfSigned.writeCertificates(certificate, policyServer.certificate());
        Files.writeString(config, Files.readString(config) + upstream(certificate));
        ReloadOutcome outcome = reloader.reload("test").get();
        assertThat(outcome.result()).isEqualTo(ReloadOutcome.Result.APPLIED);
        assertThat(holder.current().upstreamPin()).isEqualTo(KeyHash.sha256(policyServer.certificate().getPublicKey()));
        assertThat(holder.current().inputs()).containsKey(certificate);
        assertThat(SnapshotLoader.inputFiles(ConfigLoader.load(config))).contains(certificate);
    }

    @Test
    void changedUpstreamCertificateIsPublishedAndABrokenOneIsRejected() throws Exception {
        Path certificate = dir.resolve("policy_server.pem");
        SelfSigned.writeCertificates(certificate,
                SelfSigned.generate(SelfSigned.KeyType.EC_P256, "root").certificate());
        Files.writeString(config, Files.readString(config) + upstream(certificate));
        assertThat(reloader.reload("test").get().result()).isEqualTo(ReloadOutcome.Result.APPLIED);

        SelfSigned.Identity rotated = SelfSigned.generate(SelfSigned.KeyType.RSA_2048, "root");
        SelfSigned.writeCertificates(certificate, rotated.certificate());
        assertThat(reloader.reload("test").get().result()).isEqualTo(ReloadOutcome.Result.APPLIED);
        ServerSnapshot rotatedSnapshot = holder.current();
        assertThat(rotatedSnapshot.upstreamPin()).isEqualTo(KeyHash.sha256(rotated.certificate().getPublicKey()));

        Files.writeString(certificate,
                "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n");
        ReloadOutcome broken = reloader.reload("test").get();
        assertThat(broken.result()).isEqualTo(ReloadOutcome.Result.FAILED);
        assertThat(broken.error()).contains(certificate.toString()).contains("upstream.certificate");
        assertThat(holder.current()).isSameAs(rotatedSnapshot);

        Files.delete(certificate);
        ReloadOutcome missing = reloader.reload("test").get();
        assertThat(missing.result()).isEqualTo(ReloadOutcome.Result.FAILED);
        assertThat(missing.error()).contains(certificate.toString()).contains("no such file");
        assertThat(holder.current()).isSameAs(rotatedSnapshot);
        assertThat(reloader.history().failed()).isEqualTo(2);
    }

    @Test
    void upstreamKeyHashTakesPrecedenceAndTheCertificateIsNotRead() throws Exception {
        KeyHash pin = KeyHash.sha256(SelfSigned.keyPair(SelfSigned.KeyType.EC_P256).getPublic());
        Path absent = dir.resolve("absent.pem");
        Files.writeString(config, Files.readString(config) + upstream(absent) + "key_hash = \"" + pin + "\"\n");
        assertThat(reloader.reload("test").get().result()).isEqualTo(ReloadOutcome.Result.APPLIED);
        assertThat(holder.current().upstreamPin()).isEqualTo(pin);
        assertThat(holder.current().inputs()).doesNotContainKey(absent);
    }

    @Test
    void aServerWithoutPolicyServerHasNoUpstreamPinAndReadsNoUpstreamCertificate() {
        assertThat(holder.current().upstreamPin()).isNull();
        assertThat(holder.current().inputs().keySet()).noneMatch(file -> file.endsWith("policy_server.pem"));
    }

    private static String upstream(Path certificate) {
        return "\n[upstream]\nurl = \"https://127.0.0.1:1\"\ncertificate = \"" + certificate + "\"\nsync = false\n";
    }

    /** Records what the reloader asks of the TLS layer; can be told to refuse. */
    static final class RecordingTls implements TlsUpdater {
        final List<ServerCredentials> validated = new CopyOnWriteArrayList<>();
        final List<ServerCredentials> applied = new CopyOnWriteArrayList<>();
        volatile boolean refuse;

        @Override
        public void validate(ServerCredentials credentials) {
            validated.add(credentials);
            if (refuse) {
                throw new IllegalArgumentException("test refusal");
            }
        }

        @Override
        public void apply(ServerCredentials credentials) {
            applied.add(credentials);
        }
    }
}
