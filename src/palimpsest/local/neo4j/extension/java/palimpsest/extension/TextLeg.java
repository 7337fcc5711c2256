package palimpsest.extension;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.neo4j.graphdb.Node;
import org.neo4j.graphdb.Relationship;
import org.neo4j.graphdb.Transaction;
import org.neo4j.internal.kernel.api.CursorFactory;
import org.neo4j.internal.kernel.api.EntityCursor;
import org.neo4j.internal.kernel.api.IndexQueryConstraints;
import org.neo4j.internal.kernel.api.IndexReadSession;
import org.neo4j.internal.kernel.api.NodeValueIndexCursor;
import org.neo4j.internal.kernel.api.PropertyCursor;
import org.neo4j.internal.kernel.api.PropertyIndexQuery;
import org.neo4j.internal.kernel.api.Read;
import org.neo4j.internal.kernel.api.RelationshipValueIndexCursor;
import org.neo4j.internal.schema.IndexDescriptor;
import org.neo4j.kernel.api.KernelTransaction;
import org.neo4j.procedure.Context;
import org.neo4j.procedure.Description;
import org.neo4j.procedure.Mode;
import org.neo4j.procedure.Name;
import org.neo4j.procedure.Procedure;
import org.neo4j.storageengine.api.PropertySelection;
import org.neo4j.values.storable.ArrayValue;
import org.neo4j.values.storable.NumberValue;
import org.neo4j.values.storable.TextValue;
import org.neo4j.values.storable.Value;

/**
 * The full-text leg's read inside the database: the rows of one scope that a Lucene query of
 * analyzed terms matches (the scope a required clause, re-checked on every row), scored by
 * scope-local BM25 with the weights the caller computed from the scope's statistics, and only the
 * best {@code top} returned, best first (ties by id). Reads run in the caller's transaction through
 * kernel cursors; nothing outside the scope key it is given is returned.
 */
public final class TextLeg {
    /** Bumped whenever a procedure's signature or answer changes; the server checks it at start. */
    public static final String VERSION = "1";

    @Context
    public KernelTransaction ktx;

    @Context
    public Transaction tx;

    /** One row of the pool: its id, its score, the entity for the caller's filters, and how many rows the query matched. */
    public static final class Row {
        public String id;
        public double score;
        public Node node;
        public Relationship relationship;
        public long matched;

        Row(String id, double score, Node node, Relationship relationship, long matched) {
            this.id = id;
            this.score = score;
            this.node = node;
            this.relationship = relationship;
            this.matched = matched;
        }
    }

    /** The extension's version. */
    public static final class Version {
        public String version;

        Version(String version) {
            this.version = version;
        }
    }

    private record Kind(String index, String idKey, boolean relationships) {}

    private record Scored(String id, double score, long ref) {}

    private static Kind kind(String name) {
        return switch (name == null ? "" : name) {
            case "memory" -> new Kind("memory_terms", "key", false);
            case "chunk" -> new Kind("chunk_terms", "id", false);
            case "fact" -> new Kind("fact_terms", "id", true);
            default -> throw new IllegalArgumentException("kind must be memory, chunk or fact");
        };
    }

    @Procedure(name = "palimpsest.version", mode = Mode.READ)
    @Description("The Palimpsest extension's version.")
    public Stream<Version> version() {
        return Stream.of(new Version(VERSION));
    }

