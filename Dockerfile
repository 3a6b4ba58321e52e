# Aluette Online server image. The install steps are the ones CI runs (scripts/test.sh).
FROM python:3.11-slim

WORKDIR /app
COPY pyproject.toml README.md ./
COPY protocol ./protocol
COPY server ./server
COPY client_cli ./client_cli
RUN python -m pip install --quiet --upgrade pip && python -m pip install --quiet .

ENV ALUETTE_HOST=0.0.0.0 \
    ALUETTE_PORT=8765 \
    ALUETTE_DATA_DIR=/data
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=3s --retries=3 \
  CMD python -c "import urllib.request,sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8765/healthz', timeout=2).status != 200)"
CMD ["aluette-server"]
