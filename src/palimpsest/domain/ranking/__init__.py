"""Ranking: fusion and levers, BM25, query cues, near-duplicates and the token budget."""
