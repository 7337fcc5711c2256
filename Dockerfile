# The API image for docker-compose.yml; Neo4j runs from the official image beside it.
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir .
ENV PALIMPSEST_HOME=/data PALIMPSEST_NEO4J_MANAGED=false
EXPOSE 8080
CMD ["palimpsest", "serve", "--host", "0.0.0.0"]
