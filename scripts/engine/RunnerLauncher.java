// Starts one real node in this JVM through a codelibs runner (org.codelibs.opensearch.runner.OpenSearchRunner
// or a runner with the same shape) and, unlike the runner's own main(), says why when it cannot.
//
// Usage: java -cp <runner classpath> RunnerLauncher.java <runner class> <runner arguments...>
// Run as a single-file source program (Java 11+), so nothing is compiled ahead of time.
import java.io.Closeable;
import java.lang.reflect.InvocationTargetException;
import java.util.Arrays;

public class RunnerLauncher {
    public static void main(String[] args) throws Exception {
        if (args.length < 1) {
            System.err.println("usage: RunnerLauncher <runner class> <runner arguments...>");
            System.exit(2);
        }
        Class<?> type = Class.forName(args[0]);
        Object runner = type.getConstructor().newInstance();
        // The runner moves to the next free port when the asked-for one is taken; fail instead, so the URL
        // printed by scripts/engine is always the one the node listens on.
        type.getMethod("setMaxHttpPort", int.class).invoke(runner, -1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                ((Closeable) runner).close();
            } catch (Exception e) {
                e.printStackTrace();
            }
        }));
        try {
            type.getMethod("build", String[].class).invoke(runner, (Object) Arrays.copyOfRange(args, 1, args.length));
        } catch (InvocationTargetException e) {
            System.err.println("engine failed to start:");
            e.getCause().printStackTrace();
            Runtime.getRuntime().halt(1);
        }
        while (!(Boolean) type.getMethod("isClosed").invoke(runner)) {
            Thread.sleep(1000);
        }
    }
}
