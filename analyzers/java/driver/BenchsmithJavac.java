import javax.tools.*;
import javax.lang.model.element.*;
import javax.lang.model.type.TypeMirror;
import com.sun.source.tree.*;
import com.sun.source.util.*;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;

/** benchsmith's javac driver: args[0] lists the files to compile (UTF-8, one per line), args[1..] are javac
 *  options.  Prints each diagnostic as a JSON object per line, a {"phase":"analyze"} line between parsing and
 *  attribution, and a final {"done":...} line.  Source and class paths are empty: nothing is looked up
 *  implicitly.  With -Dbenchsmith.refs=true it also prints, after attribution, each name of a file that javac
 *  resolved to a class, method or field declared in *another* file of the list (JDK and library symbols have no
 *  source here and are never printed): {"ref":KIND,...} with the name's UTF-16 offsets and its declaration's
 *  file and lines. */
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
            Iterable<? extends CompilationUnitTree> units = task.parse();
            out.print("{\"phase\":\"analyze\"}\n");
            task.analyze();
            ok = counts[0] == 0;
            if (Boolean.getBoolean("benchsmith.refs")) new Refs(task, out).print(units);
        } catch (Throwable t) {
            out.print("{\"crash\":" + q(t.toString()) + "}\n");
            out.flush();
            System.exit(3);
            return;
        }
        out.print("{\"done\":true,\"ok\":" + ok + ",\"errors\":" + counts[0] + ",\"others\":" + counts[1] + "}\n");
        out.flush();
    }

    /** The names javac resolved to a declaration in another file of the task. */
    static final class Refs extends TreePathScanner<Void, Void> {
        final Trees trees;
        final javax.lang.model.util.Types types;
        final SourcePositions sp;
        final PrintStream out;
        final Map<Element, String[]> decls = new HashMap<>();  // element -> {its file, its JSON fields}, or {}
        CompilationUnitTree cu;
        String file;

        Refs(JavacTask task, PrintStream out) {
            this.trees = Trees.instance(task);
            this.types = task.getTypes();
            this.sp = trees.getSourcePositions();
            this.out = out;
        }

        void print(Iterable<? extends CompilationUnitTree> units) {
            for (CompilationUnitTree u : units) {
                cu = u;
                file = u.getSourceFile().getName();
                scan(u, null);
            }
        }

        @Override public Void visitClass(ClassTree t, Void v) {
            if (t.getSimpleName().length() > 0) return super.visitClass(t, v);
            // an anonymous class's supertype is the `new` expression's own type tree, already seen as its class name
            scan(t.getModifiers(), v);
            return scan(t.getMembers(), v);
        }

        @Override public Void visitImport(ImportTree t, Void v) { return null; }
        @Override public Void visitPackage(PackageTree t, Void v) { return null; }

        @Override public Void visitIdentifier(IdentifierTree t, Void v) {
            emit(t, t.getName().toString(), null);
            return super.visitIdentifier(t, v);
        }

        @Override public Void visitMemberSelect(MemberSelectTree t, Void v) {
            emit(t, t.getIdentifier().toString(), t.getExpression());
            return super.visitMemberSelect(t, v);
        }

        @Override public Void visitMemberReference(MemberReferenceTree t, Void v) {
            emit(t, t.getName().toString(), t.getQualifierExpression());
            return super.visitMemberReference(t, v);
        }

        void emit(Tree t, String name, ExpressionTree qualifier) {
            if (name.equals("this") || name.equals("super") || name.equals("class") || name.equals("<init>")) return;
            Element e = trees.getElement(getCurrentPath());
            if (e == null) return;
            ElementKind k = e.getKind();
            boolean type = k.isClass() || k.isInterface();
            if (!type && k != ElementKind.METHOD && k != ElementKind.FIELD && k != ElementKind.ENUM_CONSTANT) return;
            String decl = decl(e);
            if (decl.isEmpty()) return;
            long end = sp.getEndPosition(cu, t);
            long start = t instanceof IdentifierTree ? sp.getStartPosition(cu, t) : -1;
            if (end < 0) return;  // a tree javac made itself (var's type, an implicit constructor call)
            String kind = type ? typeKind(t) : memberKind(e, qualifier);
            Element owner = type ? e : e.getEnclosingElement();
            out.print("{\"ref\":\"" + kind + "\",\"file\":" + q(file) + ",\"start\":" + start + ",\"end\":" + end
                + ",\"name\":" + q(name) + ",\"owner\":" + q(owner.getSimpleName().toString()) + decl + "}\n");
        }

        /** TYPE, or where the name stands: CONSTRUCTOR (new T), ATTRIBUTE (@T), HERITAGE (extends/implements T). */
        String typeKind(Tree leaf) {
            TreePath p = getCurrentPath().getParentPath();
            while (p != null && p.getLeaf() instanceof ParameterizedTypeTree
                   && ((ParameterizedTypeTree) p.getLeaf()).getType() == leaf) {
                leaf = p.getLeaf();
                p = p.getParentPath();
            }
            Tree parent = p == null ? null : p.getLeaf();
            if (parent instanceof NewClassTree && ((NewClassTree) parent).getIdentifier() == leaf) return "constructor";
            if (parent instanceof AnnotationTree && ((AnnotationTree) parent).getAnnotationType() == leaf) return "attribute";
            if (parent instanceof ClassTree) {
                ClassTree c = (ClassTree) parent;
                if (c.getExtendsClause() == leaf || c.getImplementsClause().contains(leaf)) return "heritage";
            }
            return "type";
        }

        /** INHERITED_MEMBER for a member reached unqualified or through this/super from a subclass; else MEMBER. */
        String memberKind(Element e, ExpressionTree qualifier) {
            if (qualifier != null) {
                Tree q = qualifier;
                String last = q instanceof IdentifierTree ? ((IdentifierTree) q).getName().toString()
                    : q instanceof MemberSelectTree ? ((MemberSelectTree) q).getIdentifier().toString() : "";
                if (!last.equals("this") && !last.equals("super")) return "member";
            }
            Element owner = e.getEnclosingElement();
            if (!(owner instanceof TypeElement)) return "member";
            TypeMirror ot = types.erasure(owner.asType());
            for (TreePath p = getCurrentPath(); p != null; p = p.getParentPath()) {
                if (p.getLeaf() instanceof ClassTree) {
                    Element c = trees.getElement(p);
                    if (c != null && types.isSubtype(types.erasure(c.asType()), ot)) return "inherited_member";
                }
            }
            return "member";  // a static import
        }

        /** ",\"dfile\":...,\"dline\":first,\"dend\":last" for a declaration in another file of the task, else "". */
        String decl(Element e) {
            String[] d = decls.get(e);
            if (d == null) {
                d = new String[0];
                TreePath p = trees.getPath(e);  // null for a class file's symbol (the JDK) and a missing one
                if (p != null) {
                    CompilationUnitTree u = p.getCompilationUnit();
                    long s = sp.getStartPosition(u, p.getLeaf()), en = sp.getEndPosition(u, p.getLeaf());
                    if (s >= 0) {
                        LineMap lm = u.getLineMap();
                        String f = u.getSourceFile().getName();
                        d = new String[] {f, ",\"dfile\":" + q(f) + ",\"dline\":" + lm.getLineNumber(s)
                            + ",\"dend\":" + lm.getLineNumber(Math.max(s, en - 1))};
                    }
                }
                decls.put(e, d);
            }
            return d.length == 0 || d[0].equals(file) ? "" : d[1];
        }
    }
}
