package palimpsest.extension;

import java.util.List;
import java.util.regex.Pattern;

/**
 * The pure parts of the text leg: the Lucene query with the scope as a required clause, scope-local
 * BM25 in the exact operation order of Python's {@code fulltext.Scorer.score}, and the pool's order
 * (score descending, then id by code point, as Python compares strings).
 */
public final class Bm25 {
    // The caller refuses bad input first (Python's fulltext._check, stricter); these keep the
    // Lucene query well formed whoever calls. A term is quoted, so only a quote, a backslash or
    // a space could change the query: Java's and Python's ideas of a word differ at the edges
    // (superscript digits are words to Python, not to Java's \w), so no more is asked here.
    private static final Pattern SCOPE_KEY = Pattern.compile("[0-9a-f]{8,64}");
    private static final Pattern TERM = Pattern.compile("[^\\s\"\\\\]+");

    private Bm25() {}

    /** Rows of the scope holding every term of one of {@code sets}, and not every one of {@code unless}. */
    public static String lucene(String scopeKey, List<List<String>> sets, List<String> unless) {
        if (scopeKey == null || !SCOPE_KEY.matcher(scopeKey).matches()) {
            throw new IllegalArgumentException("scope keys are hex");
        }
        if (sets == null || sets.isEmpty()) {
            throw new IllegalArgumentException("terms must be analyzed words");
        }
        StringBuilder groups = new StringBuilder();
        for (List<String> set : sets) {
            if (groups.length() > 0) {
                groups.append(" OR ");
            }
            groups.append(allOf(set));
        }
        String query = "scope_key:\"" + scopeKey + "\" AND (" + groups + ")";
        return unless == null || unless.isEmpty() ? query : query + " AND NOT " + allOf(unless);
    }

    private static String allOf(List<String> terms) {
        if (terms == null || terms.isEmpty()) {
            throw new IllegalArgumentException("terms must be analyzed words");
        }
        StringBuilder out = new StringBuilder("(");
        for (String term : terms) {
            if (term == null || !TERM.matcher(term).matches()) {
                throw new IllegalArgumentException("terms must be analyzed words");
            }
            if (out.length() > 1) {
                out.append(" AND ");
            }
            out.append("ft:\"").append(term).append('"');
        }
        return out.append(')').toString();
    }

    /**
     * A row's score: for each query term in the caller's order, {@code weight * n * (k1 + 1) / (n +
     * norm)}, with {@code norm = k1 * (1 - b + b * length / avgLength)}, summed from 0.0. Doubles in
     * Python's order, so the bits are Python's.
     */
    public static double score(
            String ft, long[] tf, long length, String[] terms, double[] weights, double k1, double b,
            double avgLength) {
        if (ft == null || ft.isEmpty() || tf == null) {
            return 0.0;
        }
        String padded = " " + ft + " ";
        double norm = k1 * (1.0 - b + b * (double) length / avgLength);
        double k1p = k1 + 1.0;
        double total = 0.0;
        for (int i = 0; i < terms.length; i++) {
            int at = padded.indexOf(" " + terms[i] + " ");
            if (at >= 0) {
                long n = tf[spacesBefore(padded, at)];
                if (n > 0) {
                    total += weights[i] * (double) n * k1p / ((double) n + norm);
                }
            }
        }
        return total;
    }

    private static int spacesBefore(String s, int end) {
        int count = 0;
        for (int i = 0; i < end; i++) {
            if (s.charAt(i) == ' ') {
                count++;
            }
        }
        return count;
    }

    /** Python's string order (by code point), not Java's (by UTF-16 unit). */
    public static int compareIds(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Boolean.compare(i < a.length(), j < b.length());
    }
}
