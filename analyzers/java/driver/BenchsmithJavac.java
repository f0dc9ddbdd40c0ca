import javax.tools.*;
import com.sun.source.util.JavacTask;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

/** benchsmith's javac driver: args[0] lists the files to compile (UTF-8, one per line), args[1..] are javac
 *  options.  Prints each diagnostic as a JSON object per line, a {"phase":"analyze"} line between parsing and
 *  attribution, and a final {"done":...} line.  Source and class paths are empty: nothing is looked up
 *  implicitly. */
public final class BenchsmithJavac {
    static String q(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20 || Character.isSurrogate(c)) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16), false, "UTF-8");
        List<String> files = new ArrayList<>(Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8));
        files.removeIf(String::isEmpty);
        List<String> options = new ArrayList<>(Arrays.asList(args).subList(1, args.length));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int[] counts = new int[2];
        DiagnosticListener<JavaFileObject> listener = d -> {
            JavaFileObject src = d.getSource();
            out.print("{\"kind\":" + q(d.getKind().name()) + ",\"code\":" + q(d.getCode())
                + ",\"file\":" + q(src == null ? null : src.getName())
                + ",\"pos\":" + d.getPosition() + ",\"start\":" + d.getStartPosition() + ",\"end\":" + d.getEndPosition()
                + ",\"line\":" + d.getLineNumber() + ",\"col\":" + d.getColumnNumber()
                + ",\"msg\":" + q(d.getMessage(Locale.ENGLISH)) + "}\n");
            counts[d.getKind() == Diagnostic.Kind.ERROR ? 0 : 1]++;
        };
        boolean ok;
        try (StandardJavaFileManager fm = javac.getStandardFileManager(listener, Locale.ENGLISH, StandardCharsets.UTF_8)) {
            fm.setLocation(StandardLocation.SOURCE_PATH, Collections.emptyList());
            fm.setLocation(StandardLocation.CLASS_PATH, Collections.emptyList());
            fm.setLocation(StandardLocation.ANNOTATION_PROCESSOR_PATH, Collections.emptyList());
            JavacTask task = (JavacTask) javac.getTask(null, fm, listener, options, null, fm.getJavaFileObjectsFromStrings(files));
            task.setLocale(Locale.ENGLISH);
            task.parse();
            out.print("{\"phase\":\"analyze\"}\n");
            task.analyze();
            ok = counts[0] == 0;
        } catch (Throwable t) {
            out.print("{\"crash\":" + q(t.toString()) + "}\n");
            out.flush();
            System.exit(3);
            return;
        }
        out.print("{\"done\":true,\"ok\":" + ok + ",\"errors\":" + counts[0] + ",\"others\":" + counts[1] + "}\n");
        out.flush();
    }
}
