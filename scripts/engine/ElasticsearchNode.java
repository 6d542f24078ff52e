// Starts one real Elasticsearch 9 node in this JVM from the artifacts Elastic publishes on Maven Central
// (the server, org.elasticsearch:elasticsearch, and its HTTP/transport module, transport-netty4), which is
// how Elastic's own integration tests start nodes. Elastic publishes no 9.x distribution to Maven Central
// and no runner, so the node is built here: org.elasticsearch.node.MockNode from the test framework is the
// server's Node with plugins taken from the classpath instead of a modules folder; given
// addMockHttpTransport = false it serves real HTTP through Netty4Plugin, and without the test framework's
// mock plugins nothing else in it is a mock. Node ids and seeds come from Randomness, which inside the test
// framework needs a randomized-testing context: the node therefore runs as the one test of
// RandomizedRunner, and stays up until the process is stopped.
//
// Usage: java -cp <classpath of scripts/engine/elasticsearch9/pom.xml> ElasticsearchNode.java <elasticsearch.yml>
// Run as a single-file source program (Java 21+), so nothing is compiled ahead of time.
import com.carrotsearch.randomizedtesting.RandomizedRunner;
import java.nio.file.Path;
import java.util.List;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.node.MockNode;
import org.elasticsearch.node.Node;
import org.elasticsearch.transport.netty4.Netty4Plugin;
import org.junit.Test;
import org.junit.runner.JUnitCore;
import org.junit.runner.RunWith;

public class ElasticsearchNode {
    static Path config;

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: ElasticsearchNode <elasticsearch.yml>");
            System.exit(2);
        }
        config = Path.of(args[0]);
        var result = JUnitCore.runClasses(Run.class);
        // Only reached when the node failed to start (or stopped): say why.
        result.getFailures().forEach(f -> System.err.println("engine failed to start:\n" + f.getTrace()));
        Runtime.getRuntime().halt(1);
    }

    @RunWith(RandomizedRunner.class)
    public static class Run {
        @Test
        public void node() throws Exception {
            Settings settings = Settings.builder()
                .loadFromPath(config)
                .put("http.type", "netty4")
                .put("transport.type", "netty4")
                .build();
            Node node = new MockNode(settings, List.of(Netty4Plugin.class), false, () -> {});
            node.start();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    node.close();
                } catch (Exception e) {
                    e.printStackTrace();
                }
            }));
            Thread.sleep(Long.MAX_VALUE);
        }
    }
}
