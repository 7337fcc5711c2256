"""Operations per plane: scope resolution first, then statements from ``cypher/``."""