    @Procedure(name = "palimpsest.textLeg", mode = Mode.READ)
    @Description("The best `top` rows of one scope holding a set of query terms, by scope-local BM25.")
    public Stream<Row> textLeg(
            @Name("kind") String kindName,
            @Name("scopeKey") String scopeKey,
            @Name("sets") List<List<String>> sets,
            @Name("unless") List<String> unless,
            @Name("terms") List<String> terms,
            @Name("weights") List<Double> weights,
            @Name("k1") double k1,
            @Name("b") double b,
            @Name("avgLength") double avgLength,
            @Name("top") long top)
            throws Exception {
        Kind kind = kind(kindName);
        String query = Bm25.lucene(scopeKey, sets, unless);
        if (terms == null || weights == null || terms.size() != weights.size()) {
            throw new IllegalArgumentException("terms and weights must be lists of one length");
        }
        if (top < 1 || !(avgLength > 0.0)) {
            throw new IllegalArgumentException("top must be positive, avgLength above 0");
        }
        String[] termArray = terms.toArray(new String[0]);
        double[] weightArray = new double[weights.size()];
        for (int i = 0; i < weightArray.length; i++) {
            weightArray[i] = weights.get(i);
        }
        Comparator<Scored> worstFirst = (x, y) -> {
            int byScore = Double.compare(x.score, y.score);
            return byScore != 0 ? byScore : Bm25.compareIds(y.id, x.id);
        };
        PriorityQueue<Scored> best = new PriorityQueue<>(worstFirst);
        long matched = 0;

        Read read = ktx.dataRead();
        CursorFactory cursors = ktx.cursors();
        IndexDescriptor index = ktx.schemaRead().indexGetForName(kind.index);
        IndexReadSession session = read.indexReadSession(index);
        int scopeToken = ktx.tokenRead().propertyKey("scope_key");
        int idToken = ktx.tokenRead().propertyKey(kind.idKey);
        int ftToken = ktx.tokenRead().propertyKey("ft");
        int tfToken = ktx.tokenRead().propertyKey("ft_tf");
        int lenToken = ktx.tokenRead().propertyKey("ft_len");
        if (scopeToken < 0 || idToken < 0) {
            return Stream.empty();  // no row has ever had a scope or an id: none can match
        }
        // A key no row has had yet (a fresh database) has no token: it is not asked for.
        PropertySelection selection = PropertySelection.selection(
                IntStream.of(scopeToken, idToken, ftToken, tfToken, lenToken).filter(t -> t >= 0).toArray());
        PropertyIndexQuery predicate = PropertyIndexQuery.fulltextSearch(query);
        try (PropertyCursor properties =
                cursors.allocatePropertyCursor(ktx.cursorContext(), ktx.memoryTracker())) {
            Fields fields = new Fields(scopeToken, idToken, ftToken, tfToken, lenToken);
            if (kind.relationships) {
                try (RelationshipValueIndexCursor found = cursors.allocateRelationshipValueIndexCursor(
                        ktx.cursorContext(), ktx.memoryTracker())) {
                    read.relationshipIndexSeek(ktx.queryContext(), session, found,
                            IndexQueryConstraints.unconstrained(), predicate);
                    while (found.next()) {
                        if (!found.readFromStore()) {
                            continue;
                        }
                        matched += keep(found, found.relationshipReference(), properties, selection, fields,
                                scopeKey, termArray, weightArray, k1, b, avgLength, best, top);
                    }
                }
            } else {
                try (NodeValueIndexCursor found = cursors.allocateNodeValueIndexCursor(
                        ktx.cursorContext(), ktx.memoryTracker())) {
                    read.nodeIndexSeek(ktx.queryContext(), session, found,
                            IndexQueryConstraints.unconstrained(), predicate);
                    while (found.next()) {
                        if (!found.readFromStore()) {
                            continue;
                        }
                        matched += keep(found, found.nodeReference(), properties, selection, fields,
                                scopeKey, termArray, weightArray, k1, b, avgLength, best, top);
                    }
                }
            }
        }
        List<Scored> ranked = new ArrayList<>(best);
        ranked.sort(worstFirst.reversed());
        List<Row> rows = new ArrayList<>(ranked.size());
        for (Scored s : ranked) {
            Node node = kind.relationships ? null : tx.getNodeById(s.ref);
            Relationship rel = kind.relationships ? tx.getRelationshipById(s.ref) : null;
            rows.add(new Row(s.id, s.score, node, rel, matched));
        }
        return rows.stream();
    }

    private record Fields(int scope, int id, int ft, int tf, int len) {}

    /** Scores one matched row of the scope into {@code best} (1), or skips a row of another scope (0). */
    private static int keep(
            EntityCursor entity, long ref, PropertyCursor properties, PropertySelection selection,
            Fields fields, String scopeKey, String[] terms, double[] weights, double k1, double b,
            double avgLength, PriorityQueue<Scored> best, long top) {
        String scope = null;
        String id = null;
        String ft = "";
        long[] tf = null; // a row without ft_tf scores 0, as in Python
        long length = 0;
        entity.properties(properties, selection);
        while (properties.next()) {
            int key = properties.propertyKey();
            Value value = properties.propertyValue();
            if (key == fields.scope && value instanceof TextValue text) {
                scope = text.stringValue();
            } else if (key == fields.id && value instanceof TextValue text) {
                id = text.stringValue();
            } else if (key == fields.ft && value instanceof TextValue text) {
                ft = text.stringValue();
            } else if (key == fields.tf && value instanceof ArrayValue array) {
                tf = new long[(int) array.actualSize()];
                for (int i = 0; i < tf.length; i++) {
                    tf[i] = ((NumberValue) array.value(i)).longValue();
                }
            } else if (key == fields.len && value instanceof NumberValue number) {
                length = number.longValue();
            }
        }
        if (!scopeKey.equals(scope) || id == null) {
            return 0;  // the scope is re-checked on the row itself, not trusted to the index
        }
        double score = Bm25.score(ft, tf, length, terms, weights, k1, b, avgLength);
        Scored row = new Scored(id, score, ref);
        if (best.size() < top) {
            best.add(row);
        } else {
            Scored worst = best.peek();
            if (score > worst.score || (score == worst.score && Bm25.compareIds(id, worst.id) < 0)) {
                best.poll();
                best.add(row);
            }
        }
        return 1;
    }
}
